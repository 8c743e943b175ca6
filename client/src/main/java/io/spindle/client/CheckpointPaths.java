package io.spindle.client;

import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The znodes of the checkpoint-notice protocol under Spindle's root:
 *
 * <pre>
 * &lt;root&gt;/apps/&lt;appId&gt;/notices/&lt;noticeId&gt;   CheckpointNotice, written by the ResourceManager
 * &lt;root&gt;/apps/&lt;appId&gt;/acks/&lt;noticeId&gt;      CheckpointAck, written by the application
 * &lt;root&gt;/apps/&lt;appId&gt;/report                CheckpointReport, written by the application
 * &lt;root&gt;/schemas/&lt;fingerprint&gt;             the Avro schemas records were written with
 * </pre>
 *
 * Shared by the client and the scheduler so both sides build the same paths.
 */
public record CheckpointPaths(String root) {

  public static final String APPS = "apps";
  public static final String NOTICES = "notices";
  public static final String ACKS = "acks";
  public static final String REPORT = "report";
  public static final String SCHEMAS = "schemas";

  /**
   * What an application id may look like. YARN's are {@code application_<clusterTimestamp>_<sequence>}; the rule is
   * looser, but it keeps ids usable as one znode name and as a ZooKeeper digest user (no {@code /} or {@code :}).
   */
  private static final Pattern APP_ID = Pattern.compile("[A-Za-z0-9_.-]{1,128}");

  public CheckpointPaths {
    if (root == null || !root.startsWith("/") || (root.length() > 1 && root.endsWith("/"))) {
      throw new IllegalArgumentException("root must be an absolute znode path without a trailing '/', not '"
          + root + "'");
    }
  }

  /** Checks an application id; returns it. */
  public static String checkAppId(String appId) {
    if (appId == null || !APP_ID.matcher(appId).matches() || appId.equals(".") || appId.equals("..")) {
      throw new IllegalArgumentException("application id must be 1..128 letters, digits, '_', '.' or '-', not '"
          + appId + "'");
    }
    return appId;
  }

  public String apps() {
    return base() + APPS;
  }

  public String app(String appId) {
    return apps() + "/" + checkAppId(appId);
  }

  public String notices(String appId) {
    return app(appId) + "/" + NOTICES;
  }

  public String notice(String appId, long noticeId) {
    return notices(appId) + "/" + checkNoticeId(noticeId);
  }

  public String acks(String appId) {
    return app(appId) + "/" + ACKS;
  }

  public String ack(String appId, long noticeId) {
    return acks(appId) + "/" + checkNoticeId(noticeId);
  }

  public String report(String appId) {
    return app(appId) + "/" + REPORT;
  }

  public String schemas() {
    return base() + SCHEMAS;
  }

  public String schema(long fingerprint) {
    return schemas() + "/" + String.format("%016x", fingerprint);
  }

  /** What a znode under {@link #apps()} is; empty for the directories and anything unexpected. */
  public Optional<Znode> classify(String path) {
    String prefix = apps() + "/";
    if (path == null || !path.startsWith(prefix)) {
      return Optional.empty();
    }
    String[] parts = path.substring(prefix.length()).split("/", -1);
    try {
      String appId = checkAppId(parts[0]);
      if (parts.length == 2 && parts[1].equals(REPORT)) {
        return Optional.of(new Znode(Znode.Kind.REPORT, appId, -1));
      }
      if (parts.length == 3 && (parts[1].equals(NOTICES) || parts[1].equals(ACKS))) {
        long noticeId = checkNoticeId(Long.parseLong(parts[2]));
        if (!parts[2].equals(Long.toString(noticeId))) {
          return Optional.empty();
        }
        return Optional.of(new Znode(parts[1].equals(NOTICES) ? Znode.Kind.NOTICE : Znode.Kind.ACK, appId, noticeId));
      }
    } catch (IllegalArgumentException notOurs) {
      // NumberFormatException included: a name the protocol never creates.
    }
    return Optional.empty();
  }

  /** A protocol znode: which record it holds, for which application and (notice and ack) which notice. */
  public record Znode(Kind kind, String appId, long noticeId) {
    public enum Kind { NOTICE, ACK, REPORT }
  }

  private String base() {
    return root.equals("/") ? "/" : root + "/";
  }

  private static long checkNoticeId(long noticeId) {
    if (noticeId < 0) {
      throw new IllegalArgumentException("notice id must be >= 0, not " + noticeId);
    }
    return noticeId;
  }
}
