package io.spindle.client;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;

/**
 * An application's ZooKeeper identity in the checkpoint protocol: digest user {@code <appId>}, with a password both
 * the application and the ResourceManager can compute from a secret only they share — the password of the
 * application attempt's AMRMToken.
 *
 * <p>The ZooKeeper password is not the token password itself but {@code base64url(HMAC-SHA256(tokenPassword,
 * "spindle-checkpoint/" + appId))}: digest credentials cross the ZooKeeper connection in clear unless it uses TLS, and
 * what an eavesdropper learns must not let it call the ResourceManager as the application.
 *
 * <p>Both sides use this class: the client to authenticate, the scheduler to put {@link #aclId()} in the ACLs.
 */
public final class CheckpointCredentials {

  public static final String SCHEME = "digest";
  private static final String LABEL = "spindle-checkpoint/";

  private final String appId;
  private final String password;

  private CheckpointCredentials(String appId, String password) {
    this.appId = appId;
    this.password = password;
  }

  /** Derives the credentials of {@code appId} from its shared secret (the AMRMToken password). */
  public static CheckpointCredentials of(String appId, byte[] secret) {
    CheckpointPaths.checkAppId(appId);
    if (secret == null || secret.length == 0) {
      throw new IllegalArgumentException("the secret of " + appId + " is empty");
    }
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(secret, "HmacSHA256"));
      byte[] derived = mac.doFinal((LABEL + appId).getBytes(StandardCharsets.UTF_8));
      return new CheckpointCredentials(appId, Base64.getUrlEncoder().withoutPadding().encodeToString(derived));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is part of every JDK: " + e.getMessage(), e);
    }
  }

  public String appId() {
    return appId;
  }

  /** What {@code ZooKeeper.addAuthInfo("digest", ...)} takes: {@code <appId>:<password>}. */
  public byte[] authBytes() {
    return (appId + ":" + password).getBytes(StandardCharsets.UTF_8);
  }

  /** The id ZooKeeper gives a session that authenticated with {@link #authBytes()}, for ACLs. */
  public Id aclId() {
    return new Id(SCHEME, digest(appId + ":" + password));
  }

  /** ZooKeeper's digest of {@code user:password}: {@code user:base64(sha1(user:password))}. */
  public static String digest(String userAndPassword) {
    try {
      return DigestAuthenticationProvider.generateDigest(userAndPassword);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-1 is part of every JDK: " + e.getMessage(), e);
    }
  }

  /** Whether {@code id} is a digest identity of {@code appId} (of any of its secrets, current or past). */
  public static boolean isIdentityOf(Id id, String appId) {
    return SCHEME.equals(id.getScheme()) && id.getId().startsWith(appId + ":");
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof CheckpointCredentials c && c.appId.equals(appId) && c.password.equals(password);
  }

  @Override
  public int hashCode() {
    return appId.hashCode() * 31 + password.hashCode();
  }

  /** Never prints the password. */
  @Override
  public String toString() {
    return "CheckpointCredentials[" + appId + "]";
  }
}
