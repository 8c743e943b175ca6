package io.spindle.local;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.hadoop.yarn.api.records.NodeId;

/**
 * The host each node binds, by node. Every node gets its own loopback address (127.0.0.2, .3, ...) so that it
 * registers under its own host and the rack mapping can place it; where those addresses cannot be bound (e.g. macOS
 * without aliases) all nodes share {@code localhost} and therefore one rack.
 *
 * @param distinct whether every node has its own host (and so its own rack)
 */
record LocalHosts(List<String> hosts, boolean distinct) {

  LocalHosts {
    hosts = List.copyOf(hosts);
  }

  static LocalHosts choose(int nodes) {
    List<String> own = new ArrayList<>();
    for (int i = 0; i < nodes; i++) {
      String host = "127.0.0." + (i + 2);
      if (i + 2 > 254 || !canBind(host)) {
        return new LocalHosts(Collections.nCopies(nodes, "localhost"), false);
      }
      own.add(host);
    }
    return new LocalHosts(own, true);
  }

  /** The node's name in Spindle's ZooKeeper state: the host of its NodeId (host:port when hosts are shared). */
  String zkNodeName(NodeId id) {
    return distinct ? id.getHost() : id.getHost() + ":" + id.getPort();
  }

  private static boolean canBind(String host) {
    try (ServerSocket s = new ServerSocket()) {
      s.bind(new InetSocketAddress(host, 0));
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
