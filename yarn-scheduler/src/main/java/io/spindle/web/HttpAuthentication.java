package io.spindle.web;

import com.sun.net.httpserver.Filter;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CommonConfigurationKeysPublic;
import org.apache.hadoop.security.SecurityUtil;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.conf.YarnConfiguration;

/**
 * How Spindle's HTTP server learns who is asking. It follows {@code hadoop.security.authentication}: {@code simple}
 * is Hadoop's pseudo authentication ({@code ?user.name=}); {@code kerberos} puts SPNEGO in front of every path, with
 * the RM web UI's SPNEGO principal and keytab unless Spindle's own keys name others. There is deliberately no way to
 * serve pseudo authentication on a Kerberos cluster: anyone could then name an administrator.
 */
public final class HttpAuthentication implements AutoCloseable {

  public static final String PRINCIPAL = "yarn.scheduler.spindle.http.spnego.principal";
  public static final String KEYTAB = "yarn.scheduler.spindle.http.spnego.keytab";
  /** Hadoop's own key for how long a {@code hadoop.auth} cookie is good, in seconds; the RM's web UI reads it too. */
  public static final String TOKEN_VALIDITY = "hadoop.http.authentication.token.validity";
  public static final long DEFAULT_TOKEN_VALIDITY_SECONDS = 36_000;
  static final String HTTP_PRINCIPAL = "hadoop.http.authentication.kerberos.principal";
  static final String HTTP_KEYTAB = "hadoop.http.authentication.kerberos.keytab";

  private final RequestUser users;
  private final List<Filter> filters;
  private final AuthCookie cookie;

  private HttpAuthentication(RequestUser users, List<Filter> filters, AuthCookie cookie) {
    this.users = users;
    this.filters = filters;
    this.cookie = cookie;
  }

  /**
   * @param bindAddress the address the server binds, for {@code _HOST} in the principal
   * @throws IllegalArgumentException if Kerberos is on and a key is missing or wrong, naming the key
   * @throws IOException if the keytab does not log in
   */
  public static HttpAuthentication fromConfiguration(Configuration conf, String bindAddress) throws IOException {
    String method = conf.getTrimmed(CommonConfigurationKeysPublic.HADOOP_SECURITY_AUTHENTICATION, "simple");
    if (method.equalsIgnoreCase("simple")) {
      return new HttpAuthentication(RequestUser.pseudo(), List.of(new OptionsFilter()), null);
    }
    if (!method.equalsIgnoreCase("kerberos")) {
      throw new IllegalArgumentException(CommonConfigurationKeysPublic.HADOOP_SECURITY_AUTHENTICATION
          + " must be simple or kerberos, not " + method);
    }
    Setting principal = required(conf, "principal", PRINCIPAL, YarnConfiguration.RM_WEBAPP_SPNEGO_USER_NAME_KEY,
        HTTP_PRINCIPAL);
    Setting keytab = required(conf, "keytab", KEYTAB, YarnConfiguration.RM_WEBAPP_SPNEGO_KEYTAB_FILE_KEY,
        HTTP_KEYTAB);
    if (principal.value().equals("*")) {
      throw new IllegalArgumentException(principal.key() + " is *: Spindle's HTTP server takes one principal; name"
          + " it in " + PRINCIPAL);
    }
    if (!Files.isReadable(Path.of(keytab.value()))) {
      throw new IllegalArgumentException("the SPNEGO keytab " + keytab.value() + " (" + keytab.key() + ") is not a"
          + " readable file" + (keytab.key().equals(KEYTAB) ? "" : "; Spindle's own key is " + KEYTAB));
    }
    if (!UserGroupInformation.isSecurityEnabled()) {
      throw new IllegalStateException("Spindle's configuration says " + method + " but UserGroupInformation is not"
          + " set up for Kerberos; the ResourceManager's core-site.xml must set "
          + CommonConfigurationKeysPublic.HADOOP_SECURITY_AUTHENTICATION + "=kerberos");
    }
    String serverPrincipal = serverPrincipal(principal.value(), bindAddress);
    SpnegoAcceptor acceptor;
    try {
      acceptor = new SpnegoAcceptor(serverPrincipal, keytab.value());
    } catch (IOException e) {
      throw new IOException("Spindle's HTTP server cannot log in as " + serverPrincipal + " (" + principal.key()
          + ") from " + keytab.value() + " (" + keytab.key() + "): " + e.getMessage() + "; Spindle's own keys are "
          + PRINCIPAL + " and " + KEYTAB, e);
    }
    long validity = conf.getLong(TOKEN_VALIDITY, DEFAULT_TOKEN_VALIDITY_SECONDS);
    if (validity <= 0) {
      throw new IllegalArgumentException(TOKEN_VALIDITY + " must be > 0 seconds, not " + validity);
    }
    AuthCookie cookie = new AuthCookie(validity * 1000);
    // SPNEGO first: OPTIONS, like every other method, is answered only to an authenticated caller.
    return new HttpAuthentication(RequestUser.authenticated(),
        List.of(new SpnegoFilter(acceptor, cookie), new OptionsFilter()), cookie);
  }

  public RequestUser users() {
    return users;
  }

  /** To put in front of every handler, in this order. */
  public List<Filter> filters() {
    return filters;
  }

  @Override
  public void close() {
    if (cookie != null) {
      cookie.close();
    }
  }

  private record Setting(String key, String value) {}

  /** The first of {@code keys} that is set: Spindle's own, then the RM web UI's, then Hadoop's HTTP default. */
  private static Setting required(Configuration conf, String what, String... keys) {
    Optional<Setting> found = Stream.of(keys).map(k -> new Setting(k, conf.getTrimmed(k, "")))
        .filter(s -> !s.value().isEmpty()).findFirst();
    return found.orElseThrow(() -> new IllegalArgumentException("hadoop.security.authentication is kerberos, so"
        + " Spindle's HTTP server needs a SPNEGO " + what + ": set " + keys[0] + " (or " + keys[1] + ", or "
        + keys[2] + ")"));
  }

  /** {@code _HOST} becomes the bind address's host name, or this host's name when the server binds every address. */
  private static String serverPrincipal(String configured, String bindAddress) throws IOException {
    InetAddress address = InetAddress.getByName(bindAddress);
    return address.isAnyLocalAddress() ? SecurityUtil.getServerPrincipal(configured, "0.0.0.0")
        : SecurityUtil.getServerPrincipal(configured, address);
  }
}
