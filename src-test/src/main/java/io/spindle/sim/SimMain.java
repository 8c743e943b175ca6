package io.spindle.sim;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The simulator's command line ({@code scripts/spindle-sim}); every flag is described in docs/simulator.md and
 * by {@code --help}. Writes {@code report.json} and {@code report.html} to {@code --out} and a summary table to
 * stdout; progress and wall-clock times go to stderr.
 */
public final class SimMain {

  static final String USAGE = """
      usage: spindle-sim --trace FILE CLUSTER [options]
             spindle-sim --replay JOURNAL.avro       replay a ResourceManager's decision journal and check that the
                                                 engine decides the same (exit 0 same, 1 different, 3 entries lost)
             spindle-sim --dump JOURNAL.avro [--app APPLICATION_ID]
                                                 print a decision journal as text, cycle by cycle: the events the
                                                 engine was given and what it decided (only lines naming the app)
        CLUSTER, one of:
          --cluster FILE.json                    cluster file (docs/simulator.md)
          --vc-sizes FILE [--vc-scale F]         Philly VCs as in HeliosArtifact: one queue and node group per VC
          --openb-nodes FILE [--mig]             OpenB node list (--mig: every GPU in MIG mode, synthetic geometry)
          --nodes N --gpus-per-node G            uniform cluster [--gpu-model M] [--vcores-per-node V]
                                                 [--memory-mb-per-node M] [--queues a:50,b:50]
        trace columns (by header name; the preset is detected from the header when not given):
          --columns philly|openb|generic         a preset
          --col-<field> COLUMN                   field: id submit duration start end gpus gpu-milli queue user
                                                 vcores memory gpu-model ('none' removes one)
          --time-unit s|ms  --duration-unit s|ms
          --queue NAME                           queue of jobs when the trace has no queue column (default: default)
          --unknown-queue drop|QUEUE             jobs of queues the cluster lacks (default: drop)
          --limit N                              only the first N jobs
        policies and options:
          --policy LIST                          fifo, yarn, spindle-helios, spindle, spindle-helios+<feature>...
                                                 (features backfill pool borrow reserve runtimes learned shortest attained reorder), all, ablation
                                                 (default: all)
                                                 preempt-compare (spindle without preemption, killing after
                                                 15 s, checkpointing on notice); a spindle policy may end in
                                                 +preempt-kill-15s or +preempt-checkpoint
          --seed S  --member-gpus G  --declared-runtime exact|none|noisy|xF  --points N
          --expected-start                       measure expected start times: predicted (after the arrival
                                                 cycle) against actual start, median and p90 absolute error
        preemption (policies with +preempt-...):
          --checkpoint-interval-minutes M        jobs checkpoint every M minutes of run time (default 30; 0 never)
          --checkpoint-write-seconds S           a checkpoint on notice takes S seconds (default 60)
          --urgent-jobs N                        inject N urgent jobs into queue 'urgent' (default 0: none)
          --urgent-share F                       the urgent queue's guarantee, a fraction of the cluster (0.2)
          --urgent-gpus LIST                     GPUs per urgent job, drawn from the list (default 8,16,32)
          --urgent-minutes LO-HI                 urgent run times, uniform (default 10-60)
        elastic gangs (policies ending in +elastic; elastic-compare: rigid against elastic, preempting by checkpoint):
          --elastic-fraction F                   share of the multi-container gangs made elastic (default 1)
          --elastic-model linear|amdahl:f        speed on k of n members: k/n, or Amdahl with serial fraction f
                                                 (default linear); a model, not a measurement
          --out DIR                              where report.json and report.html go (default: sim-out)
          --progress auto|always|never           progress on stderr (auto: on a terminal, or on long runs)
      spindle-sim --failures llama3|none|RATE [--fault-compare] [options]   hardware faults at scale (no trace):
          --nodes N (2048) --gpus-per-node G (8) --nodes-per-rack R (32) --training-gpus LIST (8192)
          --hardware-share F (0.587)  --repair-hours H|lognormal:MEDIAN,SIGMA (lognormal:8,1)
          --restart in-domain|anywhere  --spares N (hot spares per rack for the training queue, 0)
          --checkpoint advised|fixed:SECONDS  --checkpoint-write-seconds S (60)  --restart-minutes M (10)
          --stop-seconds S (30)  --background-load F (0.9)  --background-trace FILE (Philly)
          --background-gpu-scale K (1)  --days D (30)  --seed S  --out DIR
          --fault-compare: restart anywhere, hot swap, hot swap + spares, each with fixed:3600 and advised
      """;

