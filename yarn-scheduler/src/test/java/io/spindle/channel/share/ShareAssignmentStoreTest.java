package io.spindle.channel.share;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spindle.channel.mig.MigStatePaths;
import io.spindle.ha.avro.ShareAssignmentRecord;
import java.io.IOException;
import org.junit.jupiter.api.Test;

class ShareAssignmentStoreTest {

  @Test
  void recordsRoundTripAndDefaultTheirOptionalFields() throws IOException {
    ShareAssignmentRecord full = ShareAssignmentRecord.newBuilder().setNode("gpu3.example").setGpuIndex(2)
        .setContainerId("container_1700000000000_0007_01_000003").setMilli(250).setMemoryMb(10_240)
        .setSharing("mps").setUpdatedMillis(5).build();
    assertThat(ShareAssignmentStore.decode(ShareAssignmentStore.encode(full))).isEqualTo(full);

    ShareAssignmentRecord minimal = ShareAssignmentRecord.newBuilder().setNode("n").setGpuIndex(0)
        .setContainerId("c").setMilli(1).setUpdatedMillis(1).build();
    ShareAssignmentRecord back = ShareAssignmentStore.decode(ShareAssignmentStore.encode(minimal));
    assertThat(back.getMemoryMb()).isZero();
    assertThat(back.getSharing()).isEqualTo("exclusive");
  }

  @Test
  void garbageIsAnErrorNotARecord() {
    assertThatThrownBy(() -> ShareAssignmentStore.decode(new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}))
        .isInstanceOf(IOException.class).hasMessageStartingWith("not a share assignment record");
    assertThatThrownBy(() -> ShareAssignmentStore.decode(new byte[0])).hasMessage("empty share assignment record");
  }

  @Test
  void assignmentsLiveBesideTheNodesGpus() {
    MigStatePaths paths = new MigStatePaths("/spindle/prod");

    assertThat(paths.share("gpu3.example:8041", "container_1_0001_01_000002"))
        .isEqualTo("/spindle/prod/nodes/gpu3.example:8041/shares/container_1_0001_01_000002");
    assertThat(paths.gpus("gpu3.example:8041")).isEqualTo("/spindle/prod/nodes/gpu3.example:8041/gpus");
    assertThatThrownBy(() -> paths.share("n", "a/b")).hasMessageContaining("container id must be");
    assertThatThrownBy(() -> paths.shares("a/b")).hasMessageContaining("node name must be");
  }
}
