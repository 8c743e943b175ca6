package io.spindle.yarn;

import io.spindle.core.engine.Elasticity;
import io.spindle.core.engine.PlacementSpec;
import java.time.Duration;
import java.util.Collection;
import java.util.Locale;

/**
 * Gang and topology wishes an application states through YARN application tags (Spark sets them with
 * {@code spark.yarn.tags}). Tags are {@code spindle.<name>=<value>}; YARN lower-cases them. An unknown
 * {@code spindle.} tag or a bad value is an error with a reason, never silently ignored.
 *
 * <ul>
 *   <li>{@code spindle.gang.size=N}: the application's worker containers (not its AM) start as one gang of N
 *   <li>{@code spindle.gang=executors}: the application's first worker request (not its AM), whatever its count,
 *       starts as one gang: for Spark, the initial {@code spark.executor.instances} executors
 *   <li>{@code spindle.topology.required=<level>} / {@code spindle.topology.preferred=<level>}: keep the gang within
 *       one {@code node}, {@code rack} or other topology level
 *   <li>{@code spindle.max-runtime=<duration>} ({@code 90s}, {@code 30m}, {@code 2h}, {@code 1d}): each container's
 *       declared run time, which lets it backfill nodes reserved for a gang
 *   <li>{@code spindle.gang.on-member-loss=restart|continue}: when a member is lost to the cluster (node lost,
 *       container expired unlaunched), stop the other members and start the gang again whole ({@code restart}, the
 *       default for {@code spindle.gang.size}), or leave the survivors running ({@code continue}, the default for
 *       {@code spindle.gang=executors}, whose driver replaces lost executors)
 *   <li>{@code spindle.gang.min=M} (with {@code spindle.gang.size=N} or {@code spindle.gang=executors}): the gang is
 *       elastic: it starts once M members fit, grows towards what it asks while GPUs are idle, and is shrunk back to
 *       M by resize notices before it can be preempted whole
 *   <li>{@code spindle.gang.step=S}: an elastic gang's members above M come and go S at a time (e.g. one node's
 *       GPUs); S must divide N - M
 *   <li>{@code spindle.gpu.models} and {@code spindle.gpu.isolation}: which GPUs serve its containers
 *       ({@link GpuTags})
 * </ul>
 */
