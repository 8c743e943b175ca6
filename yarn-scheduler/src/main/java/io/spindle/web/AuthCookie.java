package io.spindle.web;

import com.sun.net.httpserver.Headers;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import org.apache.hadoop.security.authentication.client.AuthenticatedURL;
import org.apache.hadoop.security.authentication.client.AuthenticationException;
import org.apache.hadoop.security.authentication.server.AuthenticationToken;
import org.apache.hadoop.security.authentication.util.RandomSignerSecretProvider;
import org.apache.hadoop.security.authentication.util.Signer;
import org.apache.hadoop.security.authentication.util.SignerException;

/**
 * The {@code hadoop.auth} cookie that Hadoop's {@code AuthenticationFilter} hands out after a successful SPNEGO
 * exchange, in the same format and signed the same way (hadoop-auth's {@link Signer}). It spares browsers (the GPU map
 * polls the API every few seconds) and {@code curl --negotiate -b/-c} a Kerberos exchange per request.
 *
 * <p>The signing secret is random, kept in memory and rolled over every token validity, so a cookie is good on this
 * ResourceManager process only; elsewhere or after a restart the client is simply asked to negotiate again.
 */
final class AuthCookie implements AutoCloseable {

  static final String NAME = AuthenticatedURL.AUTH_COOKIE;
  /** The type Hadoop's Kerberos handler gives its tokens; hadoop-auth's client checks for it. */
  static final String TYPE = "kerberos";

  private final RandomSignerSecretProvider secrets = new RandomSignerSecretProvider();
  private final Signer signer;
  private final long validityMillis;

  AuthCookie(long validityMillis) {
    this.validityMillis = validityMillis;
    try {
      // Takes no servlet context: none is used by the random provider.
      secrets.init(new Properties(), null, validityMillis);
    } catch (Exception e) {
      throw new IllegalStateException("cannot start the signer of " + NAME + " cookies: " + e.getMessage(), e);
    }
    this.signer = new Signer(secrets);
  }

  /** A {@code Set-Cookie} value naming {@code user} until the validity ends. */
  String issue(String user, String principal) {
    AuthenticationToken token = new AuthenticationToken(user, principal, TYPE);
    token.setExpires(System.currentTimeMillis() + validityMillis);
    // Quoted as Hadoop does: the value holds '=' and '&'. No Expires: the token inside carries its own.
    return NAME + "=\"" + signer.sign(token.toString()) + "\"; Path=/; HttpOnly";
  }

  /** The token of a {@code hadoop.auth} cookie this server signed and that has not expired, if the request has one. */
  Optional<AuthenticationToken> verify(Headers requestHeaders) {
    List<String> cookies = requestHeaders.get("Cookie");
    if (cookies == null) {
      return Optional.empty();
    }
    for (String header : cookies) {
      for (String cookie : header.split(";")) {
        String c = cookie.trim();
        if (c.startsWith(NAME + "=")) {
          Optional<AuthenticationToken> token = valid(unquote(c.substring(NAME.length() + 1)));
          if (token.isPresent()) {
            return token;
          }
        }
      }
    }
    return Optional.empty();
  }

  private Optional<AuthenticationToken> valid(String signed) {
    try {
      AuthenticationToken token = AuthenticationToken.parse(signer.verifyAndExtract(signed));
      return !token.isExpired() && TYPE.equals(token.getType()) ? Optional.of(token) : Optional.empty();
    } catch (SignerException | AuthenticationException e) {
      // Another process's, a restarted RM's, or forged: not proof of anything, so the client negotiates again.
      return Optional.empty();
    }
  }

  private static String unquote(String value) {
    return value.length() >= 2 && value.startsWith("\"") && value.endsWith("\"")
        ? value.substring(1, value.length() - 1) : value;
  }

  @Override
  public void close() {
    secrets.destroy();
  }
}
