package io.spindle.client;

import java.net.URI;
import java.util.Optional;
import java.util.function.Function;

/**
 * Where Spindle's status API is, from what a Hadoop client's {@code yarn-site.xml} says: the port and bind address the
 * ResourceManager serves it on and, when it binds every interface, the ResourceManager's host. One rule for every
 * client ({@code scripts/spindle}, {@code spindle-run}).
 */
public final class StatusApiAddress {

  public static final String PORT_KEY = "yarn.scheduler.spindle.http.port";
  public static final String BIND_KEY = "yarn.scheduler.spindle.http.bind-address";

  private StatusApiAddress() {}

  /**
   * {@code http://host:port/}, or empty when the configuration sets no port above 0 (the RM then serves no status
   * API at a known port).
   *
   * @param conf a configuration lookup: a parsed {@code yarn-site.xml}, or a Hadoop {@code Configuration}'s get
   */
  public static Optional<URI> from(Function<String, String> conf) {
    String port = conf.apply(PORT_KEY);
    if (port == null || port.isBlank() || Integer.parseInt(port.trim()) <= 0) {
      return Optional.empty();
    }
    String host = Optional.ofNullable(conf.apply(BIND_KEY)).map(String::trim).orElse("0.0.0.0");
    if (host.equals("0.0.0.0")) {
      host = rmHost(conf);
    }
    return Optional.of(URI.create("http://" + host + ":" + port.trim() + "/"));
  }

  private static String rmHost(Function<String, String> conf) {
    String address = conf.apply("yarn.resourcemanager.address");
    String host = address != null && address.contains(":") && !address.contains("${")
        ? address.substring(0, address.lastIndexOf(':'))
        : Optional.ofNullable(conf.apply("yarn.resourcemanager.hostname")).orElse("localhost");
    return host.equals("0.0.0.0") ? "localhost" : host; // Hadoop's default: the RM on every interface of this host
  }
}
