package io.spindle.core.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spindle.core.model.GpuHealth.State;
import io.spindle.core.model.HealthEvidence.Kind;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The classification table of {@link GpuHealthPolicy}, row by row, and how evidence combines. */
class GpuHealthClassificationTest {

  private static final GpuHealthPolicy POLICY = GpuHealthPolicy.DEFAULT;

  @ParameterizedTest(name = "{0}={1} is {2}")
  @CsvSource({
      "XID, 79, FAILED",
      "XID, 74, FAILED",
      "XID, 48, FAILED",
      "XID, 64, FAILED",
      "XID, 94, FAILED",
      "XID, 95, FAILED",
      "XID, 13, DEGRADED",
      "XID, 31, DEGRADED",
      "XID, 43, DEGRADED",
      "XID, 63, DEGRADED",
      "XID, 4294967296, DEGRADED",
      "ECC_UNCORRECTABLE_VOLATILE, 1, FAILED",
      "ECC_UNCORRECTABLE_VOLATILE, 0, HEALTHY",
      "ECC_UNCORRECTABLE_AGGREGATE, 1, DEGRADED",
      "ECC_UNCORRECTABLE_AGGREGATE, 0, HEALTHY",
      "RETIRED_PAGES_PENDING, 1, DEGRADED",
      "ROW_REMAP_PENDING, 1, DEGRADED",
      "ROW_REMAP_FAILURE, 1, FAILED",
      "NVLINK_DOWN, 2, DEGRADED",
      "MISSING, 1, FAILED",
      "THERMAL_SLOWDOWN, 1, DEGRADED",
      "POWER_SLOWDOWN, 1, DEGRADED",
      "DCGM, 1, DEGRADED",
      "DCGM, 2, FAILED",
      "DCGM, 0, HEALTHY",
  })
  void eachKindOfEvidenceHasOneState(Kind kind, long value, State expected) {
    assertThat(POLICY.classify(new HealthEvidence(kind, value, "x"))).isEqualTo(expected);
  }

  @Test
  void everyKindIsClassified() {
    for (Kind kind : Kind.values()) {
      assertThat(POLICY.classify(new HealthEvidence(kind, 1, ""))).as(kind.name()).isNotNull();
    }
  }

  @Test
  void noEvidenceIsHealthy() {
    assertThat(POLICY.assess(List.of())).isEqualTo(GpuHealth.HEALTHY);
    assertThat(GpuHealth.HEALTHY.healthy()).isTrue();
  }

  @Test
  void theWorstEvidenceDecidesAndAllEvidenceIsKept() {
    HealthEvidence slow = new HealthEvidence(Kind.THERMAL_SLOWDOWN, 1, "hardware thermal slowdown active");
    HealthEvidence gone = new HealthEvidence(Kind.XID, 79, "Xid 79: GPU has fallen off the bus");
    HealthEvidence appFault = new HealthEvidence(Kind.XID, 13, "Xid 13: Graphics SM Warp Exception");

    GpuHealth health = POLICY.assess(List.of(slow, gone, appFault));

    assertThat(health.state()).isEqualTo(State.FAILED);
    assertThat(health.evidence()).containsExactly(slow, gone, appFault);
    assertThat(health.evidence(Kind.XID)).containsExactly(gone, appFault);
    assertThat(POLICY.assess(List.of(slow, appFault)).state()).isEqualTo(State.DEGRADED);
  }

  @Test
  void evidenceThatCallsForNothingIsStillKept() {
    HealthEvidence zero = new HealthEvidence(Kind.ECC_UNCORRECTABLE_AGGREGATE, 0, "none");

    GpuHealth health = POLICY.assess(List.of(zero));

    assertThat(health.state()).isEqualTo(State.HEALTHY);
    assertThat(health.evidence()).containsExactly(zero);
  }

  @Test
  void thresholdsAndFatalXidsAreTheAdminsToChange() {
    GpuHealthPolicy lenient = new GpuHealthPolicy(Set.of(79), 5);

    assertThat(lenient.classify(new HealthEvidence(Kind.ECC_UNCORRECTABLE_AGGREGATE, 5, ""))).isEqualTo(State.HEALTHY);
    assertThat(lenient.classify(new HealthEvidence(Kind.ECC_UNCORRECTABLE_AGGREGATE, 6, ""))).isEqualTo(State.DEGRADED);
    assertThat(lenient.classify(new HealthEvidence(Kind.XID, 48, ""))).isEqualTo(State.DEGRADED);
    assertThat(lenient.classify(new HealthEvidence(Kind.XID, 79, ""))).isEqualTo(State.FAILED);
  }

  @Test
  void badInputIsRefusedWithItsField() {
    assertThatThrownBy(() -> new GpuHealthPolicy(Set.of(), -1)).isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("aggregateUncorrectableLimit");
    assertThatThrownBy(() -> new HealthEvidence(Kind.XID, -1, "")).isInstanceOf(InvalidInputException.class);
  }

  @Test
  void statesOrderFromBestToWorst() {
    assertThat(State.HEALTHY.worse(State.DEGRADED)).isEqualTo(State.DEGRADED);
    assertThat(State.FAILED.worse(State.DEGRADED)).isEqualTo(State.FAILED);
    assertThat(State.HEALTHY.worse(State.HEALTHY)).isEqualTo(State.HEALTHY);
  }
}
