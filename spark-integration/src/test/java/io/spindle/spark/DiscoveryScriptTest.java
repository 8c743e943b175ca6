package io.spindle.spark;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code scripts/spindle-gpu-discovery.sh} in faked executor environments: what the NodeManager may set, a fake
 * {@code nvidia-smi}, and the environments it must refuse with an error JSON and exit status 1.
 */
class DiscoveryScriptTest {

  private static final Path SCRIPT = Path.of("scripts/spindle-gpu-discovery.sh").toAbsolutePath();

  @TempDir
  Path bin;

  private record Result(int exit, String stdout, String stderr) {}

  @Test
  void dockerContainersAreGivenTheirGpuUuids() throws Exception {
    Result r = run(Map.of("NVIDIA_VISIBLE_DEVICES", "GPU-5a1c0f3e-1111,GPU-77e0aa2b-2222"));
    assertThat(r.exit()).isZero();
    assertThat(r.stdout()).isEqualTo("{\"name\":\"gpu\",\"addresses\":[\"GPU-5a1c0f3e-1111\",\"GPU-77e0aa2b-2222\"]}");
  }

  @Test
  void aMigInstanceIsItsUuidInBothUuidFormats() throws Exception {
    assertThat(run(Map.of("NVIDIA_VISIBLE_DEVICES", "MIG-8b5f3f8e-7d0c-5c1a-9b3e-0123456789ab")).stdout())
        .isEqualTo("{\"name\":\"gpu\",\"addresses\":[\"MIG-8b5f3f8e-7d0c-5c1a-9b3e-0123456789ab\"]}");
    assertThat(run(Map.of("NVIDIA_VISIBLE_DEVICES", "MIG-GPU-5a1c0f3e/1/0")).stdout())
        .isEqualTo("{\"name\":\"gpu\",\"addresses\":[\"MIG-GPU-5a1c0f3e/1/0\"]}");
  }

  @Test
  void ordinalFormatNumbersTheVisibleDevicesFromZero() throws Exception {
    Result r = run(Map.of("NVIDIA_VISIBLE_DEVICES", "GPU-a,GPU-b,GPU-c", "SPINDLE_GPU_ADDRESS_FORMAT", "ordinal"));
    assertThat(r.stdout()).isEqualTo("{\"name\":\"gpu\",\"addresses\":[\"0\",\"1\",\"2\"]}");
  }

  @Test
  void nvidiaVisibleDevicesWinsOverCudaAndTheManualList() throws Exception {
    Result r = run(Map.of("NVIDIA_VISIBLE_DEVICES", "GPU-a", "CUDA_VISIBLE_DEVICES", "3",
        "SPINDLE_GPU_ADDRESSES", "9"));
    assertThat(r.stdout()).isEqualTo("{\"name\":\"gpu\",\"addresses\":[\"GPU-a\"]}");
    assertThat(run(Map.of("CUDA_VISIBLE_DEVICES", "2,3", "SPINDLE_GPU_ADDRESSES", "9")).stdout())
        .isEqualTo("{\"name\":\"gpu\",\"addresses\":[\"2\",\"3\"]}");
  }

  /** A share of a GPU: Spark knows it under its own resource name, and the script answers for that name. */
  @Test
  void aSharedGpuIsListedUnderTheSparkResourceNameItWasGiven() throws Exception {
    Result r = run(Map.of("NVIDIA_VISIBLE_DEVICES", "GPU-5a1c0f3e-1111", "SPINDLE_GPU_RESOURCE", "sharedgpu"));
    assertThat(r.exit()).isZero();
    assertThat(r.stdout()).isEqualTo("{\"name\":\"sharedgpu\",\"addresses\":[\"GPU-5a1c0f3e-1111\"]}");
    Result bad = run(Map.of("SPINDLE_GPU_ADDRESSES", "0", "SPINDLE_GPU_RESOURCE", "a b"));
    assertThat(bad.exit()).isEqualTo(1);
    assertThat(bad.stdout()).contains("\"error\":\"SPINDLE_GPU_RESOURCE='a b' is not a Spark resource name");
  }

  @Test
  void theManualListServesClustersWhoseContainersAreToldNothing() throws Exception {
    Result r = run(Map.of("SPINDLE_GPU_ADDRESSES", " 0, 1 ,1"));
    assertThat(r.exit()).isZero();
    assertThat(r.stdout()).as("trimmed, duplicates dropped").isEqualTo("{\"name\":\"gpu\",\"addresses\":[\"0\",\"1\"]}");
  }

