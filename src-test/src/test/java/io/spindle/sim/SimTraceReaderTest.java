package io.spindle.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Columns are found by header name; presets are detected; any other trace runs with flags only. */
class SimTraceReaderTest {

  private static CsvTable csv(String text) throws Exception {
    return CsvTable.read("t.csv", new StringReader(text));
  }

  @Test
  void phillyRowsByHeaderNameWithUtcTimestampsAndFloatDurations() throws Exception {
    Trace t = new TraceReader("default").read(csv(
        "cluster,num_gpus,gpu_time,duration,timestamp\n"
            + "6214e9,1,3256045.0,3256045.0,2017-09-07 03:58:57\n"
            + "7f04ca,8,17921552.0,2240194.0,2017-09-04 10:30:41\n"), null);
    assertThat(t.mapping().preset()).isEqualTo("philly");
    // Sorted by submit time; 2017-09-04T10:30:41Z = 1504521041 s.
    assertThat(t.jobs().get(0)).isEqualTo(new SimJob("job1", 1_504_521_041_000L, 2_240_194_000L, "7f04ca",
        "u-7f04ca", 8, 1000, 0, 0, null));
    assertThat(t.jobs().get(1).queue()).isEqualTo("6214e9");
  }

  @Test
  void genericColumnsAreDetected() throws Exception {
    Trace t = new TraceReader("default").read(csv("job_id,submission_time,duration,num_gpu\nj1,30,12.5,2\n"), null);
    assertThat(t.mapping().preset()).isEqualTo("generic");
    assertThat(t.jobs()).containsExactly(new SimJob("j1", 30_000, 12_500, "default", "u-default", 2, 1000, 0, 0,
        null));
  }

  @Test
  void openbRunTimeIsDeletionMinusScheduledOrMinusCreationWhenNeverScheduled() throws Exception {
    Trace t = new TraceReader("default").read(csv(
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,"
            + "scheduled_time\n"
            + "p0,12000,16384,1,460,,LS,Running,10,110,20\n"
            + "p1,6000,12288,1,1000,V100M32,LS,Pending,5,65,\n"), null);
    assertThat(t.mapping().preset()).isEqualTo("openb");
    assertThat(t.jobs().get(0)).isEqualTo(new SimJob("p1", 5_000, 60_000, "default", "u-default", 1, 1000, 6000,
        12288, "V100M32"));
    assertThat(t.jobs().get(1)).isEqualTo(new SimJob("p0", 10_000, 90_000, "default", "u-default", 1, 460, 12000,
        16384, null));
  }

  @Test
  void anotherTraceRunsWithFlagsOnly(@TempDir Path dir) throws Exception {
    Path trace = dir.resolve("other.csv");
    Files.writeString(trace, "arrive_ms,team,runtime_ms,gpus,id\n5000,b,2000,4,x\n1000,a,3000,1,y\n");
    Map<String, String> flags = SimMain.parse(new String[] {"--trace", trace.toString(), "--nodes", "1",
        "--gpus-per-node", "4", "--queues", "a:50,b:50", "--col-id", "id", "--col-submit", "arrive_ms",
        "--col-duration=runtime_ms", "--col-gpus", "gpus", "--col-queue", "team", "--time-unit", "ms",
        "--duration-unit", "ms"});
    ClusterSpec cluster = SimMain.cluster(flags);
    Trace t = SimMain.trace(flags, cluster);
    assertThat(t.jobs()).containsExactly(new SimJob("y", 1000, 3000, "a", "u-a", 1, 1000, 0, 0, null),
        new SimJob("x", 5000, 2000, "b", "u-b", 4, 1000, 0, 0, null));
  }

  @Test
  void aMissingColumnIsNamedWithTheColumnsTheFileHas() throws Exception {
    assertThatThrownBy(() -> new TraceReader("default").read(csv("job_id,submission_time,num_gpu\nj,1,1\n"),
        ColumnMapping.GENERIC)).hasMessageContaining("no column 'duration'").hasMessageContaining("submission_time");
    assertThatThrownBy(() -> new TraceReader("default").read(csv("a,b\n1,2\n"), null))
        .hasMessageContaining("match no preset");
  }

  @Test
  void jobsOfQueuesTheClusterLacksAreDroppedAndCounted() throws Exception {
    Trace t = new TraceReader("default").read(csv("job_id,submission_time,duration,num_gpu\nj1,1,1,1\n"), null);
    Trace kept = t.restrictToQueues(java.util.Set.of("other"), null);
    assertThat(kept.jobs()).isEmpty();
    assertThat(kept.dropped()).containsEntry("queue 'default' not in the cluster", 1);
    assertThat(t.restrictToQueues(java.util.Set.of("other"), "other").jobs().get(0).queue()).isEqualTo("other");
  }
}
