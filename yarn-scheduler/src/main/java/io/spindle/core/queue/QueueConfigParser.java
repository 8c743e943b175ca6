package io.spindle.core.queue;

import io.spindle.core.model.ResourceVector;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * Builds a {@link QueueTree} from CapacityScheduler-style keys given as a plain map, so the YARN adapter can hand
 * over a Hadoop {@code Configuration} and tests can hand over a literal map. Every rejection names the key and the
 * reason; nothing is half-applied because the tree is only returned when all of it is valid.
 *
 * <p>Keys read, for each queue path {@code <p>} ({@code root}, {@code root.eng}, …):
 * <ul>
 *   <li>{@code yarn.scheduler.capacity.<p>.queues}: comma-separated children
 *   <li>{@code yarn.scheduler.capacity.<p>.capacity}: percent of the parent, a weight among the siblings
 *       ({@code 2w}, CapacityScheduler's weight mode), or {@code [memory=…,vcores=…,yarn.io/gpu=…]}
 *   <li>{@code yarn.scheduler.capacity.<p>.maximum-capacity}: a percentage or absolute form; default 100 (the
 *       parent's maximum), as is {@code -1}
 *   <li>{@code yarn.scheduler.capacity.<p>.user-limit-factor}: default 1; -1 for no per-user limit
 *   <li>{@code yarn.scheduler.capacity.<p>.disable_preemption}: no container of the queue is a victim; inherited
 *   <li>{@code yarn.scheduler.capacity.<p>.ordering-policy} of a leaf: {@link AppOrdering}
 *   <li>{@code yarn.scheduler.capacity.<p>.spindle.ordering} and the keys under it: {@link OrderingRulesParser}
 *   <li>{@code yarn.scheduler.capacity.<p>.minimum-user-limit-percent}: default 100 (see {@link QueueConfig})
 *   <li>{@code yarn.scheduler.capacity.<p>.spindle.weight}: share of idle capacity when borrowing; default 1
 *   <li>{@code yarn.scheduler.capacity.<p>.spindle.preemption.max-extensions} and
 *       {@code ...spindle.preemption.max-extension-seconds}: how far a checkpoint notice to an application of the
 *       queue may be extended; default: the parent queue's, at the top the cluster's
 *       {@code yarn.scheduler.spindle.preemption.*} settings
 *   <li>{@code yarn.scheduler.capacity.<p>.spindle.hot-spares-per-rack} of a leaf: whole idle nodes per rack kept for
 *       its gangs restarting after hardware loss; default 0, not inherited, refused on a parent
 *   <li>{@code yarn.scheduler.capacity.<p>.spindle.preemption.min-runtime-seconds}: how long work of the queue runs
 *       before any preemption may take it; default: the parent queue's, at the top none
 *   <li>{@code yarn.scheduler.capacity.<p>.spindle.preemption.delay-seconds}: how long a request of the queue waits
 *       for capacity to free by itself before anything is preempted for it; default: the parent queue's, at the top
 *       the cluster's {@code yarn.scheduler.spindle.preemption.starvation-seconds}
 * </ul>
 * Other CapacityScheduler keys of a queue (ACLs, state, node labels; the validity of an ordering policy) are left to
 * the adapters.
 * Keys aimed at a queue that no {@code .queues} list declares are ignored, as CapacityScheduler ignores them, and
 * listed in {@link QueueTree#ignoredKeys()} with the declared queue nearest to the one they name (typos show).
 */
public final class QueueConfigParser {

  public static final String PREFIX = "yarn.scheduler.capacity.";
  public static final String QUEUES = "queues";
  public static final String CAPACITY = "capacity";
  public static final String MAXIMUM_CAPACITY = "maximum-capacity";
  public static final String USER_LIMIT_FACTOR = "user-limit-factor";
  public static final String DISABLE_PREEMPTION = "disable_preemption";
  public static final String MINIMUM_USER_LIMIT_PERCENT = "minimum-user-limit-percent";
  public static final String SPINDLE = "spindle.";
  public static final String WEIGHT = SPINDLE + "weight";
  public static final String PREEMPTION_MAX_EXTENSIONS = SPINDLE + "preemption.max-extensions";
  public static final String PREEMPTION_MAX_EXTENSION_SECONDS = SPINDLE + "preemption.max-extension-seconds";
  /** Whole idle nodes per rack kept for a leaf's gangs restarting after hardware loss ({@link QueueConfig}). */
  public static final String HOT_SPARES_PER_RACK = SPINDLE + "hot-spares-per-rack";
  public static final long MAX_HOT_SPARES_PER_RACK = 1_024;
  public static final String PREEMPTION_MIN_RUNTIME_SECONDS = SPINDLE + "preemption.min-runtime-seconds";
  public static final String PREEMPTION_DELAY_SECONDS = SPINDLE + "preemption.delay-seconds";
  /**
   * The leaves a queue created on submission, in creation order: written by Spindle into the configuration it loads
   * (never needed in a file), so that a refresh, a take-over and a journal replay rebuild the same tree from
   * configuration alone. Ignored on a queue that does not create leaves.
   */
  public static final String AUTO_CREATED = SPINDLE + "auto-created-queues";
  /** Bounds of the per-queue extension keys; the same as the cluster-wide settings'. */
  public static final int MAX_EXTENSIONS_LIMIT = 100;
  public static final long MAX_EXTENSION_SECONDS_LIMIT = 86_400;
  /**
   * Bound of the per-queue minimum run time and preemption delay: a week, as the cluster-wide
   * {@code starvation-seconds}. Longer is "never", which {@code disable_preemption} says plainly.
   */
  public static final long PREEMPTION_SECONDS_LIMIT = 604_800;
  /**
   * Levels below root a queue tree may have. Real trees have a handful; the bound keeps the recursive walks here and
   * in fair share from running a thread out of stack on a runaway (generated or corrupted) configuration.
   */
  public static final int MAX_DEPTH = 64;

  public static final double DEFAULT_MAXIMUM_PERCENT = 100;
  public static final double DEFAULT_USER_LIMIT_FACTOR = 1;
  public static final double DEFAULT_WEIGHT = 1;

  /** Spindle per-queue keys this parser owns; other {@code spindle.*} keys are declared by later features. */
  private static final Set<String> SPINDLE_QUEUE_KEYS =
      union(Set.of(WEIGHT, PREEMPTION_MAX_EXTENSIONS, PREEMPTION_MAX_EXTENSION_SECONDS,
          PREEMPTION_MIN_RUNTIME_SECONDS, PREEMPTION_DELAY_SECONDS, AUTO_CREATED, HOT_SPARES_PER_RACK),
          OrderingRulesParser.KEYS);
  private static final Set<String> STANDARD_QUEUE_KEYS = Set.of(QUEUES, CAPACITY, MAXIMUM_CAPACITY, USER_LIMIT_FACTOR);
  private static final Pattern QUEUE_NAME = Pattern.compile("[A-Za-z0-9_-]+");
  private static final double PERCENT_TOLERANCE = 1e-6;
  private static final Pattern DECIMAL = Pattern.compile("[+-]?(\\d+(\\.\\d*)?|\\.\\d+)");

  private final Set<String> extraSpindleKeys;

  public QueueConfigParser() {
    this(Set.of());
  }

  /** @param extraSpindleKeys further per-queue {@code spindle.*} keys that other components read and validate */
  public QueueConfigParser(Set<String> extraSpindleKeys) {
    this.extraSpindleKeys = Set.copyOf(extraSpindleKeys);
  }

  public QueueTree parse(Map<String, String> conf) {
    TreeMap<String, String> c = new TreeMap<>(conf);
    Map<String, List<String>> children = new LinkedHashMap<>();
    Map<String, AutoCreation> autoCreating = new LinkedHashMap<>();
    Set<String> createdHere = new java.util.LinkedHashSet<>();
    readChildren(c, QueueTree.ROOT, 0, children, autoCreating, createdHere);
    List<QueueTree.IgnoredKey> ignored = keysOfUndeclaredQueues(c, children.keySet());

    Map<String, QueueConfig> queues = new LinkedHashMap<>();
    for (Map.Entry<String, List<String>> e : children.entrySet()) {
      String path = e.getKey();
      queues.put(path, createdHere.contains(path)
          ? createdQueue(path, autoCreating.get(path.substring(0, path.lastIndexOf('.'))), e.getValue())
          : readQueue(c, path, e.getValue()));
    }
    Set<String> labels = QueueLabels.configured(queues.values());
    for (QueueConfig q : List.copyOf(queues.values())) {
      if (!q.isLeaf()) {
        List<QueueConfig> kids = q.children().stream().map(n -> queues.get(q.path() + "." + n)).toList();
        AutoCreation auto = autoCreating.get(q.path());
        List<QueueConfig> resolved = auto != null && auto.mode() == AutoCreation.Mode.LEGACY
            ? guaranteedOrZero(q, auto, kids) : resolveWeights(q, kids);
        for (QueueConfig k : resolved) {
          queues.put(k.path(), k);
        }
        if (auto == null || auto.mode() != AutoCreation.Mode.LEGACY) {
          checkChildren(q, q.children().stream().map(n -> queues.get(q.path() + "." + n)).toList());
        }
        if (auto == null) {
          QueueLabels.checkChildren(q, kids, labels,
              Boolean.parseBoolean(c.getOrDefault(key(q.path(), "allow-zero-capacity-sum"), "false").strip()));
        }
      }
    }
    return new QueueTree(queues, ignored, autoCreating, createdHere);
  }

  /**
   * The queues a legacy managed parent created, in creation order: each the template's capacity while their sum stays
   * within the parent, the rest none (CapacityScheduler's default {@code GuaranteedOrZeroCapacityOverTimePolicy}
   * gives guarantees to the leaves that are active first; Spindle, which does not deactivate idle leaves, to the
   * first created).
   */
  private static List<QueueConfig> guaranteedOrZero(QueueConfig parent, AutoCreation auto, List<QueueConfig> kids) {
    List<QueueConfig> out = new ArrayList<>();
    double given = 0;
    for (QueueConfig k : kids) {
      double pct = auto.templateCapacity() instanceof Capacity.Percent p ? p.percent() : 0;
      boolean fits = given + pct <= 100 + PERCENT_TOLERANCE;
      given += fits ? pct : 0;
      out.add(k.withCapacity(new Capacity.Percent(fits ? pct : 0)));
    }
    return out;
  }

  /** A created leaf takes its parent's template; a created parent shares its own parent by weight (1w). */
  private static QueueConfig createdQueue(String path, AutoCreation auto, List<String> children) {
    return children.isEmpty() ? new QueueConfig(path, List.of(), auto.templateCapacity(), auto.templateMaximum(),
        auto.templateUserLimitFactor(), DEFAULT_WEIGHT, QueuePreemption.INHERIT, AppOrdering.FIFO, 100,
        auto.templateLabels(), OrderingRules.DEFAULTS, 0)
        : new QueueConfig(path, children, new Capacity.Weight(1, Double.NaN),
            new Capacity.Percent(DEFAULT_MAXIMUM_PERCENT), DEFAULT_USER_LIMIT_FACTOR, DEFAULT_WEIGHT);
  }

  /**
   * How {@code path} creates leaves, or {@code null} if it does not. The template is read and checked here, once,
   * so that a bad template is refused with the configuration and not at some user's first submission.
   */
  private static AutoCreation readAutoCreation(java.util.NavigableMap<String, String> c, String path, boolean declaresChildren) {
    boolean legacy = Boolean.TRUE.equals(parseHadoopBoolean(c.get(key(path, AutoCreation.LEGACY_ENABLED))));
    boolean flexible = Boolean.TRUE.equals(parseHadoopBoolean(c.get(key(path, AutoCreation.FLEXIBLE_ENABLED))));
    if (!legacy && !flexible) {
      return null;
    }
    if (legacy && flexible) {
      throw new QueueConfigException(key(path, AutoCreation.FLEXIBLE_ENABLED), "queue " + path + " enables both "
          + "legacy (" + AutoCreation.LEGACY_ENABLED + ") and flexible auto-creation; choose one");
    }
    if (legacy && declaresChildren) {
      // CapacityScheduler makes a managed parent only of a queue without children; on one with children (root in its
      // own validation test) the key has no effect.
      return null;
    }
    List<String> prefixes = legacy ? List.of(AutoCreation.LEGACY_TEMPLATE)
        : List.of(AutoCreation.FLEXIBLE_LEAF_TEMPLATE, AutoCreation.FLEXIBLE_TEMPLATE);
    String[] capKey = templateKey(c, path, prefixes, CAPACITY);
    Capacity capacity = capKey[1] == null ? (legacy ? new Capacity.Percent(0) : new Capacity.Weight(1, Double.NaN))
        : parseCapacity(capKey[0], capKey[1]);
    if (legacy && !(capacity instanceof Capacity.Percent)) {
      throw new QueueConfigException(capKey[0], "'" + capKey[1] + "': the leaf template of a managed parent gives "
          + "a percentage of the parent");
    }
    if (flexible && !(capacity instanceof Capacity.Weight)) {
      throw new QueueConfigException(capKey[0], "'" + capKey[1] + "': queues created by flexible auto-creation share "
          + "their parent by weight (e.g. 1w)");
    }
    String[] maxKey = templateKey(c, path, prefixes, MAXIMUM_CAPACITY);
    Capacity maximum = maxKey[1] == null || maxKey[1].strip().equals("-1")
        ? new Capacity.Percent(DEFAULT_MAXIMUM_PERCENT) : parseCapacity(maxKey[0], maxKey[1]);
    if (maximum instanceof Capacity.Weight) {
      throw new QueueConfigException(maxKey[0], "'" + maxKey[1] + "': a maximum-capacity cannot be a weight");
    }
    checkMaximumNotBelowCapacity(maxKey[0], capacity, maximum);
    String[] ulfKey = templateKey(c, path, prefixes, USER_LIMIT_FACTOR);
    double ulf = parseNumber(c, ulfKey[0], DEFAULT_USER_LIMIT_FACTOR);
    if (!(ulf > 0 || ulf == -1)) {
      throw new QueueConfigException(ulfKey[0], "must be above 0, or -1 for no per-user limit; was " + ulf);
    }
    String maxQueuesKey = key(path, legacy ? AutoCreation.LEGACY_MAX_QUEUES : AutoCreation.FLEXIBLE_MAX_QUEUES);
    Long maxQueues = parseWholeKey(c, maxQueuesKey, Integer.MAX_VALUE);
    boolean failBeyond = legacy
        && Boolean.TRUE.equals(parseHadoopBoolean(c.get(key(path, AutoCreation.LEGACY_FAIL_BEYOND_CAPACITY))));
    Long depth = parseWholeKey(c, key(path, AutoCreation.FLEXIBLE_MAX_DEPTH), MAX_DEPTH);
    if (depth == null) {
      depth = parseWholeKey(c, PREFIX + AutoCreation.FLEXIBLE_MAX_DEPTH, MAX_DEPTH);
    }
    QueueLabels labels = QueueLabels.INHERIT;
    for (String prefix : prefixes) {
      labels = QueueLabels.read(c, path + "." + prefix.substring(0, prefix.length() - 1));
      if (!labels.equals(QueueLabels.INHERIT)) {
        break; // The first template that names labels gives them all, as for the other template keys.
      }
    }
    return new AutoCreation(legacy ? AutoCreation.Mode.LEGACY : AutoCreation.Mode.FLEXIBLE, capacity, maximum, ulf,
        maxQueues == null ? AutoCreation.DEFAULT_MAX_QUEUES : maxQueues.intValue(), failBeyond,
        depth == null ? AutoCreation.DEFAULT_MAX_DEPTH : depth.intValue(), labels);
  }

  /** The first of the template keys for {@code suffix} that is set, and its value; else the last key and null. */
  private static String[] templateKey(Map<String, String> c, String path, List<String> prefixes, String suffix) {
    for (String prefix : prefixes) {
      String k = key(path, prefix + suffix);
      if (c.containsKey(k)) {
        return new String[] {k, c.get(k)};
      }
    }
    return new String[] {key(path, prefixes.get(prefixes.size() - 1) + suffix), null};
  }

  private void readChildren(java.util.NavigableMap<String, String> c, String path, int depth, Map<String, List<String>> out,
      Map<String, AutoCreation> autoCreating, Set<String> createdHere) {
    String key = key(path, QUEUES);
    String raw = c.get(key);
    Set<String> names = new java.util.LinkedHashSet<>();
    if (raw != null && depth == MAX_DEPTH) {
      throw new QueueConfigException(key, "the queue tree is deeper than " + MAX_DEPTH + " levels below root");
    }
    if (raw != null) {
      for (String part : raw.split(",", -1)) {
        String name = part.strip();
        if (name.isEmpty()) {
          throw new QueueConfigException(key, "empty queue name in '" + raw + "'");
        }
        if (!QUEUE_NAME.matcher(name).matches()) {
          throw new QueueConfigException(key, "queue name '" + name + "' may hold only letters, digits, '_' and '-'");
        }
        if (!names.add(name)) {
          throw new QueueConfigException(key, "duplicate queue '" + name + "' under " + path);
        }
      }
    } else if (path.equals(QueueTree.ROOT)) {
      throw new QueueConfigException(key, "missing; root needs at least one child queue");
    }
    AutoCreation auto = readAutoCreation(c, path, raw != null);
    if (auto != null) {
      autoCreating.put(path, auto);
      for (String name : createdNames(c, path)) {
        if (names.add(name)) { // A created queue the admin has since declared is a declared one.
          createdHere.add(path + "." + name);
        }
      }
    }
    out.put(path, List.copyOf(names));
    for (String name : names) {
      if (createdHere.contains(path + "." + name)) {
        readCreated(c, path + "." + name, auto, out, autoCreating, createdHere);
        continue;
      }
      // A leaf name may recur under another parent (root.eng.dev, root.sales.dev): applications then name it by
      // its full path, and QueueTree.lookup calls the short name ambiguous.
      readChildren(c, path + "." + name, depth + 1, out, autoCreating, createdHere);
    }
  }

  /** The queues recorded as created under {@code path} ({@link #withCreated}). */
  private static List<String> createdNames(Map<String, String> c, String path) {
    String createdKey = key(path, AUTO_CREATED);
    List<String> out = new ArrayList<>();
    for (String part : c.getOrDefault(createdKey, "").split(",")) {
      String name = part.strip();
      if (!name.isEmpty() && !QUEUE_NAME.matcher(name).matches()) {
        throw new QueueConfigException(createdKey, "queue name '" + name + "' may hold only letters, digits, '_' "
            + "and '-'");
      }
      if (!name.isEmpty() && !out.contains(name)) {
        out.add(name);
      }
    }
    return out;
  }

  /**
   * A created queue: a leaf, or, where queues were created under it in turn (flexible creation of a deeper path), a
   * created parent that creates as its own parent {@code auto} does.
   */
  private static void readCreated(Map<String, String> c, String path, AutoCreation auto,
      Map<String, List<String>> out, Map<String, AutoCreation> autoCreating, Set<String> createdHere) {
    List<String> names = auto.mode() == AutoCreation.Mode.FLEXIBLE ? createdNames(c, path) : List.of();
    out.put(path, names);
    if (names.isEmpty()) {
      return;
    }
    autoCreating.put(path, auto);
    for (String name : names) {
      createdHere.add(path + "." + name);
      readCreated(c, path + "." + name, auto, out, autoCreating, createdHere);
    }
  }

  /**
   * Keys aimed at a queue that the {@code .queues} lists do not declare. CapacityScheduler ignores them (they are
   * what an admin leaves behind after removing a queue or replacing {@code root.default}); so does Spindle, but it
   * names each with the declared queue nearest to it, because a typo in a queue name would lose a limit silently.
   */
  private List<QueueTree.IgnoredKey> keysOfUndeclaredQueues(Map<String, String> c, Set<String> known) {
    List<QueueTree.IgnoredKey> ignored = new ArrayList<>();
    for (String key : c.keySet()) {
      if (!key.startsWith(PREFIX + QueueTree.ROOT + ".")) {
        continue;
      }
      String rest = key.substring(PREFIX.length());
      String owner = longestQueuePrefix(rest, known);
      String suffix = rest.substring(owner.length() + 1);
      if (suffix.startsWith(SPINDLE)) {
        if (!SPINDLE_QUEUE_KEYS.contains(suffix) && !extraSpindleKeys.contains(suffix)) {
          throw new QueueConfigException(key, "unknown Spindle queue key '" + suffix + "' (known: "
              + new java.util.TreeSet<>(union(SPINDLE_QUEUE_KEYS, extraSpindleKeys)) + ")");
        }
        continue;
      }
      int dot = suffix.indexOf('.');
      if (dot < 0) {
        continue;
      }
      String first = suffix.substring(0, dot);
      String last = suffix.substring(suffix.lastIndexOf('.') + 1);
      boolean aimsAtQueue = STANDARD_QUEUE_KEYS.contains(last) || suffix.substring(dot + 1).startsWith(SPINDLE);
      if (aimsAtQueue && QUEUE_NAME.matcher(first).matches() && !isCapacitySchedulerSubProperty(first)) {
        String queue = owner + "." + first;
        ignored.add(new QueueTree.IgnoredKey(key, queue, nearest(queue, known)));
      }
    }
    return ignored;
  }

  /** The declared path fewest single-character edits away from {@code path}; ties go to the first declared. */
  private static String nearest(String path, Set<String> known) {
    String best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (String k : known) {
      int d = editDistance(path, k);
      if (d < bestDistance) {
        best = k;
        bestDistance = d;
      }
    }
    return best;
  }

  private static int editDistance(String a, String b) {
    int[] prev = new int[b.length() + 1];
    int[] cur = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      cur[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int substitute = prev[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
        cur[j] = Math.min(substitute, Math.min(prev[j], cur[j - 1]) + 1);
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[b.length()];
  }

  private static Set<String> union(Set<String> a, Set<String> b) {
    Set<String> u = new HashSet<>(a);
    u.addAll(b);
    return u;
  }

  /** Per-queue CapacityScheduler properties that themselves contain dots; not queue names. */
  private static boolean isCapacitySchedulerSubProperty(String first) {
    return first.equals("accessible-node-labels") || first.equals("ordering-policy")
        || first.equals("leaf-queue-template") || first.equals("auto-queue-creation-v2")
        || first.equals("auto-create-child-queue") || first.equals("default-node-label-expression")
        || first.equals("app-lifetime") || first.equals("disable_preemption");
  }

  /** The longest declared queue path that {@code rest} continues; looked up per dot so huge trees stay linear. */
  private static String longestQueuePrefix(String rest, Set<String> known) {
    for (int dot = rest.lastIndexOf('.'); dot > 0; dot = rest.lastIndexOf('.', dot - 1)) {
      String path = rest.substring(0, dot);
      if (known.contains(path)) {
        return path;
      }
    }
    return QueueTree.ROOT;
  }

  private QueueConfig readQueue(java.util.NavigableMap<String, String> c, String path, List<String> children) {
    Capacity capacity;
    Capacity maximum;
    if (path.equals(QueueTree.ROOT)) {
      for (String k : List.of(CAPACITY, MAXIMUM_CAPACITY)) {
        String v = c.get(key(path, k));
        Capacity given = v == null ? null : parseCapacity(key(path, k), v);
        if (given != null && !(given instanceof Capacity.Percent p && p.percent() == 100)
            && !(given instanceof Capacity.Weight) && !(k.equals(MAXIMUM_CAPACITY) && v.strip().equals("-1"))) {
          throw new QueueConfigException(key(path, k), "root always holds the whole cluster; only 100 is allowed");
        }
      }
      capacity = new Capacity.Percent(100);
      maximum = new Capacity.Percent(100);
    } else {
      String capKey = key(path, CAPACITY);
      String raw = c.get(capKey);
      // Unset is 0, as CapacityScheduler reads it: a queue with no guarantee of its own, which still borrows.
      capacity = raw == null ? new Capacity.Percent(0) : parseCapacity(capKey, raw);
      String maxKey = key(path, MAXIMUM_CAPACITY);
      String rawMax = c.get(maxKey);
      // -1 is CapacityScheduler's "undefined": the parent's maximum, as when the key is absent.
      maximum = rawMax == null || rawMax.strip().equals("-1") ? new Capacity.Percent(DEFAULT_MAXIMUM_PERCENT)
          : parseCapacity(maxKey, rawMax);
      if (maximum instanceof Capacity.Weight) {
        throw new QueueConfigException(maxKey, "'" + rawMax + "': a maximum-capacity cannot be a weight; give a "
            + "percentage or an absolute resource");
      }
      checkMaximumNotBelowCapacity(maxKey, capacity, maximum);
    }
    double ulf = parseNumber(c, key(path, USER_LIMIT_FACTOR), DEFAULT_USER_LIMIT_FACTOR);
    if (!(ulf > 0 || ulf == -1)) {
      throw new QueueConfigException(key(path, USER_LIMIT_FACTOR), "must be above 0, or -1 for no per-user limit; was " + ulf);
    }
    double weight = parseNumber(c, key(path, WEIGHT), DEFAULT_WEIGHT);
    if (!(weight > 0)) {
      throw new QueueConfigException(key(path, WEIGHT), "must be above 0; was " + weight);
    }
    Long extensions = parseWholeKey(c, key(path, PREEMPTION_MAX_EXTENSIONS), MAX_EXTENSIONS_LIMIT);
    Long extensionSeconds = parseWholeKey(c, key(path, PREEMPTION_MAX_EXTENSION_SECONDS), MAX_EXTENSION_SECONDS_LIMIT);
    Long minRuntimeSeconds = parseWholeKey(c, key(path, PREEMPTION_MIN_RUNTIME_SECONDS), PREEMPTION_SECONDS_LIMIT);
    Long delaySeconds = parseWholeKey(c, key(path, PREEMPTION_DELAY_SECONDS), PREEMPTION_SECONDS_LIMIT);
    QueuePreemption preemption = new QueuePreemption(extensions == null ? null : extensions.intValue(),
        extensionSeconds == null ? null : extensionSeconds * 1000, parseHadoopBoolean(c.get(key(path,
            DISABLE_PREEMPTION))), minRuntimeSeconds == null ? null : minRuntimeSeconds * 1000,
        delaySeconds == null ? null : delaySeconds * 1000);
    AppOrdering ordering = children.isEmpty() ? OrderingRulesParser.ordering(c, path) : AppOrdering.FIFO;
    OrderingRules orderingRules = children.isEmpty() ? OrderingRulesParser.rules(c, path) : OrderingRules.DEFAULTS;
    double mulp = parseNumber(c, key(path, MINIMUM_USER_LIMIT_PERCENT), 100);
    if (!(mulp >= 0)) {
      throw new QueueConfigException(key(path, MINIMUM_USER_LIMIT_PERCENT), "must not be negative; was " + mulp);
    }
    return new QueueConfig(path, children, capacity, maximum, ulf, weight, preemption, ordering, mulp,
        QueueLabels.read(c, path), orderingRules, hotSpares(c, path, children));
  }

  /**
   * A leaf's hot spares per rack. Not inherited and refused on a parent: each leaf that set it would hold its own
   * nodes in every rack, so a value on a parent would multiply by its leaves without anyone having asked for that.
   */
  private static int hotSpares(Map<String, String> c, String path, List<String> children) {
    Long n = parseWholeKey(c, key(path, HOT_SPARES_PER_RACK), MAX_HOT_SPARES_PER_RACK);
    if (n != null && n > 0 && !children.isEmpty()) {
      throw new QueueConfigException(key(path, HOT_SPARES_PER_RACK), "is read on leaf queues only (" + path
          + " is a parent): set it on each leaf whose gangs should restart on spare nodes");
    }
    return n == null ? 0 : n.intValue();
  }

  /**
   * Hadoop's reading of a boolean ({@code Configuration.getBoolean}): {@code true} or {@code false} in any case;
   * anything else is as if the key were absent. CapacityScheduler reads {@code disable_preemption} so, and starts with
   * any value: so must Spindle.
   */
  private static Boolean parseHadoopBoolean(String raw) {
    if (raw == null) {
      return null;
    }
    String v = raw.strip();
    return v.equalsIgnoreCase("true") ? Boolean.TRUE : v.equalsIgnoreCase("false") ? Boolean.FALSE : null;
  }

  /** A whole number in 0..max, or {@code null} when the key is absent (the queue inherits). */
  private static Long parseWholeKey(Map<String, String> c, String key, long max) {
    String raw = c.get(key);
    if (raw == null) {
      return null;
    }
    long v;
    try {
      v = Long.parseLong(raw.strip());
    } catch (NumberFormatException e) {
      throw new QueueConfigException(key, "'" + raw + "' is not a whole number");
    }
    if (v < 0 || v > max) {
      throw new QueueConfigException(key, v + " is outside 0.." + max);
    }
    return v;
  }

  private static void checkMaximumNotBelowCapacity(String maxKey, Capacity capacity, Capacity maximum) {
    if (capacity instanceof Capacity.Percent cap && maximum instanceof Capacity.Percent max
        && max.percent() + PERCENT_TOLERANCE < cap.percent()) {
      throw new QueueConfigException(maxKey,
          "maximum-capacity " + max.percent() + " is below capacity " + cap.percent());
    }
    if (capacity instanceof Capacity.Absolute cap && maximum instanceof Capacity.Absolute max) {
      Long[][] pairs = {{cap.memoryMb(), max.memoryMb()}, {cap.vcores(), max.vcores()}, {cap.gpuUnits(), max.gpuUnits()}};
      for (int i = 0; i < pairs.length; i++) {
        if (pairs[i][0] != null && pairs[i][1] != null && pairs[i][1] < pairs[i][0]) {
          throw new QueueConfigException(maxKey, "maximum-capacity " + max + " is below capacity " + cap + " in "
              + ResourceVector.dimensionName(i));
        }
      }
    }
  }

  /**
   * Siblings in weight mode share their parent by weight over the sum of their weights (all zero: nothing each),
   * as in CapacityScheduler. Returns the children with their share filled in, or none when they are not weighted.
   */
  private static List<QueueConfig> resolveWeights(QueueConfig parent, List<QueueConfig> kids) {
    long weighted = kids.stream().filter(k -> k.capacity() instanceof Capacity.Weight).count();
    if (weighted == 0) {
      return List.of();
    }
    if (weighted != kids.size()) {
      throw new QueueConfigException(key(parent.path(), QUEUES), "children of " + parent.path()
          + " mix weights (Nw) with percentage or absolute capacities; use one form for all siblings");
    }
    double sum = kids.stream().mapToDouble(k -> ((Capacity.Weight) k.capacity()).weight()).sum();
    List<QueueConfig> out = new ArrayList<>();
    for (QueueConfig k : kids) {
      double w = ((Capacity.Weight) k.capacity()).weight();
      Capacity.Weight resolved = new Capacity.Weight(w, sum == 0 ? 0 : w * 100 / sum);
      checkMaximumNotBelowCapacity(key(k.path(), MAXIMUM_CAPACITY), new Capacity.Percent(resolved.percent()),
          k.maximumCapacity());
      out.add(k.withCapacity(resolved));
    }
    return out;
  }

  private static void checkChildren(QueueConfig parent, List<QueueConfig> kids) {
    String key = key(parent.path(), QUEUES);
    if (kids.stream().allMatch(k -> k.capacity() instanceof Capacity.Weight)) {
      return; // Shares by weight always add up to the parent.
    }
    long percents = kids.stream().filter(k -> k.capacity() instanceof Capacity.Percent).count();
    if (percents != 0 && percents != kids.size()) {
      throw new QueueConfigException(key, "children of " + parent.path()
          + " mix percentage and absolute capacities; use one form for all siblings");
    }
    if (percents == kids.size()) {
      double sum = kids.stream().mapToDouble(k -> ((Capacity.Percent) k.capacity()).percent()).sum();
      boolean parentEmpty = parent.capacity() instanceof Capacity.Percent p && p.percent() == 0;
      if (Math.abs(sum - 100) > 1e-3 && !(parentEmpty && sum == 0)) {
        throw new QueueConfigException(key, "capacities of the children of " + parent.path() + " sum to "
            + trim(sum) + ", not 100 (" + describe(kids) + ")");
      }
      return;
    }
    if (parent.capacity() instanceof Capacity.Absolute p) {
      long[] sum = new long[3];
      for (QueueConfig k : kids) {
        Capacity.Absolute a = (Capacity.Absolute) k.capacity();
        // Saturate rather than wrap: an absurd child must still be caught as exceeding its parent.
        sum[0] = saturatingAdd(sum[0], a.memoryMb());
        sum[1] = saturatingAdd(sum[1], a.vcores());
        sum[2] = saturatingAdd(sum[2], a.gpuUnits());
      }
      Long[] limit = {p.memoryMb(), p.vcores(), p.gpuUnits()};
      for (int i = 0; i < 3; i++) {
        if (limit[i] != null && sum[i] > limit[i]) {
          throw new QueueConfigException(key, "absolute capacities of the children of " + parent.path()
              + " add up to more " + ResourceVector.dimensionName(i) + " than the parent's " + p);
        }
      }
    }
  }

  private static long saturatingAdd(long sum, Long amount) {
    if (amount == null) {
      return sum;
    }
    long r = sum + amount;
    return ((sum ^ r) & (amount ^ r)) < 0 ? Long.MAX_VALUE : r;
  }

  private static String describe(List<QueueConfig> kids) {
    StringBuilder s = new StringBuilder();
    for (QueueConfig k : kids.subList(0, Math.min(20, kids.size()))) {
      s.append(s.length() == 0 ? "" : ", ").append(k.name()).append('=').append(k.capacity());
    }
    return kids.size() > 20 ? s + ", … (" + kids.size() + " children)" : s.toString();
  }

  private static String trim(double d) {
    return d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d);
  }

  static Capacity parseCapacity(String key, String raw) {
    String v = raw.strip();
    if (v.startsWith("[")) {
      return parseAbsolute(key, v);
    }
    if (v.endsWith("w")) {
      double weight;
      try {
        weight = parseDecimal(v.substring(0, v.length() - 1).strip());
      } catch (NumberFormatException e) {
        throw new QueueConfigException(key, "'" + raw + "' is not a weight (a number followed by w, e.g. 2w)");
      }
      if (!(weight >= 0) || Double.isInfinite(weight)) {
        throw new QueueConfigException(key, "a weight must not be negative; was " + raw);
      }
      return new Capacity.Weight(weight, Double.NaN);
    }
    double pct;
    try {
      pct = parseDecimal(v.endsWith("%") ? v.substring(0, v.length() - 1) : v);
    } catch (NumberFormatException e) {
      throw new QueueConfigException(key, "'" + raw + "' is neither a percentage nor [memory=…,vcores=…,yarn.io/gpu=…]");
    }
    if (!(pct >= 0 && pct <= 100)) {
      throw new QueueConfigException(key, "must be between 0 and 100 percent; was " + raw);
    }
    return new Capacity.Percent(pct);
  }

  private static Capacity.Absolute parseAbsolute(String key, String v) {
    if (!v.endsWith("]")) {
      throw new QueueConfigException(key, "malformed absolute resource '" + v + "': missing ']'");
    }
    String body = v.substring(1, v.length() - 1).strip();
    if (body.isEmpty()) {
      throw new QueueConfigException(key, "malformed absolute resource '" + v + "': names no resource");
    }
    Long memory = null;
    Long vcores = null;
    Long gpuUnits = null;
    Set<String> seen = new HashSet<>();
    for (String part : body.split(",", -1)) {
      int eq = part.indexOf('=');
      if (eq < 0) {
        throw new QueueConfigException(key, "malformed absolute resource '" + v + "': '" + part.strip()
            + "' is not name=value");
      }
      String name = part.substring(0, eq).strip().toLowerCase(Locale.ROOT);
      String amount = part.substring(eq + 1).strip();
      String canonical = name.equals("memory-mb") ? "memory" : name;
      if (!seen.add(canonical)) {
        throw new QueueConfigException(key, "malformed absolute resource '" + v + "': " + name + " given twice");
      }
      switch (canonical) {
        case "memory" -> memory = parseMemoryMb(key, v, amount);
        case "vcores" -> vcores = parseWhole(key, v, name, amount);
        case "yarn.io/gpu" -> gpuUnits = scaled(key, v, name, parseWhole(key, v, name, amount), ResourceVector.GPU_UNITS);
        default -> throw new QueueConfigException(key, "malformed absolute resource '" + v + "': unknown resource '"
            + name + "' (known: memory, memory-mb, vcores, yarn.io/gpu)");
      }
    }
    return new Capacity.Absolute(memory, vcores, gpuUnits);
  }

  private static long parseMemoryMb(String key, String v, String amount) {
    long factor = 1;
    String digits = amount;
    for (String[] unit : new String[][] {{"Ti", "1048576"}, {"Gi", "1024"}, {"Mi", "1"}}) {
      if (amount.endsWith(unit[0])) {
        factor = Long.parseLong(unit[1]);
        digits = amount.substring(0, amount.length() - 2);
      }
    }
    return scaled(key, v, "memory", parseWhole(key, v, "memory", digits), factor);
  }

  private static long scaled(String key, String v, String name, long amount, long factor) {
    try {
      return Math.multiplyExact(amount, factor);
    } catch (ArithmeticException e) {
      throw new QueueConfigException(key, "malformed absolute resource '" + v + "': " + name + " is too large");
    }
  }

  private static long parseWhole(String key, String v, String name, String amount) {
    try {
      long n = Long.parseLong(amount.strip());
      if (n < 0) {
        throw new QueueConfigException(key, "malformed absolute resource '" + v + "': " + name + " is negative");
      }
      return n;
    } catch (NumberFormatException e) {
      throw new QueueConfigException(key, "malformed absolute resource '" + v + "': " + name + "='" + amount
          + "' is not a whole number");
    }
  }

  private static double parseNumber(Map<String, String> c, String key, double dflt) {
    String raw = c.get(key);
    if (raw == null) {
      return dflt;
    }
    try {
      return parseDecimal(raw.strip());
    } catch (NumberFormatException e) {
      throw new QueueConfigException(key, "'" + raw + "' is not a number");
    }
  }

  /** Plain decimal numbers only: Java's own parser would also take "60d", "0x1p4" and "Infinity". */
  private static double parseDecimal(String s) {
    if (!DECIMAL.matcher(s).matches()) {
      throw new NumberFormatException(s);
    }
    return Double.parseDouble(s);
  }

  /**
   * {@code entries} with {@code created} (full paths of leaves created on submission, in creation order) recorded
   * under {@link #AUTO_CREATED} of their parents, replacing what {@code entries} recorded there.
   */
  public static Map<String, String> withCreated(Map<String, String> entries, java.util.Collection<String> created) {
    Map<String, String> out = new LinkedHashMap<>(entries);
    out.keySet().removeIf(k -> k.startsWith(PREFIX) && k.endsWith("." + AUTO_CREATED));
    for (String leaf : created) {
      int dot = leaf.lastIndexOf('.');
      out.merge(key(leaf.substring(0, dot), AUTO_CREATED), leaf.substring(dot + 1), (a, b) -> a + "," + b);
    }
    return out;
  }

  /** Whether {@code name} may name a queue (one path segment). */
  public static boolean isQueueName(String name) {
    return name != null && QUEUE_NAME.matcher(name).matches();
  }

  public static String key(String queuePath, String suffix) {
    return PREFIX + queuePath + "." + suffix;
  }
}
