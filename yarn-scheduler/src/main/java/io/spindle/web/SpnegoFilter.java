package io.spindle.web;

import com.sun.net.httpserver.Filter;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpPrincipal;
import java.io.IOException;
import java.util.Base64;
import java.util.Optional;
import org.apache.hadoop.security.authentication.server.AuthenticationToken;
import org.ietf.jgss.GSSException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * SPNEGO (HTTP Negotiate, RFC 4559) in front of every path of Spindle's HTTP server, as Hadoop's web UIs do with
 * {@code hadoop.http.authentication.type=kerberos}: a request passes with a valid {@code hadoop.auth} cookie or a
 * Kerberos token the server accepts, and goes on as an {@link AuthenticatedExchange} naming the user. Everything
 * else is answered here: 401 with {@code WWW-Authenticate: Negotiate} (no or a refused token), 403 (a principal no
 * {@code auth_to_local} rule maps), each with {@code {"error"}}.
 *
 * <p>Why not hadoop-auth's {@code AuthenticationFilter} with its {@code KerberosAuthenticationHandler}: both are
 * servlet API, and this server is the JDK's; adapting one to the other would be more code than the GSS exchange
 * ({@link SpnegoAcceptor}). The cookie ({@link AuthCookie}) and the short-name mapping are hadoop-auth's own.
 */
final class SpnegoFilter extends Filter {

  static final String NEGOTIATE = "Negotiate";
  private static final Logger LOG = LoggerFactory.getLogger(SpnegoFilter.class);

  private final SpnegoAcceptor acceptor;
  private final AuthCookie cookie;

  SpnegoFilter(SpnegoAcceptor acceptor, AuthCookie cookie) {
    this.acceptor = acceptor;
    this.cookie = cookie;
  }

  @Override
  public String description() {
    return "SPNEGO authentication as " + acceptor.principal();
  }

  @Override
  public void doFilter(HttpExchange exchange, Chain chain) throws IOException {
    Optional<AuthenticationToken> token = cookie.verify(exchange.getRequestHeaders());
    if (token.isPresent()) {
      chain.doFilter(new AuthenticatedExchange(exchange, principal(token.get().getUserName(),
          token.get().getName())));
      return;
    }
    String authorization = exchange.getRequestHeaders().getFirst("Authorization");
    if (authorization == null || !authorization.regionMatches(true, 0, NEGOTIATE + " ", 0, NEGOTIATE.length() + 1)) {
      refuse(exchange, 401, null, "this server needs Kerberos (SPNEGO) authentication: kinit, then use"
          + " scripts/spindle, `curl --negotiate -u :`, or a browser set up for Negotiate");
      return;
    }
    SpnegoAcceptor.Outcome outcome;
    try {
      outcome = acceptor.accept(Base64.getDecoder().decode(authorization.substring(NEGOTIATE.length() + 1).trim()));
    } catch (IllegalArgumentException e) {
      refuse(exchange, 401, null, "the Negotiate token is not base64");
      return;
    } catch (GSSException e) {
      LOG.info("SPNEGO: refused a token from {}: {}", exchange.getRemoteAddress(), e.getMessage());
      refuse(exchange, 401, null, "the Negotiate token was refused (" + e.getMessage() + "); the client needs a"
          + " Kerberos ticket for " + acceptor.principal());
      return;
    }
    if (outcome.clientPrincipal().isEmpty()) {
      // Not established after one token: this server keeps no half-done contexts, as Hadoop's handler keeps none.
      refuse(exchange, 401, outcome.replyToken(), "SPNEGO did not complete in one round; use Kerberos");
      return;
    }
    String clientPrincipal = outcome.clientPrincipal().get();
    String user;
    try {
      user = SpnegoAcceptor.shortName(clientPrincipal);
    } catch (IOException e) {
      LOG.warn("SPNEGO: principal {} maps to no user: {}", clientPrincipal, e.getMessage());
      refuse(exchange, 403, null, "principal " + clientPrincipal + " maps to no user under"
          + " hadoop.security.auth_to_local (" + e.getMessage() + ")");
      return;
    }
    if (outcome.replyToken() != null) {
      // Mutual authentication: hadoop-auth's client insists on the server's answer.
      exchange.getResponseHeaders().set("WWW-Authenticate", NEGOTIATE + " "
          + Base64.getEncoder().encodeToString(outcome.replyToken()));
    }
    exchange.getResponseHeaders().add("Set-Cookie", cookie.issue(user, clientPrincipal));
    chain.doFilter(new AuthenticatedExchange(exchange, principal(user, clientPrincipal)));
  }

  private static HttpPrincipal principal(String user, String kerberosPrincipal) {
    int at = kerberosPrincipal.lastIndexOf('@');
    return new HttpPrincipal(user, at < 0 ? "" : kerberosPrincipal.substring(at + 1));
  }

  private static void refuse(HttpExchange exchange, int status, byte[] replyToken, String message)
      throws IOException {
    try (exchange) {
      if (status == 401) {
        exchange.getResponseHeaders().set("WWW-Authenticate", replyToken == null ? NEGOTIATE
            : NEGOTIATE + " " + Base64.getEncoder().encodeToString(replyToken));
      }
      HttpExchanges.sendError(exchange, status, message);
    }
  }
}
