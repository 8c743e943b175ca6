package io.spindle.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

class CheckpointPathsTest {

  private final CheckpointPaths paths = new CheckpointPaths("/spindle/prod");

  @Test
  void layout() {
    assertThat(paths.notice("application_1_0001", 3)).isEqualTo("/spindle/prod/apps/application_1_0001/notices/3");
    assertThat(paths.ack("application_1_0001", 3)).isEqualTo("/spindle/prod/apps/application_1_0001/acks/3");
    assertThat(paths.report("application_1_0001")).isEqualTo("/spindle/prod/apps/application_1_0001/report");
    assertThat(paths.schema(0xabcL)).isEqualTo("/spindle/prod/schemas/0000000000000abc");
    assertThat(new CheckpointPaths("/").apps()).isEqualTo("/apps");
  }

  @Test
  void classifyKnowsOnlyTheProtocolsZnodes() {
    assertThat(paths.classify("/spindle/prod/apps/application_1_0001/acks/3")).contains(
        new CheckpointPaths.Znode(CheckpointPaths.Znode.Kind.ACK, "application_1_0001", 3));
    assertThat(paths.classify("/spindle/prod/apps/application_1_0001/notices/0")).contains(
        new CheckpointPaths.Znode(CheckpointPaths.Znode.Kind.NOTICE, "application_1_0001", 0));
    assertThat(paths.classify("/spindle/prod/apps/application_1_0001/report")).contains(
        new CheckpointPaths.Znode(CheckpointPaths.Znode.Kind.REPORT, "application_1_0001", -1));
    assertThat(paths.classify("/spindle/prod/apps/application_1_0001/acks")).isEmpty();
    assertThat(paths.classify("/spindle/prod/apps/application_1_0001/acks/03")).isEmpty();
    assertThat(paths.classify("/spindle/prod/apps/application_1_0001/acks/-1")).isEmpty();
    assertThat(paths.classify("/spindle/prod/apps/application_1_0001/acks/x")).isEmpty();
    assertThat(paths.classify("/spindle/prod/apps/application_1_0001/report/x")).isEmpty();
    assertThat(paths.classify("/spindle/prod/nodes/n1/gpus/0/desired")).isEmpty();
  }

  @Test
  void applicationIdsAreOneZnodeNameAndADigestUser() {
    assertThatThrownBy(() -> paths.app("a/b")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> paths.app("a:b")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> paths.app("..")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> paths.app("")).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void settingsResolveAsTheResourceManagerDoes() {
    assertThat(SpindleZkSettings.from(Map.of())).isEqualTo(new SpindleZkSettings("", "/spindle/default"));
    assertThat(SpindleZkSettings.from(Map.of("hadoop.zk.address", "zk1:2181",
        "yarn.resourcemanager.cluster-id", "prod-east"))).isEqualTo(new SpindleZkSettings("zk1:2181", "/spindle/prod-east"));
    Properties p = new Properties();
    p.setProperty("hadoop.zk.address", "zk1:2181");
    p.setProperty(SpindleZkSettings.ZK_ADDRESS, " zk9:2181 ");
    p.setProperty(SpindleZkSettings.ZK_ROOT, "/gpu/state");
    assertThat(SpindleZkSettings.from(p)).isEqualTo(new SpindleZkSettings("zk9:2181", "/gpu/state"));
    assertThatThrownBy(() -> SpindleZkSettings.from(Map.of(SpindleZkSettings.ZK_ROOT, "gpu/")))
        .hasMessageContaining(SpindleZkSettings.ZK_ROOT);
  }
}
