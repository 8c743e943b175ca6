package io.spindle.web;

import com.sun.net.httpserver.HttpExchange;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Who sent a request, the way Hadoop's own web UIs tell it. With {@code hadoop.security.authentication=simple}
 * that is the {@code user.name} query parameter (Hadoop's pseudo authentication: it identifies, it does not prove).
 * With Kerberos the server would need SPNEGO, which it does not speak, so it knows nobody and admin operations are
 * refused; the read-only views stay open, as the RM's web UI's are.
 */
public final class RequestUser {

  public static final String PARAMETER = "user.name";
  /** What Hadoop accepts as a short user name; anything else is refused, never looked up. */
  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9._@-]{0,127}");

  private final boolean pseudo;

  private RequestUser(boolean pseudo) {
    this.pseudo = pseudo;
  }

  /** @param authentication the value of {@code hadoop.security.authentication} */
  public static RequestUser forAuthentication(String authentication) {
    return new RequestUser(authentication == null || "simple".equalsIgnoreCase(authentication.trim()));
  }

  public Optional<String> of(HttpExchange exchange) {
    if (!pseudo) {
      return Optional.empty();
    }
    String name = HttpExchanges.query(exchange).get(PARAMETER);
    return name != null && NAME.matcher(name).matches() ? Optional.of(name) : Optional.empty();
  }

  public String howToAuthenticate() {
    return pseudo ? "say who you are: add ?" + PARAMETER + "=<user> (Hadoop's simple authentication)"
        : "this cluster uses Kerberos and Spindle's HTTP server does not accept SPNEGO: run admin operations with"
            + " `yarn rmadmin` instead";
  }
}