  private SimMain() {}

  public static void main(String[] args) throws IOException {
    try {
      System.exit(run(args, System.out, System.err, System.console() != null));
    } catch (IllegalArgumentException bad) {
      System.err.println("spindle-sim: " + bad.getMessage());
      System.err.println("(--help for usage)");
      System.exit(2);
    } catch (IOException unreadable) {
      System.err.println("spindle-sim: " + unreadable.getMessage());
      System.exit(2);
    }
  }

  /** Runs the command line; returns the exit status. */
  static int run(String[] args, PrintStream out, PrintStream err, boolean tty) throws IOException {
    Map<String, String> a = parse(args);
    if (a.containsKey("help")) {
      out.print(USAGE);
      return 0;
    }
    if (a.containsKey("replay")) {
      if (a.size() > 1) {
        throw new IllegalArgumentException("--replay takes no other flag");
      }
      return JournalReplayCommand.run(Path.of(a.get("replay")), out);
    }
    if (a.containsKey("failures") || a.containsKey("fault-compare")) {
      return io.spindle.sim.faults.FaultCommand.run(a, out, err);
    }
    if (a.containsKey("dump")) {
      if (a.size() > (a.containsKey("app") ? 2 : 1)) {
        throw new IllegalArgumentException("--dump takes only --app");
      }
      return JournalDumpCommand.run(Path.of(a.get("dump")), a.get("app"), out);
    }
    Report report = simulate(a, err, tty);
    Path dir = Path.of(a.getOrDefault("out", "sim-out"));
    Files.createDirectories(dir);
    String json = JsonReport.write(report);
    Files.writeString(dir.resolve("report.json"), json, StandardCharsets.UTF_8);
    Files.writeString(dir.resolve("report.html"), HtmlReport.write(report, json), StandardCharsets.UTF_8);
    out.print(SummaryTable.markdown(report));
    err.println("wrote " + dir.resolve("report.json") + " and " + dir.resolve("report.html"));
    return 0;
  }

  static Report simulate(Map<String, String> a, PrintStream err, boolean tty) {
    UrgentJobs.Spec urgent = urgent(a);
    ClusterSpec cluster = cluster(a);
    if (urgent != null) {
      cluster = UrgentJobs.addQueue(cluster, urgent.share());
    }
    SimOptions options = new SimOptions(Long.parseLong(a.getOrDefault("seed", "1")),
        Integer.parseInt(a.getOrDefault("member-gpus", "0")), a.getOrDefault("declared-runtime", "exact"),
        Integer.parseInt(a.getOrDefault("points", "400")),
        Math.round(Double.parseDouble(a.getOrDefault("checkpoint-interval-minutes", "30")) * 60_000),
        Math.round(Double.parseDouble(a.getOrDefault("checkpoint-write-seconds", "60")) * 1000), urgent,
        ElasticModel.parse(a.getOrDefault("elastic-model", "linear"),
            Double.parseDouble(a.getOrDefault("elastic-fraction", "1"))))
        .withExpectedStart(Boolean.parseBoolean(a.getOrDefault("expected-start", "false")));
    Trace trace = trace(a, cluster);
    if (urgent != null) {
      trace = UrgentJobs.inject(trace, urgent, options.seed());
    }
    List<SimPolicy> policies = Policies.parse(a.getOrDefault("policy", "all"), options);
    for (SimPolicy p : policies) {
      if (urgent != null && p.isolatesPartitions() && !cluster.partitions().isEmpty()) {
        throw new IllegalArgumentException("policy " + p.name() + " keeps queues on their own nodes and the urgent "
            + "queue has none; use policies that pool nodes (spindle, fifo, yarn, ...+pool)");
      }
    }
    String progress = a.getOrDefault("progress", "auto");
    List<RunResult> results = new ArrayList<>();
    for (SimPolicy p : policies) {
      ProgressBar bar = progress.equals("never") ? null
          : new ProgressBar(err, p.name(), progress.equals("always") || tty);
      results.add(new Simulator(cluster, p, options).run(trace, bar));
      if (bar != null) {
        bar.done(trace.jobs().size());
      }
    }
    return new Report(trace, cluster, options, results);
  }

