package io.spindle.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.bench.soak.SoakOptions;
import io.spindle.bench.soak.SoakResult;
import io.spindle.bench.soak.SoakRun;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fast subset of the soak (docs/reliability.md, "Load and soak"): the full profile's harness with 300
 * applications on 6 NodeManagers, in bursts of 60 that outrun the cluster so gangs, MIG jobs and single containers
 * queue and contend. Asserts the correctness figures only — nothing lost, stuck or failed, no container or GPU slot
 * handed out twice, every container reported completed and counted by the ResourceManager, YARN and Spindle drained
 * — never a rate or a latency.
 */
class SoakBenchmarkTest {

  @TempDir
  Path tmp;

  @Test
  void threeHundredApplicationsInBurstsAllFinishWithEveryContainerAccountedAndNothingDoubleAllocated()
      throws Exception {
    SoakOptions options = SoakOptions.parse("--apps=300", "--nodes=6", "--burst=60", "--burst-interval-ms=1000",
        "--max-in-flight=150", "--hold-ms=600", "--launch-every=30", "--heap-samples=1", "--drain-timeout-s=120",
        "--workdir=" + tmp.resolve("soak"));
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(buffer, true, StandardCharsets.UTF_8);
    SoakResult r = SoakRun.run(options, out);
    r.print(out);
    String printed = buffer.toString(StandardCharsets.UTF_8);
    System.out.print(printed);

    assertThat(r.problems()).as(printed).isEmpty();
    assertThat(r.apps().submitted()).isEqualTo(300);
    assertThat(r.apps().finished()).isEqualTo(300);
    assertThat(r.apps().lost()).isZero();
    assertThat(r.apps().stuck()).isZero();
    assertThat(r.apps().unendedInRm()).isZero();
    assertThat(r.doubles().total()).isZero();
    // The audit saw containers running, so "0 GPU slots held twice" was a check, not an empty loop.
    assertThat(r.doubles().audits()).isPositive();
    assertThat(r.doubles().mostRunning()).isPositive();
    assertThat(r.containers().received()).isGreaterThanOrEqualTo(300).isEqualTo(r.containers().completed())
        .isEqualTo(r.containers().rmAllocated());
    assertThat(r.containers().launched()).as("sampled launches through NodeManagers").isEqualTo(10);
    assertThat(r.drained().clean()).as(printed).isTrue();
    // Every kind of the mix took part.
    assertThat(r.schedulingLatency()).hasSize(4);
  }

  @Test
  void optionsRejectUnknownNamesAndBadValues() {
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> SoakOptions.parse("--apps=many"))
        .hasMessageContaining("--apps needs a whole number");
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> SoakOptions.parse("--bogus=1"))
        .hasMessageContaining("unknown option(s): --bogus");
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> SoakOptions.parse("--nodes=0"))
        .hasMessageContaining("--nodes must be at least 1");
    assertThat(SoakOptions.parse()).isEqualTo(SoakOptions.defaults());
  }
}
