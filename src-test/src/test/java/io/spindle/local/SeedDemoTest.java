package io.spindle.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code scripts/spindle-local --demo=seed} end to end: the seed cluster (8 nodes x 8 GPUs, two racks, NVLink
 * islands, preemption on) starts, the four seed scenarios run, and each one's check, read from the cluster, holds.
 */
class SeedDemoTest {

  @TempDir
  Path tmp;

  @Test
  void theFourSeedScenariosHoldOnTheSeedCluster() {
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(buffer, true, StandardCharsets.UTF_8);
    long started = System.currentTimeMillis();
    int rc = SpindleLocalCluster.run(new String[] {"--workdir", tmp.resolve("seed").toString(), "--demo=seed"}, out,
        false);
    String printed = buffer.toString(StandardCharsets.UTF_8);
    assertThat(rc).as(printed).isZero();
    assertThat(printed).as(printed).contains("Seed demo summary", "4 of 4 scenarios held.", "Stopped.")
        .contains("NVLink islands by GPU: [0, 0, 1, 1, 2, 2, 3, 3]");
    for (String scenario : List.of("fair share", "32-GPU gang", "checkpoint\\+preempt", "NVLink node")) {
      assertThat(printed).as(printed).containsPattern("(?m)^  " + scenario + " +HELD +\\S");
    }
    // The figures in the lines are the cluster's: the gang's four members, the preempted experiment, one island.
    assertThat(printed).containsPattern("(?m)^  32-GPU gang +HELD +4 x 8 GPUs \\(32 GPUs per YARN's reports\\)")
        .containsPattern("(?m)^  checkpoint\\+preempt +HELD .* 6 containers ended PREEMPTED")
        .containsPattern("(?m)^  NVLink node +HELD +8 ranks x 1 GPU: Spindle lists 8 GPUs held on \\[hgx\\d\\],"
            + " in 1 NVLink island");
    assertThat(System.currentTimeMillis() - started).as("kept short").isLessThan(180_000);
  }
}
