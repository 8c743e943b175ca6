package io.spindle.ha;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;

class ZkSettingsTest {

  @Test
  void rootComesFromTheClusterIdUnlessSet() {
    Configuration conf = new Configuration(false);
    assertThat(ZkSettings.from(conf)).isEqualTo(new ZkSettings("", "/spindle/default"));
    conf.set("hadoop.zk.address", "zk1:2181");
    conf.set("yarn.resourcemanager.cluster-id", "prod-east");
    assertThat(ZkSettings.from(conf)).isEqualTo(new ZkSettings("zk1:2181", "/spindle/prod-east"));
    conf.set(ZkSettings.ZK_ADDRESS, "zk9:2181");
    conf.set(ZkSettings.ZK_ROOT, "/gpu/state");
    assertThat(ZkSettings.from(conf)).isEqualTo(new ZkSettings("zk9:2181", "/gpu/state"));
  }
}
