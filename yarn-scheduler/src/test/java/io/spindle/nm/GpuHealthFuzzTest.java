package io.spindle.nm;

import static io.spindle.nm.FakeNvidiaSmi.fixture;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.spindle.core.model.GpuHealthPolicy;
import io.spindle.fuzz.FuzzInput;
import io.spindle.fuzz.HostileInput;
import io.spindle.nm.GpuHealthReader.GpuHealthReport;
import io.spindle.nm.GpuHealthReader.Sources;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Hostile tool output fed to {@link GpuHealthReader}, one source at a time, the others left as recorded: it returns a
 * report or throws an {@link NvidiaSmiFormatException} that says what it could not read, never anything else and
 * never hangs. Inputs are random text and the {@code h100-8x-faults} fixtures mutated as {@link NvidiaSmiFuzzTest}
 * mutates discovery's.
 */
class GpuHealthFuzzTest {

  private static final String TARGET = "GPU health output";
  private static final String DIR = "h100-8x-faults/";
  private static final Set<String> EXPECTED = Set.of("GPU-0b1c2d3e-6666-4a5b-8c9d-0e1f2a3b4c06", "GPU-gone");

  private enum Source {
    QUERY("query.xml"), LIST("list.txt"), NVLINK("nvlink-s.txt"), KERNEL_LOG("kern.log"), DCGM("dcgmi-health.txt");

    final String file;
    final String recorded;

    Source(String file) {
      this.file = file;
      this.recorded = fixture(DIR + file);
    }
  }

  @Test
  void randomQueryXmlIsJudgedOrRefusedWithAReason() {
    HostileInput.assertBothKinds(HostileInput.run(TARGET + " -q -x", in -> check(Source.QUERY, in)));
  }

  @Test
  void randomGpuListsAreJudgedOrRefusedWithAReason() {
    HostileInput.assertBothKinds(HostileInput.run(TARGET + " -L", in -> check(Source.LIST, in)));
  }

  @Test
  void randomNvlinkStatusIsJudgedOrRefusedWithAReason() {
    HostileInput.assertBothKinds(HostileInput.run(TARGET + " nvlink -s", in -> check(Source.NVLINK, in)));
  }

  /** A kernel log is mostly other things: nothing in it is refused, unreadable Xid lines become notes. */
  @Test
  void randomKernelLogsAreAlwaysJudged() {
    HostileInput.Tally tally = HostileInput.run(TARGET + " kern.log", in -> check(Source.KERNEL_LOG, in));
    assertThat(tally.rejected()).isZero();
    assertThat(tally.accepted()).isPositive();
  }

  @Test
  void randomDcgmHealthIsJudgedOrRefusedWithAReason() {
    HostileInput.assertBothKinds(HostileInput.run(TARGET + " dcgmi health", in -> check(Source.DCGM, in)));
  }

  @FuzzTest(maxExecutions = 10_000)
  void coverageGuided(byte[] bytes) {
    HostileInput.once(TARGET, in -> check(in.pick(Source.values()), in), bytes);
  }

  @AfterAll
  static void report() {
    HostileInput.report(TARGET);
  }

  static String check(Source hostile, FuzzInput in) {
    String text = in.below(4) == 0 ? in.text(400) : NvidiaSmiFuzzTest.mutate(in, hostile.recorded);
    String[] texts = new String[Source.values().length];
    for (Source s : Source.values()) {
      texts[s.ordinal()] = s == hostile ? text : s.recorded;
    }
    try {
      GpuHealthReport report = GpuHealthReader.read(new Sources(texts[0], texts[1], texts[2], texts[3], texts[4]),
          EXPECTED, GpuHealthPolicy.DEFAULT);
      assertThat(report.gpus()).isNotNull().allSatisfy((uuid, health) -> assertThat(health).isNotNull());
      // A GPU seen before and not listed now is never judged healthy, whatever else the output says.
      assertThat(report.of("GPU-gone").state()).isEqualTo(io.spindle.core.model.GpuHealth.State.FAILED);
      return HostileInput.ACCEPTED;
    } catch (NvidiaSmiFormatException e) {
      return HostileInput.rejected(e, NvidiaSmiFormatException.class);
    }
  }

  /** The health reader shares discovery's XML reader: an entity that expands a billion times is refused at once. */
  @Test
  void entityExpansionIsRefused() {
    StringBuilder xml = new StringBuilder("<?xml version=\"1.0\"?>\n<!DOCTYPE nvidia_smi_log [\n<!ENTITY l0 \"lol\">\n");
    for (int i = 1; i <= 9; i++) {
      xml.append("<!ENTITY l").append(i).append(" \"").append(("&l" + (i - 1) + ";").repeat(10)).append("\">\n");
    }
    xml.append("]>\n<nvidia_smi_log><gpu><uuid>&l9;</uuid></gpu></nvidia_smi_log>");
    assertTimeoutPreemptively(Duration.ofSeconds(10), () -> assertThatThrownBy(() -> GpuHealthReader.read(
        new Sources(xml.toString(), Source.LIST.recorded, null, null, null), Set.of(), GpuHealthPolicy.DEFAULT))
        .isInstanceOf(NvidiaSmiFormatException.class));
  }

  /** A kernel log of a million Xid lines for one GPU is one piece of evidence, read in well under the time limit. */
  @Test
  void aFloodOfOneXidIsOnePieceOfEvidence() throws Exception {
    String flood = "NVRM: Xid (PCI:0000:18:00): 13, pid=1, name=x, Graphics Exception\n".repeat(200_000);
    GpuHealthReport report = assertTimeoutPreemptively(Duration.ofSeconds(20), () -> GpuHealthReader.read(
        new Sources(Source.QUERY.recorded, Source.LIST.recorded, null, flood, null), Set.of(),
        GpuHealthPolicy.DEFAULT));

    assertThat(report.of("GPU-0b1c2d3e-1111-4a5b-8c9d-0e1f2a3b4c01").evidence()).singleElement()
        .satisfies(e -> assertThat(e.detail()).endsWith("(200000 times)"));
  }
}
