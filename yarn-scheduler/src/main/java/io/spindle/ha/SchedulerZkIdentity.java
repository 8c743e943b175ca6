package io.spindle.ha;

import io.spindle.client.CheckpointCredentials;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.curator.framework.AuthInfo;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.SecurityUtil;
import org.apache.hadoop.util.ZKUtil;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Who the ResourceManager is to ZooKeeper in the checkpoint protocol: the id its ACLs grant everything to, and the
 * credentials its session presents to be that id.
 *
 * @param aclId the id in ACLs, e.g. {@code digest:spindle-rm:<hash>} or {@code sasl:rm}
 * @param auth what the session authenticates with ({@code addAuthInfo}); empty for SASL, which the JVM's JAAS
 *     configuration does
 * @param generated true when made up at start because nothing was configured
 */
public record SchedulerZkIdentity(Id aclId, List<AuthInfo> auth, boolean generated) {

  private static final Logger LOG = LoggerFactory.getLogger(SchedulerZkIdentity.class);

  /**
   * The ResourceManager's ZooKeeper credentials for Spindle's znodes, in {@code hadoop.zk.auth}'s format:
   * {@code digest:<user>:<password>} or {@code sasl:<principal>}, or {@code @/path/to/file} holding that. Empty: use
   * {@code hadoop.zk.auth}; with neither, a digest password made up at start.
   */
  public static final String ZK_AUTH = "yarn.scheduler.spindle.zk.auth";
  public static final String DEFAULT_ZK_AUTH = "";
  static final String HADOOP_ZK_AUTH = "hadoop.zk.auth";
  static final String GENERATED_USER = "spindle-rm";

  public SchedulerZkIdentity {
    auth = List.copyOf(auth);
  }

  /**
   * The ACL of what only the leading scheduler writes (leader epoch, scheduler state, desired MIG layouts): all
   * rights to this identity, reading to everyone. A made-up identity dies with its process, and a standby could not
   * take its znodes over, so then they stay open (the scheduler logs a warning).
   */
  public List<ACL> schedulerOnlyAcl() {
    // Not List.of: ZooKeeper checks an ACL list for nulls with contains(null), which List.of answers with an NPE.
    return generated ? ZooDefs.Ids.OPEN_ACL_UNSAFE : Collections.unmodifiableList(new ArrayList<>(List.of(
        new ACL(ZooDefs.Perms.ALL, aclId), new ACL(ZooDefs.Perms.READ, ZooDefs.Ids.ANYONE_ID_UNSAFE))));
  }

  public static SchedulerZkIdentity digest(String user, String password) {
    String userAndPassword = user + ":" + password;
    return new SchedulerZkIdentity(new Id("digest", CheckpointCredentials.digest(userAndPassword)),
        List.of(new AuthInfo("digest", userAndPassword.getBytes(StandardCharsets.UTF_8))), false);
  }

  /** A Kerberos identity: the session authenticates through JAAS ({@code Client} section), not through this. */
  public static SchedulerZkIdentity sasl(String principal) {
    return new SchedulerZkIdentity(new Id("sasl", principal), List.of(), false);
  }

  /**
   * A digest identity with a random password. Works for one ResourceManager process only: after a restart or a
   * failover the new process cannot rewrite the ACLs of applications that were running, so configure {@link #ZK_AUTH}
   * for production.
   */
  public static SchedulerZkIdentity random() {
    byte[] password = new byte[24];
    new SecureRandom().nextBytes(password);
    SchedulerZkIdentity id = digest(GENERATED_USER, Base64.getUrlEncoder().withoutPadding().encodeToString(password));
    return new SchedulerZkIdentity(id.aclId(), id.auth(), true);
  }

  public static SchedulerZkIdentity from(Configuration conf) throws IOException {
    for (String key : List.of(ZK_AUTH, HADOOP_ZK_AUTH)) {
      if (conf.getTrimmed(key, "").isEmpty()) {
        continue;
      }
      List<ZKUtil.ZKAuthInfo> infos = SecurityUtil.getZKAuthInfos(conf, key);
      for (ZKUtil.ZKAuthInfo info : infos) {
        String value = new String(info.getAuth(), StandardCharsets.UTF_8);
        if (info.getScheme().equals("digest") && value.indexOf(':') > 0) {
          int colon = value.indexOf(':');
          return digest(value.substring(0, colon), value.substring(colon + 1));
        }
        if (info.getScheme().equals("sasl") && !value.isBlank()) {
          return sasl(value);
        }
      }
      throw new IOException(key + " names no digest:<user>:<password> or sasl:<principal> identity");
    }
    LOG.warn("Neither {} nor {} is set: the checkpoint znodes are protected with a password made up for this "
        + "ResourceManager process, and a restarted or standby ResourceManager cannot take them over", ZK_AUTH,
        HADOOP_ZK_AUTH);
    return random();
  }

  /** Never prints the password. */
  @Override
  public String toString() {
    return "SchedulerZkIdentity[" + aclId.getScheme() + ":" + aclId.getId().replaceAll(":.*", "")
        + (generated ? ", generated" : "") + "]";
  }
}
