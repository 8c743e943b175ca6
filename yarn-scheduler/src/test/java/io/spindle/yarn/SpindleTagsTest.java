package io.spindle.yarn;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Gang and topology wishes from application tags, as Spark's {@code spark.yarn.tags} sets them. */
class SpindleTagsTest {

  @Test
  void gangExecutorsDeclaresAGangWithoutAFixedSize() {
    SpindleTags tags = SpindleTags.parse(List.of("spindle.gang=executors", "spindle.topology.preferred=rack",
        "nightly"));
    assertThat(tags.gang()).isTrue();
    assertThat(tags.gangOfFirstRequest()).isTrue();
    assertThat(tags.gangSize()).isZero();
    assertThat(tags.placement(true).gang()).isTrue();
    assertThat(tags.placement(true).topologyLevel()).isEqualTo("rack");
  }

  @Test
  void yarnLowerCasesTagsAndSoDoesSpindle() {
    assertThat(SpindleTags.parse(List.of("Spindle.Gang=Executors")).gangOfFirstRequest()).isTrue();
  }

  @Test
  void aFixedSizeStillWorksAndNoTagIsNoGang() {
    assertThat(SpindleTags.parse(List.of("spindle.gang.size=4")).gangSize()).isEqualTo(4);
    assertThat(SpindleTags.parse(List.of("spindle.gang.size=4")).gang()).isTrue();
    assertThat(SpindleTags.parse(List.of()).gang()).isFalse();
  }

  @Test
  void badGangTagsAreRefusedWithTheReason() {
    assertThatThrownBy(() -> SpindleTags.parse(List.of("spindle.gang=workers")))
        .hasMessageContaining("spindle.gang=executors");
    assertThatThrownBy(() -> SpindleTags.parse(List.of("spindle.gang=executors", "spindle.gang.size=2")))
        .hasMessageContaining("give one");
  }
}
