package io.spindle.testing;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.zookeeper.util.ServiceUtils;
import org.junit.jupiter.api.Test;

/**
 * The defaults every test JVM gets from the shared test JAR, checked where the ZooKeeper ensembles run. Were the
 * listener lost from the classpath, the first case would end this JVM, and Surefire would fail the build on it.
 */
class ZooKeeperTestDefaultsTest {

  @Test
  void aZooKeeperServerThatAsksToExitLeavesTheTestJvmRunning() {
    ServiceUtils.requestSystemExit(1);
    assertThat(Runtime.getRuntime().availableProcessors()).as("still here").isPositive();
  }

  @Test
  void noZooKeeperServerStartsAnAdminServer() {
    assertThat(System.getProperty("zookeeper.admin.enableServer")).isEqualTo("false");
  }
}
