package io.spindle.core.placement;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class MigDemandMixTest {

  @Test
  void keepsTheLastWindowOfInstancesAskedFor() {
    MigDemandMix mix = new MigDemandMix(10);
    mix.record("1g", 4);
    mix.record("3g", 4);
    assertThat(mix.instancesByProfile()).isEqualTo(Map.of("1g", 4L, "3g", 4L));
    mix.record("7g", 5); // 13 > 10: the three oldest (1g) fall out
    assertThat(mix.instancesByProfile()).isEqualTo(Map.of("1g", 1L, "3g", 4L, "7g", 5L));
    mix.record("7g", 20);
    assertThat(mix.instancesByProfile()).isEqualTo(Map.of("7g", 10L));
    mix.record("1g", 0);
    assertThat(mix.instancesByProfile()).isEqualTo(Map.of("7g", 10L));
  }
}