public record SpindleTags(int gangSize, boolean gangOfFirstRequest, String topologyLevel, boolean topologyRequired,
    long maxRuntimeMillis, boolean restartOnMemberLoss, GpuTags gpu, Elasticity elasticity) {

  public static final String PREFIX = "spindle.";
  public static final String GANG_SIZE = "spindle.gang.size";
  public static final String GANG = "spindle.gang";
  /** {@link #GANG}'s one value: the executors an application first asks for (its first worker request) are the gang. */
  public static final String GANG_EXECUTORS = "executors";
  public static final String TOPOLOGY_REQUIRED = "spindle.topology.required";
  public static final String TOPOLOGY_PREFERRED = "spindle.topology.preferred";
  public static final String MAX_RUNTIME = "spindle.max-runtime";
  /** {@code restart} (the default for {@link #GANG_SIZE}) or {@code continue} (the default for executor gangs). */
  public static final String ON_MEMBER_LOSS = "spindle.gang.on-member-loss";
  /** An elastic gang's minimum. */
  public static final String GANG_MIN = "spindle.gang.min";
  /** An elastic gang's grow step. */
  public static final String GANG_STEP = "spindle.gang.step";

  public static final SpindleTags NONE = new SpindleTags(0, false, null, false, 0, true);

  public SpindleTags(int gangSize, boolean gangOfFirstRequest, String topologyLevel, boolean topologyRequired,
      long maxRuntimeMillis, boolean restartOnMemberLoss) {
    this(gangSize, gangOfFirstRequest, topologyLevel, topologyRequired, maxRuntimeMillis, restartOnMemberLoss,
        GpuTags.NONE);
  }

  public SpindleTags(int gangSize, boolean gangOfFirstRequest, String topologyLevel, boolean topologyRequired,
      long maxRuntimeMillis, boolean restartOnMemberLoss, GpuTags gpu) {
    this(gangSize, gangOfFirstRequest, topologyLevel, topologyRequired, maxRuntimeMillis, restartOnMemberLoss, gpu,
        Elasticity.RIGID);
  }

  public SpindleTags {
    gpu = gpu == null ? GpuTags.NONE : gpu;
    elasticity = elasticity == null ? Elasticity.RIGID : elasticity;
    if (gangSize > 0 && gangOfFirstRequest) {
      throw new IllegalArgumentException(GANG_SIZE + " and " + GANG + "=" + GANG_EXECUTORS
          + " both say how big the gang is; give one");
    }
  }

  /** A fixed gang size that restarts whole when it loses a member. */
  public SpindleTags(int gangSize, String topologyLevel, boolean topologyRequired, long maxRuntimeMillis) {
    this(gangSize, false, topologyLevel, topologyRequired, maxRuntimeMillis, true);
  }

  public static SpindleTags parse(Collection<String> tags) {
    int gang = 0;
    boolean firstRequest = false;
    String level = null;
    boolean required = false;
    long runtime = 0;
    Boolean restart = null;
    GpuTags gpu = GpuTags.NONE;
    String minTag = null;
    String stepTag = null;
    int min = 0;
    int step = 1;
    for (String raw : tags) {
      String tag = raw.strip().toLowerCase(Locale.ROOT);
      if (!tag.startsWith(PREFIX)) {
        continue;
      }
      int eq = tag.indexOf('=');
      if (eq < 0) {
        throw new IllegalArgumentException("application tag '" + raw + "' needs the form spindle.<name>=<value>");
      }
      String name = tag.substring(0, eq);
      String value = tag.substring(eq + 1).strip();
      switch (name) {
        case GANG_SIZE -> gang = parsePositive(raw, value);
        case GANG -> {
          if (!value.equals(GANG_EXECUTORS)) {
            throw new IllegalArgumentException("application tag '" + raw + "' has one value, " + GANG + "="
                + GANG_EXECUTORS + " (or give the size: " + GANG_SIZE + "=N)");
          }
          firstRequest = true;
        }
        case TOPOLOGY_REQUIRED, TOPOLOGY_PREFERRED -> {
          if (value.isEmpty()) {
            throw new IllegalArgumentException("application tag '" + raw + "' names no topology level");
          }
          level = value;
          required = name.equals(TOPOLOGY_REQUIRED);
        }
        case MAX_RUNTIME -> runtime = parseDuration(raw, value);
        case ON_MEMBER_LOSS -> {
          if (!value.equals("restart") && !value.equals("continue")) {
            throw new IllegalArgumentException("application tag '" + raw + "' is " + ON_MEMBER_LOSS
                + "=restart (stop the other members and start the gang again, whole) or =continue (the application"
                + " replaces lost members itself)");
          }
          restart = value.equals("restart");
        }
        case GANG_MIN -> {
          min = parsePositive(raw, value);
          minTag = raw;
        }
        case GANG_STEP -> {
          step = parsePositive(raw, value);
          stepTag = raw;
        }
        case GpuTags.MODELS -> gpu = gpu.withModels(raw, value);
        case GpuTags.ISOLATION -> gpu = gpu.withIsolation(raw, value);
        default -> throw new IllegalArgumentException("unknown Spindle application tag '" + raw + "'; known: "
            + GANG_SIZE + ", " + GANG + ", " + TOPOLOGY_REQUIRED + ", " + TOPOLOGY_PREFERRED + ", " + MAX_RUNTIME
            + ", " + ON_MEMBER_LOSS + ", " + GANG_MIN + ", " + GANG_STEP + ", " + GpuTags.MODELS + ", " + GpuTags.ISOLATION);
      }
    }
    Elasticity elasticity = elasticity(gang, firstRequest, minTag, min, stepTag, step);
    try {
      // Executors (Spark) are replaced one by one by their driver; a fixed-size gang (MPI, NCCL) cannot lose one.
      return new SpindleTags(gang, firstRequest, level, required, runtime, restart != null ? restart : !firstRequest,
          gpu, elasticity);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("application tags " + tags + ": " + e.getMessage(), e);
    }
  }

  /** Whether the application declares a gang, of a fixed size or of its first worker request. */
  public boolean gang() {
    return gangSize > 0 || gangOfFirstRequest;
  }

  /** How one worker request of this application is placed. */
  public PlacementSpec placement(boolean gang) {
    return new PlacementSpec(gang, topologyLevel, gang && topologyRequired, maxRuntimeMillis)
        .withRestartOnMemberLoss(gang && restartOnMemberLoss).withElasticity(gang ? elasticity : Elasticity.RIGID);
  }

  /** Whether the gang may run with fewer members than it asks for. */
  public boolean elastic() {
    return elasticity.elastic();
  }

  /** The elastic tags, checked against the gang they shape; bad ones are refused with the tag and its value. */
  private static Elasticity elasticity(int gangSize, boolean firstRequest, String minTag, int min, String stepTag,
      int step) {
    if (minTag == null) {
      if (stepTag != null) {
        throw new IllegalArgumentException("application tag '" + stepTag + "' needs " + GANG_MIN
            + "=M: only an elastic gang grows in steps");
      }
      return Elasticity.RIGID;
    }
    if (gangSize == 0 && !firstRequest) {
      throw new IllegalArgumentException("application tag '" + minTag + "' is for gangs: give " + GANG_SIZE
          + "=N or " + GANG + "=" + GANG_EXECUTORS + " too");
    }
    if (gangSize > 0 && min > gangSize) {
      throw new IllegalArgumentException("application tag '" + minTag + "' asks a minimum above the gang's size ("
          + GANG_SIZE + "=" + gangSize + ")");
    }
    if (gangSize > 0 && (gangSize - min) % step != 0) {
      throw new IllegalArgumentException("application tag '" + stepTag + "' does not divide the " + (gangSize - min)
          + " members between " + GANG_MIN + "=" + min + " and " + GANG_SIZE + "=" + gangSize);
    }
    return Elasticity.of(min, step);
  }

  private static int parsePositive(String raw, String value) {
    try {
      int n = Integer.parseInt(value);
      if (n > 0) {
        return n;
      }
    } catch (NumberFormatException e) {
      // Reported below with the tag.
    }
    throw new IllegalArgumentException("application tag '" + raw + "' needs a whole number above 0");
  }

  static long parseDuration(String raw, String value) {
    if (value.length() >= 2) {
      char unit = value.charAt(value.length() - 1);
      String digits = value.substring(0, value.length() - 1);
      try {
        long n = Long.parseLong(digits);
        if (n > 0) {
          return switch (unit) {
            case 's' -> Duration.ofSeconds(n).toMillis();
            case 'm' -> Duration.ofMinutes(n).toMillis();
            case 'h' -> Duration.ofHours(n).toMillis();
            case 'd' -> Duration.ofDays(n).toMillis();
            default -> throw new NumberFormatException();
          };
        }
      } catch (NumberFormatException | ArithmeticException e) {
        // Reported below with the tag.
      }
    }
    throw new IllegalArgumentException("application tag '" + raw
        + "' needs a duration such as 90s, 30m, 2h or 1d");
  }
}
