package io.spindle.local;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Ports for daemons that must bind a port chosen in advance (the ResourceManagers of an HA pair, one restarted on
 * its old ports). A port the kernel handed out for {@code bind(0)} and that was closed again is free for the next
 * {@code bind(0)} anywhere on the machine — any other daemon in this JVM binding an ephemeral port could take it
 * before its owner started ("Address already in use" in SpindleLocalClusterTest's HA case, docs/reliability.md), and
 * two picks in a row could even return the same port. These are picked below the kernel's ephemeral range, which
 * {@code bind(0)} never uses, and never twice in a JVM.
 */
public final class FixedPorts {

  private static final Set<Integer> HANDED_OUT = new HashSet<>();
  private static final int LOWEST = 10_000;

  private FixedPorts() {}

  /** A port nothing listens on now, outside the ephemeral range, not handed out before by this JVM. */
  public static synchronized int next() throws IOException {
    int below = ephemeralLow();
    for (int attempt = 0; attempt < 1_000; attempt++) {
      int port = ThreadLocalRandom.current().nextInt(LOWEST, below);
      if (HANDED_OUT.contains(port)) {
        continue;
      }
      try (ServerSocket s = new ServerSocket()) {
        s.bind(new InetSocketAddress("localhost", port));
      } catch (IOException inUse) {
        continue;
      }
      HANDED_OUT.add(port);
      return port;
    }
    throw new IOException("no free port between " + LOWEST + " and " + below);
  }

  /** The lower bound of the kernel's ephemeral ports (Linux), or IANA's 49152 where it cannot be read. */
  private static int ephemeralLow() {
    try {
      String[] range = Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).trim().split("\\s+");
      return Math.max(LOWEST + 1_000, Integer.parseInt(range[0]));
    } catch (IOException | RuntimeException unreadable) {
      return 49_152;
    }
  }
}
