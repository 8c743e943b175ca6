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
 * The soak against a ResourceManager HA pair whose active one fails over twice under load (docs/reliability.md,
 * "Load and soak"): 200 applications on 6 NodeManagers, the first failover an admin's (standby, then active), the
 * second the active ResourceManager stopped outright. Clients, AMs and NodeManagers follow through YARN's failover
 * proxies. Asserts what must hold across the failovers — nothing lost, stuck or failed, no container or GPU slot
 * handed out twice in the active ResourceManager's Spindle, every container reported completed or lost unlaunched
 * with its ResourceManager, the ResourceManagers' counts agreeing, drained — and that each failover happened with
 * work in flight and the new one's Spindle took over and allocated; never a time.
 */
class SoakFailoverTest {

  @TempDir
  Path tmp;

  @Test
  void twoFailoversUnderLoadLoseNoApplicationAndHandOutNothingTwice() throws Exception {
    SoakOptions options = SoakOptions.parse("--apps=200", "--nodes=6", "--burst=50", "--burst-interval-ms=1000",
        "--max-in-flight=120", "--hold-ms=600", "--launch-every=20", "--heap-samples=0", "--drain-timeout-s=150",
        "--failovers=2", "--failover-mode=alternate", "--workdir=" + tmp.resolve("soak"));
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(buffer, true, StandardCharsets.UTF_8);
    SoakResult r = SoakRun.run(options, out);
    r.print(out);
    String printed = buffer.toString(StandardCharsets.UTF_8);
    System.out.print(printed);

    assertThat(r.problems()).as(printed).isEmpty();
    assertThat(r.apps().finished()).isEqualTo(200);
    assertThat(r.apps().lost() + r.apps().stuck() + r.apps().failed() + r.apps().unendedInRm()).isZero();
    assertThat(r.doubles().total()).isZero();
    assertThat(r.doubles().audits()).isPositive();
    assertThat(r.containers().unaccounted()).isZero();
    assertThat(r.containers().received()).isGreaterThanOrEqualTo(200);
    assertThat(r.containers().rmAllocated()).isEqualTo(r.containers().received() + r.containers().rmUndelivered());
    assertThat(r.containers().launched()).as("sampled launches through NodeManagers").isEqualTo(10);
    assertThat(r.drained().clean()).as(printed).isTrue();

    assertThat(r.containers().rmRecovered()).as("running containers taken over from NodeManagers").isPositive();
    assertThat(r.failovers().done()).extracting(SoakResult.Failover::mode).containsExactly("standby", "stop");
    assertThat(r.failovers().done()).extracting(SoakResult.Failover::to).containsExactly("rm1", "rm0");
    for (SoakResult.Failover f : r.failovers().done()) {
      assertThat(f.inFlight()).as("failover %d under load", f.index()).isPositive();
      assertThat(f.heldAtStepDown()).as("failover %d with containers out", f.index()).isPositive();
      assertThat(f.epochAfter()).isGreaterThan(f.epochBefore());
      assertThat(f.takenOverMs()).as("failover %d: Spindle took over", f.index()).isPositive();
      assertThat(f.firstAllocationMs()).as("failover %d: the new one allocated", f.index())
          .isGreaterThanOrEqualTo(f.activeMs());
    }
  }
}
