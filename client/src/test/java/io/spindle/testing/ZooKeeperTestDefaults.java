package io.spindle.testing;

import org.apache.zookeeper.util.ServiceUtils;
import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;

/**
 * Makes every ZooKeeper server that a test JVM embeds (Curator's TestingServer and TestingCluster) safe to run beside
 * others, once per JVM before any test: registered through META-INF/services, in this module's test JAR, which the
 * other modules' tests put on their classpath.
 *
 * <ul>
 *   <li>ZooKeeper's servers call {@code System.exit} on some errors of a quorum member (a leader or follower that
 *       fails, a quorum port it cannot bind); in a test that stops and restarts members, that ended the whole forked
 *       JVM ("The forked VM terminated without properly saying goodbye") and took every report with it. Here they
 *       log instead, and the test sees the member as down.
 *   <li>Each server would start its AdminServer (Jetty) on 0.0.0.0:8080: the second one in a JVM, or any while
 *       something else holds 8080, fails to bind. Tests never use it.
 * </ul>
 */
public final class ZooKeeperTestDefaults implements LauncherSessionListener {

  @Override
  public void launcherSessionOpened(LauncherSession session) {
    System.setProperty("zookeeper.admin.enableServer", "false");
    ServiceUtils.setSystemExitProcedure(ServiceUtils.LOG_ONLY);
  }
}
