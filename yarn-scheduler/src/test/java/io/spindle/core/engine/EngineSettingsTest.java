package io.spindle.core.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spindle.core.preemption.PreemptionSettings;
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

  @Test
  void shareCandidatesDefaultToEightAndAreBounded() {
    assertThat(EngineSettings.fromConfiguration(Map.of()).shareCandidates()).isEqualTo(8);
    assertThat(EngineSettings.fromConfiguration(Map.of(EngineSettings.SHARE_CANDIDATES, "32")).shareCandidates())
        .isEqualTo(32);
    assertThat(EngineSettings.defaults().withShareCandidates(4).withPreemption(PreemptionSettings.defaults())
        .withStrictQueueOrder(true).shareCandidates()).as("kept by every with-er").isEqualTo(4);
    assertThatThrownBy(() -> EngineSettings.fromConfiguration(Map.of(EngineSettings.SHARE_CANDIDATES, "0")))
        .hasMessageContaining(EngineSettings.SHARE_CANDIDATES).hasMessageContaining("outside");
  }

  @Test
  void preemptionIsOffByDefaultAndReadFromItsKeys() {
    PreemptionSettings d = EngineSettings.fromConfiguration(Map.of()).preemption();
    assertThat(d).isEqualTo(PreemptionSettings.defaults());
    assertThat(d.enabled()).isFalse();
    assertThat(d.starvationMillis()).isEqualTo(60_000);
    assertThat(d.checkpointGraceMillis()).isEqualTo(120_000);
    assertThat(d.maxExtensions()).isEqualTo(1);
    assertThat(d.maxExtensionMillis()).isEqualTo(300_000);
    assertThat(d.maxVictimsPerCycle()).isEqualTo(16);

    PreemptionSettings p = EngineSettings.fromConfiguration(Map.of(EngineSettings.PREEMPTION_ENABLED, "true",
        EngineSettings.PREEMPTION_STARVATION_SECONDS, "30", EngineSettings.PREEMPTION_CHECKPOINT_GRACE_SECONDS, "600",
        EngineSettings.PREEMPTION_MAX_EXTENSIONS, "0", EngineSettings.PREEMPTION_MAX_EXTENSION_SECONDS, "60",
        EngineSettings.PREEMPTION_MAX_VICTIMS_PER_CYCLE, "4")).preemption();
    assertThat(p).isEqualTo(new PreemptionSettings(true, 30_000, 600_000, 0, 60_000, 4));
    assertThat(EngineSettings.defaults().withStrictQueueOrder(true).withPreemption(p).withReservations(1, 1)
        .preemption()).as("kept by every with-er").isEqualTo(p);
  }

  @Test
  void badPreemptionValuesNameTheKey() {
    assertThatThrownBy(() -> EngineSettings.fromConfiguration(Map.of(EngineSettings.PREEMPTION_ENABLED, "yes")))
        .hasMessageContaining(EngineSettings.PREEMPTION_ENABLED);
    assertThatThrownBy(() -> EngineSettings.fromConfiguration(
        Map.of(EngineSettings.PREEMPTION_MAX_VICTIMS_PER_CYCLE, "0")))
        .hasMessageContaining(EngineSettings.PREEMPTION_MAX_VICTIMS_PER_CYCLE).hasMessageContaining("outside");
  }
}