  @Test
  void withoutEnvironmentTheWholeGpusNvidiaSmiCanOpenAreListedAndMigGpusSkipped() throws Exception {
    fakeNvidiaSmi("""
        0, GPU-aaaa-0000, Disabled
        Unable to determine the device handle for GPU 0000:41:00.0: Insufficient Permissions
        2, GPU-cccc-2222, Enabled
        3, GPU-dddd-3333, [N/A]
        """, 15);
    Result r = run(Map.of());
    assertThat(r.exit()).isZero();
    assertThat(r.stdout()).isEqualTo("{\"name\":\"gpu\",\"addresses\":[\"GPU-aaaa-0000\",\"GPU-dddd-3333\"]}");
  }

  @Test
  void nvidiaSmiThatListsNothingUsableIsAnErrorWithItsOutput() throws Exception {
    fakeNvidiaSmi("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n", 9);
    Result r = run(Map.of());
    assertThat(r.exit()).isEqualTo(1);
    assertThat(r.stdout()).startsWith("{\"name\":\"gpu\",\"addresses\":[],\"error\":\"nvidia-smi (exit 9) lists no whole GPU")
        .contains("couldn't communicate with the NVIDIA driver").endsWith("\"}");
  }

  @Test
  void noGpuAnywhereIsAnErrorThatSaysWhereItLooked() throws Exception {
    Result r = run(Map.of());
    assertThat(r.exit()).isEqualTo(1);
    assertThat(r.stdout()).startsWith("{\"name\":\"gpu\",\"addresses\":[],\"error\":\"no GPU found: NVIDIA_VISIBLE_DEVICES,");
    assertThat(r.stderr()).contains("no GPU found");
  }

  @Test
  void aContainerGivenNoDeviceIsAnError() throws Exception {
    for (String none : new String[] {"none", "void", ""}) {
      Result r = run(Map.of("NVIDIA_VISIBLE_DEVICES", none));
      assertThat(r.exit()).as(none).isEqualTo(1);
      assertThat(r.stdout()).as(none).contains("the container was given no GPU");
    }
    assertThat(run(Map.of("CUDA_VISIBLE_DEVICES", "-1")).stdout()).contains("the container was given no GPU");
  }

  @Test
  void malformedValuesAreRefusedAndTheErrorIsStillValidJson() throws Exception {
    Result r = run(Map.of("NVIDIA_VISIBLE_DEVICES", "GPU-a,\"}{x"));
    assertThat(r.exit()).isEqualTo(1);
    assertThat(r.stdout()).isEqualTo("{\"name\":\"gpu\",\"addresses\":[],\"error\":\"NVIDIA_VISIBLE_DEVICES names a "
        + "device '\\\"}{x' that is not a GPU index or UUID\"}");
    assertThat(run(Map.of("SPINDLE_GPU_ADDRESSES", " , ")).stdout()).contains("names no device");
    assertThat(run(Map.of("SPINDLE_GPU_ADDRESSES", "0", "SPINDLE_GPU_ADDRESS_FORMAT", "index")).stdout())
        .contains("use uuid (default) or ordinal");
  }

  @Test
  void allMeansAskNvidiaSmi() throws Exception {
    fakeNvidiaSmi("0, GPU-aaaa-0000, Disabled\n", 0);
    assertThat(run(Map.of("NVIDIA_VISIBLE_DEVICES", "all")).stdout())
        .isEqualTo("{\"name\":\"gpu\",\"addresses\":[\"GPU-aaaa-0000\"]}");
  }

  private void fakeNvidiaSmi(String output, int exit) throws IOException {
    Path out = bin.resolve("nvidia-smi.out");
    Files.writeString(out, output);
    Path smi = bin.resolve("nvidia-smi");
    Files.writeString(smi, "#!/bin/sh\ncat '" + out + "'\nexit " + exit + "\n");
    Files.setPosixFilePermissions(smi, PosixFilePermissions.fromString("rwxr-xr-x"));
  }

  /**
   * Runs the script with only {@code env} and a PATH of the fake bin directory holding the few tools the script uses,
   * so a real {@code nvidia-smi} on the test machine is never found.
   */
  private Result run(Map<String, String> env) throws Exception {
    for (String tool : new String[] {"bash", "sh", "tr", "head", "cat"}) {
      Path link = bin.resolve(tool);
      if (!Files.exists(link, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
        Files.createSymbolicLink(link, onSystemPath(tool));
      }
    }
    ProcessBuilder pb = new ProcessBuilder(SCRIPT.toString());
    Map<String, String> e = pb.environment();
    e.clear();
    e.put("PATH", bin.toString());
    e.putAll(new HashMap<>(env));
    Process p = pb.start();
    if (!p.waitFor(20, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("the discovery script did not end within 20 s");
    }
    return new Result(p.exitValue(), new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip(),
        new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
  }

  private static Path onSystemPath(String tool) {
    for (String dir : System.getenv("PATH").split(java.io.File.pathSeparator)) {
      Path p = Path.of(dir, tool);
      if (Files.isExecutable(p)) {
        return p;
      }
    }
    throw new AssertionError(tool + " is not on the PATH");
  }
}
