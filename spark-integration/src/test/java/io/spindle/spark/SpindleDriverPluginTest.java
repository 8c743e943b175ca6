package io.spindle.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spindle.client.CheckpointDecision;
import io.spindle.client.CheckpointNoticeView;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.junit.jupiter.api.Test;

/** Where the driver can answer notices, and how the configured handler is created. */
class SpindleDriverPluginTest {

  /** A handler as users write one. */
  public static final class SavingHandler implements SparkCheckpointHandler {
    @Override
    public CheckpointDecision onNotice(CheckpointNoticeView notice, SparkContext sc) {
      return CheckpointDecision.done("file:/tmp/ckpt", 1);
    }
  }

  @Test
  void onlyAYarnClusterModeDriverInItsContainerListens() {
    assertThat(SpindleDriverPlugin.whyNotListening(conf("local[2]", "client"))).get().asString()
        .contains("not YARN");
    assertThat(SpindleDriverPlugin.whyNotListening(conf("yarn", "client"))).get().asString()
        .contains("client deploy mode").contains("--deploy-mode cluster");
    if (System.getenv("CONTAINER_ID") == null) {
      assertThat(SpindleDriverPlugin.whyNotListening(conf("yarn", "cluster"))).get().asString()
          .contains("CONTAINER_ID");
    }
    assertThat(SpindleDriverPlugin.whyNotListening(conf("yarn", "cluster").set(SpindlePlugin.ENABLED, "false")))
        .get().asString().contains("false");
  }

  @Test
  void theHandlerIsCreatedFromItsClassName() throws Exception {
    assertThat(SpindleDriverPlugin.handler(new SparkConf(false))).isNull();
    SparkCheckpointHandler h = SpindleDriverPlugin.handler(new SparkConf(false)
        .set(SpindlePlugin.HANDLER, SavingHandler.class.getName()));
    assertThat(h).isInstanceOf(SavingHandler.class);
    assertThat(h.onNotice(null, null)).isEqualTo(CheckpointDecision.done("file:/tmp/ckpt", 1));
  }

  @Test
  void aBadHandlerNameStopsTheApplicationWithTheReason() {
    assertThatThrownBy(() -> SpindleDriverPlugin.handler(new SparkConf(false).set(SpindlePlugin.HANDLER, "no.Such")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("spark.spindle.checkpoint.handler=no.Such cannot be created");
    assertThatThrownBy(() -> SpindleDriverPlugin.handler(new SparkConf(false).set(SpindlePlugin.HANDLER,
        String.class.getName()))).hasMessageContaining("does not implement " + SparkCheckpointHandler.class.getName());
  }

  private static SparkConf conf(String master, String deployMode) {
    return new SparkConf(false).set("spark.master", master).set("spark.submit.deployMode", deployMode);
  }
}
