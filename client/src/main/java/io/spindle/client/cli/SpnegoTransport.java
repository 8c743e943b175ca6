package io.spindle.client.cli;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.security.PrivilegedExceptionAction;
import java.time.Duration;
import java.util.Base64;
import java.util.Optional;
import javax.security.auth.Subject;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.authentication.util.KerberosUtil;
import org.apache.hadoop.security.authentication.util.SubjectUtil;
import org.ietf.jgss.GSSContext;
import org.ietf.jgss.GSSException;
import org.ietf.jgss.GSSManager;
import org.ietf.jgss.GSSName;

/**
 * The status API with Kerberos: each request carries {@code Authorization: Negotiate} (SPNEGO, RFC 4559) for
 * {@code HTTP/<host>}, made with the JDK's GSS-API from the caller's Kerberos login: the Subject it runs in (a
 * {@code UserGroupInformation.doAs}) or else UserGroupInformation's login user, i.e. the ticket cache ({@code kinit},
 * {@code KRB5CCNAME}). The server's answer token is checked too, so a reply comes from the holder of that principal.
 *
 * <p>Not hadoop-auth's {@code AuthenticatedURL}: after negotiating (with {@code OPTIONS}) it sends the real request
 * with the {@code hadoop.auth} cookie only, and its cookie handler looks for the header {@code Set-Cookie} in a
 * case-sensitive map, which never matches the {@code Set-cookie} the JDK's HTTP server writes. Its requests then go
 * through only if the JDK negotiates on its own, which it does inside a Subject but not from a ticket cache.
 */
final class SpnegoTransport implements ApiTransport {

  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
  private final Optional<Path> coreSite;

  /** @param coreSite the client's {@code core-site.xml} ({@code auth_to_local} and the like), if it has one */
  SpnegoTransport(Optional<Path> coreSite) {
    this.coreSite = coreSite;
  }

  @Override
  public Reply send(String method, URI uri) throws IOException, InterruptedException {
    Subject current = SubjectUtil.current();
    if (current != null && (KerberosUtil.hasKerberosTicket(current) || KerberosUtil.hasKerberosKeyTab(current))) {
      return negotiate(method, uri);
    }
    UserGroupInformation user;
    try {
      user = loginUser(coreSite);
    } catch (IllegalArgumentException e) {
      // UserGroupInformation's "Can't get Kerberos realm": this machine has no Kerberos configuration.
      throw new AuthenticationFailed("cannot use Kerberos (SPNEGO) for " + uri.getScheme() + "://"
          + uri.getAuthority() + ": Kerberos is not set up on this machine (" + e.getMessage()
          + (e.getCause() == null ? "" : ": " + e.getCause().getMessage()) + "): /etc/krb5.conf, or"
          + " -Djava.security.krb5.conf=... in SPINDLE_CLI_JAVA_OPTS", e);
    } catch (IOException e) {
      throw new AuthenticationFailed("cannot use Kerberos (SPNEGO) for " + uri.getScheme() + "://"
          + uri.getAuthority() + ": the Kerberos login failed (" + e.getMessage() + "); run kinit first", e);
    }
    return user.doAs((PrivilegedExceptionAction<Reply>) () -> negotiate(method, uri));
  }

  /** UserGroupInformation's user: from the ticket cache when Hadoop's configuration in this JVM did not say. */
  private static UserGroupInformation loginUser(Optional<Path> coreSite) throws IOException {
    if (!UserGroupInformation.isSecurityEnabled()) {
      // scripts/spindle's own JVM: its classpath has no core-site.xml, and it was told (or asked) to use Kerberos.
      Configuration conf = new Configuration();
      coreSite.ifPresent(site -> conf.addResource(new org.apache.hadoop.fs.Path(site.toUri())));
      conf.set("hadoop.security.authentication", "kerberos");
      UserGroupInformation.setConfiguration(conf);
    }
    return UserGroupInformation.getCurrentUser();
  }

  private Reply negotiate(String method, URI uri) throws IOException, InterruptedException {
    GSSContext context = null;
    try {
      GSSManager gss = GSSManager.getInstance();
      String server = KerberosUtil.getServicePrincipal("HTTP", uri.getHost());
      GSSName serverName = gss.createName(server, KerberosUtil.NT_GSS_KRB5_PRINCIPAL_OID);
      context = gss.createContext(serverName, KerberosUtil.GSS_SPNEGO_MECH_OID, null, GSSContext.DEFAULT_LIFETIME);
      context.requestMutualAuth(true);
      byte[] token = context.initSecContext(new byte[0], 0, 0);
      HttpRequest request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30))
          .header("Authorization", "Negotiate " + Base64.getEncoder().encodeToString(token))
          .method(method, HttpRequest.BodyPublishers.noBody()).build();
      HttpResponse<String> r = http.send(request, HttpResponse.BodyHandlers.ofString());
      Optional<String> answer = r.headers().firstValue("WWW-Authenticate");
      if (r.statusCode() != 401) {
        verifyServer(context, answer, server, uri);
      }
      return new Reply(r.statusCode(), r.body(), answer.orElse(null));
    } catch (GSSException e) {
      throw new AuthenticationFailed("Kerberos (SPNEGO) authentication with " + uri.getScheme() + "://"
          + uri.getAuthority() + " failed: " + e.getMessage() + ". Run kinit first; the server needs the principal"
          + " HTTP/" + uri.getHost() + " in its keytab", e);
    } finally {
      if (context != null) {
        dispose(context);
      }
    }
  }

  /** Mutual authentication: an answer the server's key did not make is not believed. */
  private static void verifyServer(GSSContext context, Optional<String> answer, String server, URI uri)
      throws GSSException, IOException {
    if (answer.isPresent() && answer.get().startsWith("Negotiate ")) {
      byte[] token;
      try {
        token = Base64.getDecoder().decode(answer.get().substring("Negotiate ".length()).trim());
      } catch (IllegalArgumentException e) {
        throw new AuthenticationFailed(uri + " answered with a Negotiate token that is not base64", e);
      }
      context.initSecContext(token, 0, token.length);
    }
    if (!context.isEstablished()) {
      throw new AuthenticationFailed(uri.getScheme() + "://" + uri.getAuthority() + " answered without proving that"
          + " it is " + server + " (no Negotiate answer); not believing it", null);
    }
  }

  private static void dispose(GSSContext context) {
    try {
      context.dispose();
    } catch (GSSException e) {
      // Nothing held that outlives this JVM's next request.
    }
  }
}
