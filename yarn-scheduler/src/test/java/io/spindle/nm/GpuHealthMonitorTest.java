package io.spindle.nm;

import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.core.model.GpuHealth;
import io.spindle.core.model.GpuHealthPolicy;
import io.spindle.core.model.HealthEvidence;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The NodeManager's health watch on a fake {@code nvidia-smi} and a kernel-log file: it reports only changes, calls a
 * GPU that drops out of the listing missing, brings a GPU back when its evidence is gone, and keeps its last
 * judgement when the tools cannot be read.
 */
class GpuHealthMonitorTest {

  private static final String XID_79_ON_GPU3 = "[Tue Mar  4 10:07:19 2025] NVRM: Xid (PCI:0000:5d:00): 79, "
      + "pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n";

  @TempDir
  Path temp;

  private GpuHealthMonitor monitor(FakeNvidiaSmi fake, Path kernelLog) {
    return new GpuHealthMonitor(GpuHealthMonitor.tools(fake.smi(), kernelLog, null, Duration.ofSeconds(10)),
        GpuHealthPolicy.DEFAULT);
  }

  @Test
  void aHealthyNodeReportsNothingAndAnXid79FailsTheGpuUntilItIsGone() throws Exception {
    FakeNvidiaSmi fake = FakeNvidiaSmi.of("h100-8x", temp);
    Path log = Files.writeString(temp.resolve("kern.log"), "");
    GpuHealthMonitor monitor = monitor(fake, log);
    assertThat(monitor.check()).isEmpty();

    Files.writeString(log, XID_79_ON_GPU3);
    Map<Integer, GpuHealth> failed = monitor.check();
    assertThat(failed).containsOnlyKeys(3);
    assertThat(failed.get(3).state()).isEqualTo(GpuHealth.State.FAILED);
    assertThat(failed.get(3).evidence(HealthEvidence.Kind.XID)).singleElement()
        .satisfies(e -> assertThat(e.detail()).contains("Xid 79").contains("fallen off the bus"));
    assertThat(monitor.check()).as("unchanged: nothing to report").isEmpty();
    assertThat(monitor.of(3).state()).isEqualTo(GpuHealth.State.FAILED);

    // The GPU drops out of the listing, as a fallen-off GPU does: still failed, now also missing.
    String listed = Files.readString(fake.dir().resolve("list.txt"));
    fake.write("list.txt", String.join("\n", Files.readAllLines(fake.dir().resolve("list.txt")).stream()
        .filter(l -> !l.startsWith("GPU 3:")).toList()) + "\n");
    assertThat(monitor.check().get(3).evidence(HealthEvidence.Kind.MISSING)).hasSize(1);

    // Reset and reboot: listed again, and the kernel log starts afresh.
    fake.write("list.txt", listed);
    Files.writeString(log, "");
    assertThat(monitor.check()).containsEntry(3, GpuHealth.HEALTHY);
  }

  @Test
  void whenNvidiaSmiCannotBeReadTheLastJudgementStands() throws Exception {
    FakeNvidiaSmi fake = FakeNvidiaSmi.of("h100-8x", temp);
    Path log = Files.writeString(temp.resolve("kern.log"), XID_79_ON_GPU3);
    GpuHealthMonitor monitor = monitor(fake, log);
    assertThat(monitor.check()).containsOnlyKeys(3);

    fake.write("list.txt.exit", "15");
    Files.writeString(log, "");
    assertThat(monitor.check()).isEmpty();
    assertThat(monitor.of(3).state()).as("never healthy for want of data").isEqualTo(GpuHealth.State.FAILED);
  }

  @Test
  void theRecordedFaultsFixtureJudgesEachGpu() throws Exception {
    FakeNvidiaSmi fake = FakeNvidiaSmi.of("h100-8x-faults", temp);
    GpuHealthMonitor monitor = monitor(fake, fake.dir().resolve("kern.log"));
    Map<Integer, GpuHealth> first = monitor.check();
    // -L lists GPUs 0-4, 6, 7 (GPU 5 fell off the bus and is not listed, so it has no index to report under yet).
    assertThat(first.get(0).state()).as("Xid 13: the application's fault").isEqualTo(GpuHealth.State.DEGRADED);
    assertThat(first.get(1).state()).as("volatile uncorrectable ECC").isEqualTo(GpuHealth.State.FAILED);
    assertThat(first.get(2).state()).isEqualTo(GpuHealth.State.DEGRADED);
    assertThat(first.get(3).state()).isEqualTo(GpuHealth.State.DEGRADED);
    assertThat(first.get(4).evidence(HealthEvidence.Kind.NVLINK_DOWN)).hasSize(1);
    assertThat(first).doesNotContainKeys(6, 7);
    assertThat(List.copyOf(first.keySet())).doesNotContain(5);
  }
}
