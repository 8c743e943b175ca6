package io.spindle.local;

import org.apache.zookeeper.util.ServiceUtils;

/**
 * What a process that embeds ZooKeeper servers (the local cluster, the soak, the failover benchmark) sets before it
 * starts one. A quorum member that fails calls {@code System.exit} by default, which would end the whole local
 * cluster with it; here it logs and the member is down. And no server starts the AdminServer, which binds
 * 0.0.0.0:8080: taken by anything else on the machine, it failed the start, and nothing here uses it. The test JVMs
 * get the same from {@code io.spindle.testing.ZooKeeperTestDefaults}.
 */
public final class EmbeddedZooKeeper {

  private EmbeddedZooKeeper() {}

  /** Call before the first ZooKeeper server of the process starts; idempotent. */
  public static void prepare() {
    System.setProperty("zookeeper.admin.enableServer", "false");
    ServiceUtils.setSystemExitProcedure(ServiceUtils.LOG_ONLY);
  }
}
