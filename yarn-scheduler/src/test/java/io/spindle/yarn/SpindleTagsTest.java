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

  @Test
  void elasticTagsMakeTheGangElasticInItsPlacement() {
    SpindleTags tags = SpindleTags.parse(List.of("spindle.gang.size=8", "spindle.gang.min=2", "spindle.gang.step=2"));
    assertThat(tags.elastic()).isTrue();
    assertThat(tags.placement(true).elasticity()).isEqualTo(io.spindle.core.engine.Elasticity.of(2, 2));
    assertThat(tags.placement(false).elastic()).as("asks beside the gang are not elastic").isFalse();
    assertThat(SpindleTags.parse(List.of("spindle.gang=executors", "spindle.gang.min=3")).placement(true)
        .elasticity().min()).isEqualTo(3);
  }

  @Test
  void badElasticTagsAreRefusedWithTheTagAndItsValue() {
    assertThatThrownBy(() -> SpindleTags.parse(List.of("spindle.gang.size=4", "spindle.gang.min=9")))
        .hasMessageContaining("'spindle.gang.min=9'").hasMessageContaining("above the gang's size");
    assertThatThrownBy(() -> SpindleTags.parse(List.of("spindle.gang.size=4", "spindle.gang.min=0")))
        .hasMessageContaining("'spindle.gang.min=0'").hasMessageContaining("above 0");
    assertThatThrownBy(() -> SpindleTags.parse(List.of("spindle.gang.size=4", "spindle.gang.min=-2")))
        .hasMessageContaining("'spindle.gang.min=-2'");
    assertThatThrownBy(() -> SpindleTags.parse(List.of("spindle.gang.size=8", "spindle.gang.min=2",
        "spindle.gang.step=4"))).hasMessageContaining("'spindle.gang.step=4'").hasMessageContaining("does not divide");
    assertThatThrownBy(() -> SpindleTags.parse(List.of("spindle.gang.min=2")))
        .hasMessageContaining("'spindle.gang.min=2'").hasMessageContaining("is for gangs");
    assertThatThrownBy(() -> SpindleTags.parse(List.of("spindle.gang.size=8", "spindle.gang.step=2")))
        .hasMessageContaining("'spindle.gang.step=2'").hasMessageContaining("spindle.gang.min");
  }
}
