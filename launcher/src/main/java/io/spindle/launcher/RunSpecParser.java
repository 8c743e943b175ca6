package io.spindle.launcher;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads a {@code spindle-run} command line: {@code [options] -- command [args]}. Every problem is a
 * {@link UsageException} naming the option, before anything is submitted.
 */
public final class RunSpecParser {

  public static final String USAGE = String.join("\n",
      "usage: spindle-run [options] -- COMMAND [ARGS...]",
      "  --queue Q                leaf queue to submit to (default: default)",
      "  --name NAME              application name (default: spindle-run)",
      "  --workers N              worker containers, started together as one gang (required, >= 1)",
      "  --min-workers M          elastic: start once M workers fit, grow to --workers while GPUs are idle, give",
      "                           workers back on Spindle's resize notices (restarting from the checkpoint each time;",
      "                           needs --checkpoint-dir)",
      "  --worker-step S          elastic: grow and shrink S workers at a time (S divides --workers minus",
      "                           --min-workers; default 1)",
      "  --gpus-per-worker G      whole GPUs per worker (default 0)",
      "  --gpu-milli M            a share of one GPU per worker, 1..999 thousandths (instead of whole GPUs)",
      "  --mig-profile P          one MIG instance of profile P per worker, e.g. 3g.40gb (instead of whole GPUs)",
      "  --memory-mb MB           memory per worker (default 4096)",
      "  --vcores V               vcores per worker (default 1)",
      "  --topology required=L|preferred=L   keep the gang within one topology level L (node, rack, ...)",
      "  --priority P             application priority (default 0)",
      "  --max-runtime D          each worker's run time, e.g. 90s, 30m, 2h, 1d",
      "  --env KEY=VALUE          set in every worker (repeatable)",
      "  --files PATH[,PATH]      files localized into every worker's directory (repeatable)",
      "  --archives PATH[,PATH]   archives localized and unpacked into every worker's directory (repeatable)",
      "  --checkpoint-dir DIR     where the job writes checkpoints; restarts resume from the newest",
      "  --max-restarts N         restarts of the whole gang after a failure (default 3)",
      "  --restart-backoff D      wait before the first restart, doubled for each next one (default 10s)",
      "  --hang-timeout D         a worker without a progress report for D counts as failed (default: never)");

  private static final java.util.Set<String> OPTIONS = java.util.Set.of("--queue", "--name", "--workers",
      "--min-workers", "--worker-step", "--gpus-per-worker", "--gpu-milli", "--mig-profile", "--memory-mb", "--vcores",
      "--topology", "--priority", "--max-runtime", "--env", "--files", "--archives", "--checkpoint-dir",
      "--max-restarts", "--restart-backoff", "--hang-timeout");
  private static final Pattern DURATION = Pattern.compile("(\\d+)([smhd])");
  private static final Pattern MIG_PROFILE = Pattern.compile("\\d+g\\.\\d+gb(\\+me)?");
  private static final Pattern ENV_KEY = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
  private static final Pattern LEVEL = Pattern.compile("[a-z][a-z0-9_-]*");

  private RunSpecParser() {}