  /** The urgent workload the flags ask for, or {@code null} (no {@code --urgent-jobs}, or 0). */
  static UrgentJobs.Spec urgent(Map<String, String> a) {
    int jobs = Integer.parseInt(a.getOrDefault("urgent-jobs", "0"));
    if (jobs == 0) {
      for (String k : List.of("urgent-share", "urgent-gpus", "urgent-minutes")) {
        if (a.containsKey(k)) {
          throw new IllegalArgumentException("--" + k + " needs --urgent-jobs N");
        }
      }
      return null;
    }
    UrgentJobs.Spec d = UrgentJobs.Spec.of(jobs);
    List<Integer> gpus = d.gpus();
    if (a.containsKey("urgent-gpus")) {
      gpus = new ArrayList<>();
      for (String g : a.get("urgent-gpus").split(",")) {
        gpus.add(Integer.parseInt(g.strip()));
      }
    }
    long lo = d.minMillis();
    long hi = d.maxMillis();
    if (a.containsKey("urgent-minutes")) {
      String[] range = a.get("urgent-minutes").split("-");
      if (range.length != 2) {
        throw new IllegalArgumentException("--urgent-minutes is LO-HI, e.g. 10-60; was " + a.get("urgent-minutes"));
      }
      lo = Math.round(Double.parseDouble(range[0].strip()) * 60_000);
      hi = Math.round(Double.parseDouble(range[1].strip()) * 60_000);
    }
    return new UrgentJobs.Spec(jobs, Double.parseDouble(a.getOrDefault("urgent-share", String.valueOf(d.share()))),
        gpus, lo, hi);
  }

  static ClusterSpec cluster(Map<String, String> a) {
    int given = 0;
    for (String k : List.of("cluster", "vc-sizes", "openb-nodes", "nodes")) {
      given += a.containsKey(k) ? 1 : 0;
    }
    if (given != 1) {
      throw new IllegalArgumentException("give exactly one of --cluster, --vc-sizes, --openb-nodes, --nodes");
    }
    if (a.containsKey("cluster")) {
      return ClusterSpecs.fromFile(Path.of(a.get("cluster")));
    }
    if (a.containsKey("vc-sizes")) {
      return ClusterSpecs.fromVcSizes(Path.of(a.get("vc-sizes")),
          Integer.parseInt(a.getOrDefault("gpus-per-node", "8")), Double.parseDouble(a.getOrDefault("vc-scale", "1")));
    }
    if (a.containsKey("openb-nodes")) {
      return ClusterSpecs.fromOpenbNodes(Path.of(a.get("openb-nodes")), a.containsKey("mig"));
    }
    return ClusterSpecs.uniform(Integer.parseInt(a.get("nodes")), Integer.parseInt(require(a, "gpus-per-node")),
        a.getOrDefault("gpu-model", ClusterSpecs.PLAIN_GPU), Integer.parseInt(a.getOrDefault("vcores-per-node", "0")),
        Long.parseLong(a.getOrDefault("memory-mb-per-node", "0")), a.get("queues"));
  }

