package io.spindle.web;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpPrincipal;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Who sent a request, the way Hadoop's own web UIs tell it. With {@code hadoop.security.authentication=simple} that
 * is the {@code user.name} query parameter (Hadoop's pseudo authentication: it identifies, it does not prove). With
 * Kerberos it is the short name of the principal that {@link SpnegoFilter} authenticated, after Hadoop's
 * {@code auth_to_local} rules; {@code user.name} is then ignored, so nobody can name someone else.
 */
public final class RequestUser {

  public static final String PARAMETER = "user.name";
  /** What Hadoop accepts as a short user name; anything else is refused, never looked up. */
  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9._@-]{0,127}");

  private final boolean pseudo;

  private RequestUser(boolean pseudo) {
    this.pseudo = pseudo;
  }

  /** Hadoop's pseudo authentication: the caller names itself with {@value #PARAMETER}. */
  public static RequestUser pseudo() {
    return new RequestUser(true);
  }

  /** The user an authentication filter proved, as {@link HttpExchange#getPrincipal()}. */
  public static RequestUser authenticated() {
    return new RequestUser(false);
  }

  public Optional<String> of(HttpExchange exchange) {
    if (!pseudo) {
      return Optional.ofNullable(exchange.getPrincipal()).map(HttpPrincipal::getUsername);
    }
    String name = HttpExchanges.query(exchange).get(PARAMETER);
    return name != null && NAME.matcher(name).matches() ? Optional.of(name) : Optional.empty();
  }

  public String howToAuthenticate() {
    return pseudo ? "say who you are: add ?" + PARAMETER + "=<user> (Hadoop's simple authentication)"
        : "this cluster uses Kerberos: authenticate with SPNEGO (kinit, then scripts/spindle, or curl --negotiate"
            + " -u :)";
  }
}
