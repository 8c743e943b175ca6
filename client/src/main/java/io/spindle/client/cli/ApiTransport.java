package io.spindle.client.cli;

import java.io.IOException;
import java.net.URI;

/** How {@code scripts/spindle} sends one request to the status API: plain HTTP, or with Kerberos (SPNEGO). */
interface ApiTransport {

  /** The answer: status, body (an error's too) and the server's {@code WWW-Authenticate}, if any. */
  record Reply(int status, String body, String wwwAuthenticate) {

    /** A 401 that asks for Kerberos: the server runs with {@code hadoop.security.authentication=kerberos}. */
    boolean asksForNegotiate() {
      return status == 401 && wwwAuthenticate != null && wwwAuthenticate.trim().startsWith("Negotiate");
    }
  }

  Reply send(String method, URI uri) throws IOException, InterruptedException;

  /** The server was reached but the client could not authenticate; the message says what to do. */
  final class AuthenticationFailed extends IOException {
    private static final long serialVersionUID = 1L;

    AuthenticationFailed(String message, Throwable cause) {
      super(message, cause);
    }
  }
}