  static Trace trace(Map<String, String> a, ClusterSpec cluster) {
    ColumnMapping mapping = a.containsKey("columns") ? ColumnMapping.preset(a.get("columns")) : null;
    Map<String, String> overrides = new LinkedHashMap<>();
    for (Map.Entry<String, String> e : a.entrySet()) {
      if (e.getKey().startsWith("col-")) {
        overrides.put(e.getKey().substring(4), e.getValue());
      } else if (e.getKey().equals("time-unit") || e.getKey().equals("duration-unit")) {
        overrides.put(e.getKey(), e.getValue());
      }
    }
    Path file = Path.of(require(a, "trace"));
    CsvTable table = CsvTable.read(file);
    if (mapping == null) {
      mapping = ColumnMapping.detect(new LinkedHashSet<>(table.columnNames()));
      if (mapping == null && overrides.isEmpty()) {
        throw new IllegalArgumentException(file + ": columns " + table.columnNames() + " match no preset; name them "
            + "with --col-submit, --col-duration, --col-gpus (and --col-queue, ...)");
      }
    }
    if (!overrides.isEmpty()) {
      mapping = mapping == null ? fromFlagsOnly(overrides) : mapping.with(overrides);
    }
    Trace t = new TraceReader(a.getOrDefault("queue", "default")).read(table, mapping);
    if (a.containsKey("limit")) {
      t = t.limit(Integer.parseInt(a.get("limit")));
    }
    String unknown = a.getOrDefault("unknown-queue", "drop");
    Set<String> leaves = new LinkedHashSet<>(cluster.leafNames());
    return t.restrictToQueues(leaves, unknown.equals("drop") ? null : unknown);
  }

  private static ColumnMapping fromFlagsOnly(Map<String, String> o) {
    Map<String, String> f = new LinkedHashMap<>(o);
    return new ColumnMapping("flags", f.get("id"), f.get("submit"), f.get("duration"), f.get("start"), f.get("end"),
        f.get("gpus"), f.get("gpu-milli"), f.get("queue"), f.get("user"), f.get("vcores"), f.get("memory"),
        f.get("gpu-model"), f.getOrDefault("time-unit", "s"), f.getOrDefault("duration-unit", "s"));
  }

  private static String require(Map<String, String> a, String key) {
    String v = a.get(key);
    if (v == null) {
      throw new IllegalArgumentException("--" + key + " is required");
    }
    return v;
  }

  /** {@code --key value}, {@code --key=value}, or a bare {@code --flag} (value "true"). */
  static Map<String, String> parse(String[] args) {
    Set<String> bare = Set.of("mig", "help", "fault-compare", "expected-start");
    Map<String, String> out = new LinkedHashMap<>();
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      if (!arg.startsWith("--")) {
        throw new IllegalArgumentException("unexpected argument '" + arg + "'");
      }
      String key = arg.substring(2);
      String value;
      int eq = key.indexOf('=');
      if (eq >= 0) {
        value = key.substring(eq + 1);
        key = key.substring(0, eq);
      } else if (bare.contains(key)) {
        value = "true";
      } else if (i + 1 < args.length) {
        value = args[++i];
      } else {
        throw new IllegalArgumentException("--" + key + " needs a value");
      }
      if (!KNOWN.contains(key) && !FAULT_FLAGS.contains(key) && !key.startsWith("col-")) {
        throw new IllegalArgumentException("unknown flag --" + key);
      }
      out.put(key, value);
    }
    return out;
  }

  /** Flags of failure injection ({@link io.spindle.sim.faults.FaultCommand}). */
  private static final Set<String> FAULT_FLAGS = Set.of("failures", "fault-compare", "nodes-per-rack",
      "training-gpus", "hardware-share", "repair-hours", "restart", "spares", "checkpoint", "restart-minutes",
      "stop-seconds", "background-load", "background-trace", "background-gpu-scale", "days");

  private static final Set<String> KNOWN = Set.of("trace", "cluster", "vc-sizes", "vc-scale", "openb-nodes", "mig",
      "nodes", "gpus-per-node", "gpu-model", "vcores-per-node", "memory-mb-per-node", "queues", "columns",
      "time-unit", "duration-unit", "queue", "unknown-queue", "limit", "policy", "seed", "member-gpus",
      "declared-runtime", "points", "out", "progress", "help", "checkpoint-interval-minutes",
      "checkpoint-write-seconds", "urgent-jobs", "urgent-share", "urgent-gpus", "urgent-minutes", "replay", "dump",
      "app", "elastic-fraction", "elastic-model", "expected-start");
}
