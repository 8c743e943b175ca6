package io.spindle.core.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class EngineSettingsTest {

  @Test
  void defaultsAndOverridesFromConfiguration() {
    assertThat(EngineSettings.fromConfiguration(Map.of()).migReconfigureMillis()).isEqualTo(30_000);
    EngineSettings s = EngineSettings.fromConfiguration(Map.of(
        EngineSettings.MIG_RECONFIGURE_SECONDS, "45", EngineSettings.MAX_MIG_RECONFIGURATIONS_PER_CYCLE, "4"));
    assertThat(s.migReconfigureMillis()).isEqualTo(45_000);
    assertThat(s.maxMigReconfigurationsPerCycle()).isEqualTo(4);
  }

  @Test
  void badValuesNameTheKey() {
    assertThatThrownBy(() -> EngineSettings.fromConfiguration(Map.of(EngineSettings.MIG_RECONFIGURE_SECONDS, "soon")))
        .hasMessageContaining(EngineSettings.MIG_RECONFIGURE_SECONDS).hasMessageContaining("not a whole number");
    assertThatThrownBy(() -> EngineSettings.fromConfiguration(
        Map.of(EngineSettings.MAX_MIG_RECONFIGURATIONS_PER_CYCLE, "-1")))
        .hasMessageContaining(EngineSettings.MAX_MIG_RECONFIGURATIONS_PER_CYCLE).hasMessageContaining("outside");
  }
}
