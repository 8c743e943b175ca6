package io.spindle.local;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.client.api.AMRMClient;
import org.apache.hadoop.yarn.client.api.AMRMClient.ContainerRequest;
import org.apache.hadoop.yarn.client.api.NMClient;
import org.apache.hadoop.yarn.client.api.NMTokenCache;

/**
 * The two YARN clients of one unmanaged ApplicationMaster running in this JVM (the demos'), started, sharing an NM
 * token cache of their own: YARN's default one is JVM-wide, and several AMs of one JVM would overwrite each other's
 * tokens for the same node.
 */
record UnmanagedAmClients(AMRMClient<ContainerRequest> rm, NMClient nm) implements AutoCloseable {

  static UnmanagedAmClients start(Configuration conf) {
    NMTokenCache tokens = new NMTokenCache();
    AMRMClient<ContainerRequest> rm = AMRMClient.createAMRMClient();
    rm.setNMTokenCache(tokens);
    rm.init(conf);
    rm.start();
    NMClient nm = NMClient.createNMClient();
    nm.setNMTokenCache(tokens);
    nm.init(conf);
    nm.start();
    return new UnmanagedAmClients(rm, nm);
  }

  @Override
  public void close() {
    nm.stop();
    rm.stop();
  }
}
