package io.spindle.client;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.function.Supplier;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;

/**
 * Reads the secret the checkpoint protocol authenticates with — the password of the application attempt's AMRMToken
 * — from the ApplicationMaster's Hadoop credentials. The only class of this library that needs hadoop-common, which
 * every ApplicationMaster has.
 */
public final class AmRmTokenSecret {

  /** Hadoop's {@code AMRMTokenIdentifier.KIND_NAME}, spelled out so the library needs no YARN jar. */
  public static final String KIND = "YARN_AM_RM_TOKEN";

  private AmRmTokenSecret() {}

  /**
   * The AMRMToken password of the current user, read anew on every call: YARN's AMRMClient puts the rolled token
   * there when the ResourceManager replaces it, so a client given this supplier follows the roll.
   *
   * @throws IllegalStateException from {@code get()} when the current user holds no AMRMToken (not an AM)
   */
  public static Supplier<byte[]> currentUser() {
    return () -> {
      try {
        return of(UserGroupInformation.getCurrentUser());
      } catch (IOException e) {
        throw new UncheckedIOException("cannot read the current user's credentials", e);
      }
    };
  }

  /** The AMRMToken password {@code ugi} holds. */
  public static byte[] of(UserGroupInformation ugi) {
    for (Token<?> token : ugi.getTokens()) {
      if (KIND.equals(token.getKind().toString())) {
        return token.getPassword();
      }
    }
    throw new IllegalStateException(ugi.getUserName() + " holds no " + KIND + " token: not an ApplicationMaster?");
  }
}