  public static RunSpec parse(String... args) {
    String queue = "default";
    String name = "spindle-run";
    Integer workers = null;
    Integer minWorkers = null;
    Integer step = null;
    int gpus = 0;
    int milli = 0;
    String mig = null;
    int memory = 4096;
    int vcores = 1;
    String level = null;
    boolean required = false;
    int priority = 0;
    Duration maxRuntime = Duration.ZERO;
    Map<String, String> env = new LinkedHashMap<>();
    List<String> files = new ArrayList<>();
    List<String> archives = new ArrayList<>();
    String checkpointDir = null;
    int maxRestarts = 3;
    Duration restartBackoff = Duration.ofSeconds(10);
    Duration hangTimeout = Duration.ZERO;
    List<String> command = null;
    for (int i = 0; i < args.length; i++) {
      String opt = args[i];
      if (opt.equals("--")) {
        command = List.of(args).subList(i + 1, args.length);
        break;
      }
      if (!opt.startsWith("--")) {
        throw new UsageException("'" + opt + "' is not an option; put the command after --");
      }
      String value;
      int eq = opt.indexOf('=');
      if (!OPTIONS.contains(eq > 0 ? opt.substring(0, eq) : opt)) {
        throw new UsageException("unknown option " + (eq > 0 ? opt.substring(0, eq) : opt) + "\n" + USAGE);
      }
      if (eq > 0) { // --option=value; the value may hold '=' itself (--env=K=V, --topology=required=rack)
        value = opt.substring(eq + 1);
        opt = opt.substring(0, eq);
      } else {
        if (i + 1 >= args.length || args[i + 1].equals("--")) {
          throw new UsageException(opt + " needs a value");
        }
        value = args[++i];
      }
      switch (opt) {
        case "--queue" -> queue = nonBlank(opt, value);
        case "--name" -> name = nonBlank(opt, value);
        case "--workers" -> workers = integer(opt, value, 1, 100_000);
        case "--min-workers" -> minWorkers = integer(opt, value, 1, 100_000);
        case "--worker-step" -> step = integer(opt, value, 1, 100_000);
        case "--gpus-per-worker" -> gpus = integer(opt, value, 0, 1_024);
        case "--gpu-milli" -> milli = integer(opt, value, 1, 999);
        case "--mig-profile" -> {
          if (!MIG_PROFILE.matcher(value).matches()) {
            throw new UsageException("--mig-profile takes a MIG profile such as 1g.10gb or 3g.40gb, not '" + value
                + "'");
          }
          mig = value;
        }
        case "--memory-mb" -> memory = integer(opt, value, 1, Integer.MAX_VALUE);
        case "--vcores" -> vcores = integer(opt, value, 1, 100_000);
        case "--topology" -> {
          int at = value.indexOf('=');
          String kind = at < 0 ? "" : value.substring(0, at);
          level = at < 0 ? "" : value.substring(at + 1).toLowerCase(Locale.ROOT);
          if (!(kind.equals("required") || kind.equals("preferred")) || !LEVEL.matcher(level).matches()) {
            throw new UsageException("--topology takes required=LEVEL or preferred=LEVEL (e.g. required=rack), not '"
                + value + "'");
          }
          required = kind.equals("required");
        }
        case "--priority" -> priority = integer(opt, value, Integer.MIN_VALUE, Integer.MAX_VALUE);
        case "--max-runtime" -> maxRuntime = duration(opt, value);
        case "--env" -> {
          int at = value.indexOf('=');
          String key = at < 0 ? value : value.substring(0, at);
          if (at < 0 || !ENV_KEY.matcher(key).matches()) {
            throw new UsageException("--env takes KEY=VALUE with KEY a shell variable name, not '" + value + "'");
          }
          env.put(key, value.substring(at + 1));
        }
        case "--files" -> files.addAll(paths(opt, value));
        case "--archives" -> archives.addAll(paths(opt, value));
        case "--checkpoint-dir" -> checkpointDir = nonBlank(opt, value);
        case "--max-restarts" -> maxRestarts = integer(opt, value, 0, 1_000);
        case "--restart-backoff" -> restartBackoff = duration(opt, value);
        case "--hang-timeout" -> hangTimeout = duration(opt, value);
        default -> throw new IllegalStateException(opt); // OPTIONS and this switch list the same options
      }
    }
    if (workers == null) {
      throw new UsageException("--workers is required: how many worker containers start together");
    }
    if (command == null || command.isEmpty()) {
      throw new UsageException("no command: give what every worker runs after --, e.g. -- torchrun train.py");
    }
    if ((milli > 0 ? 1 : 0) + (gpus > 0 ? 1 : 0) + (mig != null ? 1 : 0) > 1) {
      throw new UsageException("--gpus-per-worker, --gpu-milli and --mig-profile each say how much GPU a worker"
          + " gets; give one");
    }
    checkElastic(workers, minWorkers, step, checkpointDir);
    return new RunSpec(queue, name, workers, minWorkers == null ? workers : minWorkers, step == null ? 1 : step, gpus,
        milli, mig, memory, vcores, level, required, priority, maxRuntime, env, files, archives, checkpointDir,
        maxRestarts, restartBackoff, hangTimeout, command);
  }

  private static void checkElastic(int workers, Integer min, Integer step, String checkpointDir) {
    if (min == null) {
      if (step != null) {
        throw new UsageException("--worker-step " + step + " needs --min-workers: only an elastic job changes size");
      }
      return;
    }
    if (min > workers) {
      throw new UsageException("--min-workers " + min + " is more than --workers " + workers + ": an elastic job"
          + " runs with between --min-workers and --workers workers");
    }
    if (step != null && (workers - min) % step != 0) {
      throw new UsageException("--worker-step " + step + " does not divide the " + (workers - min) + " worker(s)"
          + " between --min-workers " + min + " and --workers " + workers);
    }
    if (min < workers && checkpointDir == null) {
      throw new UsageException("--min-workers " + min + " needs --checkpoint-dir: an elastic job restarts from its"
          + " newest checkpoint each time it changes size");
    }
  }

  private static String nonBlank(String opt, String value) {
    if (value.isBlank()) {
      throw new UsageException(opt + " needs a non-empty value");
    }
    return value;
  }

  private static int integer(String opt, String value, int min, int max) {
    long n;
    try {
      n = Long.parseLong(value.strip());
    } catch (NumberFormatException e) {
      throw new UsageException(opt + " takes a whole number, not '" + value + "'");
    }
    if (n < min || n > max) {
      throw new UsageException(opt + " must be " + (max == Integer.MAX_VALUE ? "at least " + min
          : "between " + min + " and " + max) + ", not " + n);
    }
    return (int) n;
  }

  static Duration duration(String opt, String value) {
    Matcher m = DURATION.matcher(value.strip().toLowerCase(Locale.ROOT));
    if (!m.matches() || Long.parseLong(m.group(1)) == 0) {
      throw new UsageException(opt + " takes a positive duration such as 90s, 30m, 2h or 1d, not '" + value + "'");
    }
    long n = Long.parseLong(m.group(1));
    return switch (m.group(2)) {
      case "s" -> Duration.ofSeconds(n);
      case "m" -> Duration.ofMinutes(n);
      case "h" -> Duration.ofHours(n);
      default -> Duration.ofDays(n);
    };
  }

  private static List<String> paths(String opt, String value) {
    List<String> out = new ArrayList<>();
    for (String p : value.split(",")) {
      if (p.isBlank()) {
        throw new UsageException(opt + " has an empty path in '" + value + "'");
      }
      out.add(p.strip());
    }
    return out;
  }
}
