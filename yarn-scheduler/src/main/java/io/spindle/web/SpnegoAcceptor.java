package io.spindle.web;

import java.io.IOException;
import java.security.PrivilegedExceptionAction;
import java.util.Optional;
import org.apache.hadoop.security.HadoopKerberosName;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.authentication.util.KerberosUtil;
import org.ietf.jgss.GSSContext;
import org.ietf.jgss.GSSCredential;
import org.ietf.jgss.GSSException;
import org.ietf.jgss.GSSManager;
import org.ietf.jgss.Oid;

/**
 * The Kerberos side of SPNEGO: accepts a client's token with the server principal's key, as Hadoop's
 * {@code KerberosAuthenticationHandler} does, through the JDK's GSS-API. The key comes from the keytab
 * {@link UserGroupInformation} logged in from, so the acceptor runs inside that login's Subject.
 */
final class SpnegoAcceptor {

  /** What one accepted token gave: the client's principal once the context is established, and any reply token. */
  record Outcome(Optional<String> clientPrincipal, byte[] replyToken) {}

  private final UserGroupInformation server;
  private final String principal;

  /**
   * @param principal the server principal, {@code _HOST} already replaced
   * @param keytab a keytab holding its key
   * @throws IOException if the keytab does not log in as the principal
   */
  SpnegoAcceptor(String principal, String keytab) throws IOException {
    this.principal = principal;
    this.server = UserGroupInformation.loginUserFromKeytabAndReturnUGI(principal, keytab);
  }

  String principal() {
    return principal;
  }

  /** @throws GSSException if the token is not one this server can accept (garbage, another service's, expired) */
  Outcome accept(byte[] token) throws GSSException {
    // UserGroupInformation.doAs passes IOExceptions through as they are and wraps any other checked exception.
    PrivilegedExceptionAction<Outcome> asServer = () -> {
      try {
        return acceptAsServer(token);
      } catch (GSSException e) {
        throw new IOException(e);
      }
    };
    try {
      return server.doAs(asServer);
    } catch (IOException e) {
      if (e.getCause() instanceof GSSException gss) {
        throw gss;
      }
      throw new GSSException(GSSException.FAILURE, -1, String.valueOf(e.getMessage()));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new GSSException(GSSException.FAILURE, -1, "interrupted");
    }
  }

  private Outcome acceptAsServer(byte[] token) throws GSSException {
    GSSManager gss = GSSManager.getInstance();
    // Both mechanisms: browsers and curl wrap Kerberos in SPNEGO, hadoop-auth's KerberosAuthenticator sends it bare.
    GSSCredential credential = gss.createCredential(gss.createName(principal, KerberosUtil.NT_GSS_KRB5_PRINCIPAL_OID),
        GSSCredential.INDEFINITE_LIFETIME, new Oid[] {KerberosUtil.GSS_SPNEGO_MECH_OID, KerberosUtil.GSS_KRB5_MECH_OID},
        GSSCredential.ACCEPT_ONLY);
    GSSContext context = gss.createContext(credential);
    try {
      byte[] reply = context.acceptSecContext(token, 0, token.length);
      return new Outcome(context.isEstablished() ? Optional.of(context.getSrcName().toString()) : Optional.empty(),
          reply);
    } finally {
      context.dispose();
      credential.dispose();
    }
  }

  /**
   * The local user a principal is, by Hadoop's {@code hadoop.security.auth_to_local} rules (as UserGroupInformation
   * set them from the RM's configuration).
   *
   * @throws IOException if no rule maps it
   */
  static String shortName(String clientPrincipal) throws IOException {
    return new HadoopKerberosName(clientPrincipal).getShortName();
  }
}
