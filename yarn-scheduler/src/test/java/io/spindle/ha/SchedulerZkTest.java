package io.spindle.ha;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.ServerSocket;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;

class SchedulerZkTest {

  @Test
  void anUnreachableQuorumStopsTheSchedulerFromStartingWithTheKeyAndWhatToDo() throws Exception {
    int port;
    try (ServerSocket free = new ServerSocket(0)) {
      port = free.getLocalPort(); // Closed again: nothing listens there.
    }
    Configuration conf = new Configuration(false);
    conf.setLong(SchedulerZk.CONNECT_TIMEOUT_MS, 1_500);
    assertThatThrownBy(() -> SchedulerZk.connect(new ZkSettings("127.0.0.1:" + port, "/spindle/x"),
        SchedulerZkIdentity.random(), conf))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("cannot reach ZooKeeper at '127.0.0.1:" + port + "'")
        .hasMessageContaining(ZkSettings.ZK_ADDRESS)
        .hasMessageContaining(SchedulerZk.CONNECT_TIMEOUT_MS);
  }

  @Test
  void aSessionTimeoutBelowOneSecondIsRefusedWithItsKey() {
    Configuration conf = new Configuration(false);
    conf.setInt(SchedulerZk.SESSION_TIMEOUT_MS, 200);
    assertThatThrownBy(() -> SchedulerZk.connect(new ZkSettings("127.0.0.1:1", "/spindle/x"),
        SchedulerZkIdentity.random(), conf))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(SchedulerZk.SESSION_TIMEOUT_MS);
  }
}
