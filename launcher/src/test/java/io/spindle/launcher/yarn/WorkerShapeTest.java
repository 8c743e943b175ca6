package io.spindle.launcher.yarn;

import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.launcher.RunSpecParser;
import java.util.Set;
import org.junit.jupiter.api.Test;

class WorkerShapeTest {

  private static java.util.Optional<String> typeOf(Set<String> cluster, String... options) {
    String[] args = new String[options.length + 4];
    args[0] = "--workers";
    args[1] = "2";
    System.arraycopy(options, 0, args, 2, options.length);
    args[args.length - 2] = "--";
    args[args.length - 1] = "true";
    return WorkerShape.gpuType(RunSpecParser.parse(args), cluster);
  }

  @Test
  void wholeGpusUseTheTypeTheClusterHasAndOtherShapesTheirOwn() {
    Set<String> hadoopPlugin = Set.of("memory-mb", "vcores", "yarn.io/gpu");
    Set<String> spindlePlugin = Set.of("memory-mb", "vcores", "nvidia.com/gpu", "nvidia.com/mig-3g.40gb");
    assertThat(typeOf(hadoopPlugin, "--gpus-per-worker", "8")).contains("yarn.io/gpu");
    assertThat(typeOf(spindlePlugin, "--gpus-per-worker", "8")).contains("nvidia.com/gpu");
    assertThat(typeOf(spindlePlugin, "--mig-profile", "3g.40gb")).contains("nvidia.com/mig-3g.40gb");
    assertThat(typeOf(hadoopPlugin, "--gpu-milli", "250")).as("checked against the cluster by the client")
        .contains("nvidia.com/gpu-milli");
    assertThat(typeOf(hadoopPlugin)).as("CPU only").isEmpty();
  }
}
