package io.spindle.core.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.spindle.core.model.ResourceVector;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class QueueConfigParserTest {

  private static final String P = QueueConfigParser.PREFIX;

  /** root -> eng (60), research (40); eng -> train (70), serve (30); research -> a (50), b (50). */
  private static Map<String, String> threeLevel() {
    Map<String, String> c = new LinkedHashMap<>();
    c.put(P + "root.queues", "eng,research");
    c.put(P + "root.eng.capacity", "60");
    c.put(P + "root.research.capacity", "40");
    c.put(P + "root.eng.queues", "train,serve");
    c.put(P + "root.eng.train.capacity", "70");
    c.put(P + "root.eng.serve.capacity", "30");
    c.put(P + "root.research.queues", "a,b");
    c.put(P + "root.research.a.capacity", "50");
    c.put(P + "root.research.b.capacity", "50");
    return c;
  }

  private static Map<String, String> with(Map<String, String> base, String... kv) {
    Map<String, String> c = new LinkedHashMap<>(base);
    for (int i = 0; i < kv.length; i += 2) {
      if (kv[i + 1] == null) {
        c.remove(P + kv[i]);
      } else {
        c.put(P + kv[i], kv[i + 1]);
      }
    }
    return c;
  }

  private static QueueTree parse(Map<String, String> c) {
    return new QueueConfigParser().parse(c);
  }

  /** Parses, expects a rejection, checks key and reason fragment; returns the exception for further checks. */
  private static QueueConfigException rejects(Map<String, String> c, String expectedKey, String... fragments) {
    QueueConfigException e = catchThrowableOfType(QueueConfigException.class, () -> parse(c));
    assertThat(e).as("expected a QueueConfigException for key %s", expectedKey).isNotNull();
    assertThat(e.key()).isEqualTo(P + expectedKey);
    assertThat(e.getMessage()).startsWith(P + expectedKey + ": ");
    for (String f : fragments) {
      assertThat(e.getMessage()).contains(f);
    }
    return e;
  }

  // ---------------------------------------------------------------- valid trees

  @Test
  void parsesThreeLevelTreeWithPathsLeavesAndCapacities() {
    QueueTree tree = parse(threeLevel());

    assertThat(tree.size()).isEqualTo(7);
    assertThat(tree.all()).extracting(QueueConfig::path).containsExactly(
        "root", "root.eng", "root.eng.train", "root.eng.serve", "root.research", "root.research.a",
        "root.research.b");
    assertThat(tree.leaves()).extracting(QueueConfig::path).containsExactly(
        "root.eng.train", "root.eng.serve", "root.research.a", "root.research.b");
    assertThat(tree.leaves()).allMatch(QueueConfig::isLeaf);

    QueueConfig root = tree.root();
    assertThat(root.path()).isEqualTo("root");
    assertThat(root.parentPath()).isNull();
    assertThat(root.children()).containsExactly("eng", "research");
    assertThat(root.capacity()).isEqualTo(new Capacity.Percent(100));
    assertThat(root.maximumCapacity()).isEqualTo(new Capacity.Percent(100));
    assertThat(tree.children(root)).extracting(QueueConfig::path).containsExactly("root.eng", "root.research");

    QueueConfig eng = tree.get("root.eng").orElseThrow();
    assertThat(eng.isLeaf()).isFalse();
    assertThat(eng.name()).isEqualTo("eng");
    assertThat(eng.parentPath()).isEqualTo("root");
    assertThat(eng.children()).containsExactly("train", "serve");
    assertThat(eng.capacity()).isEqualTo(new Capacity.Percent(60));

    assertThat(tree.get("root.research").orElseThrow().capacity()).isEqualTo(new Capacity.Percent(40));
    assertThat(tree.get("root.eng.train").orElseThrow().capacity()).isEqualTo(new Capacity.Percent(70));
    assertThat(tree.get("root.eng.serve").orElseThrow().capacity()).isEqualTo(new Capacity.Percent(30));
    assertThat(tree.get("root.research.a").orElseThrow().capacity()).isEqualTo(new Capacity.Percent(50));
    assertThat(tree.get("root.research.b").orElseThrow().capacity()).isEqualTo(new Capacity.Percent(50));
    assertThat(tree.get("root.eng.train").orElseThrow().parentPath()).isEqualTo("root.eng");
    assertThat(tree.get("root.nosuch")).isEmpty();
  }

  @Test
  void appliesDefaultsForMaximumCapacityUserLimitFactorAndWeight() {
    QueueTree tree = parse(threeLevel());
    for (QueueConfig q : tree.all()) {
      assertThat(q.maximumCapacity()).as(q.path()).isEqualTo(new Capacity.Percent(100));
      assertThat(q.userLimitFactor()).as(q.path()).isEqualTo(1.0);
      assertThat(q.weight()).as(q.path()).isEqualTo(1.0);
    }
    assertThat(QueueConfigParser.DEFAULT_MAXIMUM_PERCENT).isEqualTo(100.0);
    assertThat(QueueConfigParser.DEFAULT_USER_LIMIT_FACTOR).isEqualTo(1.0);
    assertThat(QueueConfigParser.DEFAULT_WEIGHT).isEqualTo(1.0);
  }

  @Test
  void readsExplicitMaximumUserLimitFactorAndWeight() {
    QueueTree tree = parse(with(threeLevel(),
        "root.eng.maximum-capacity", "80",
        "root.eng.train.user-limit-factor", "2.5",
        "root.eng.serve.user-limit-factor", "-1",
        "root.research.a.spindle.weight", "3",
        "root.eng.capacity", " 60% "));
    assertThat(tree.get("root.eng").orElseThrow().maximumCapacity()).isEqualTo(new Capacity.Percent(80));
    assertThat(tree.get("root.eng").orElseThrow().capacity()).isEqualTo(new Capacity.Percent(60));
    assertThat(tree.get("root.eng.train").orElseThrow().userLimitFactor()).isEqualTo(2.5);
    assertThat(tree.get("root.eng.serve").orElseThrow().userLimitFactor()).isEqualTo(-1.0);
    assertThat(tree.get("root.research.a").orElseThrow().weight()).isEqualTo(3.0);
    assertThat(tree.get("root.research.b").orElseThrow().weight()).isEqualTo(1.0);
  }

  @Test
  void parsesAbsoluteCapacityInMegabytesVcoresAndGpuUnits() {
    Map<String, String> c = with(threeLevel(),
        "root.eng.capacity", "[memory=1024Gi,vcores=64,yarn.io/gpu=8]",
        "root.research.capacity", "[memory=512Gi,vcores=32,yarn.io/gpu=4]",
        "root.eng.train.capacity", "[memory=512Gi,vcores=32,yarn.io/gpu=4]",
        "root.eng.serve.capacity", "[memory-mb=1024,vcores=8]",
        "root.eng.serve.maximum-capacity", "[memory=2Ti]");
    QueueTree tree = parse(c);

    Capacity eng = tree.get("root.eng").orElseThrow().capacity();
    assertThat(eng).isEqualTo(new Capacity.Absolute(1_048_576L, 64L, 8 * 840L));
    assertThat(eng).isEqualTo(new Capacity.Absolute(1_048_576L, 64L, 8 * ResourceVector.GPU_UNITS));
    assertThat(tree.get("root.eng.train").orElseThrow().capacity())
        .isEqualTo(new Capacity.Absolute(524_288L, 32L, 4 * 840L));
    // A dimension the admin leaves out is null; memory-mb is plain megabytes.
    assertThat(tree.get("root.eng.serve").orElseThrow().capacity())
        .isEqualTo(new Capacity.Absolute(1024L, 8L, null));
    assertThat(tree.get("root.eng.serve").orElseThrow().maximumCapacity())
        .isEqualTo(new Capacity.Absolute(2L * 1024 * 1024, null, null));
    // Percent children under an absolute parent are still percent.
    assertThat(tree.get("root.research.a").orElseThrow().capacity()).isEqualTo(new Capacity.Percent(50));
  }

  @Test
  void findsLeafByShortNameAndFullPath() {
    QueueTree tree = parse(threeLevel());
    QueueConfig train = tree.get("root.eng.train").orElseThrow();
    assertThat(tree.leaf("train")).contains(train);
    assertThat(tree.leaf("root.eng.train")).contains(train);
    assertThat(tree.leaf("b")).contains(tree.get("root.research.b").orElseThrow());
    assertThat(tree.leaf("root.research.b")).contains(tree.get("root.research.b").orElseThrow());
    // Parents are not leaves, whichever way they are named.
    assertThat(tree.leaf("eng")).isEmpty();
    assertThat(tree.leaf("root.eng")).isEmpty();
    assertThat(tree.leaf("root")).isEmpty();
    assertThat(tree.leaf("nosuch")).isEmpty();
    assertThat(tree.leaf("root.eng.nosuch")).isEmpty();
    assertThat(tree.leaf(null)).isEmpty();
  }

  @Test
  void readsAQueuesNodeLabelsAndItsCapacitiesInThem() {
    QueueTree tree = parse(with(threeLevel(),
        "root.eng.accessible-node-labels", "gpu, fpga",
        "root.eng.accessible-node-labels.gpu.capacity", "60",
        "root.eng.accessible-node-labels.gpu.maximum-capacity", "-1",
        "root.research.accessible-node-labels", " ",
        "root.research.accessible-node-labels.gpu.capacity", "40",
        "root.eng.accessible-node-labels.fpga.capacity", "100",
        "root.eng.allow-zero-capacity-sum", "true", // Their children take no label capacity of their own.
        "root.research.allow-zero-capacity-sum", "true"));
    QueueLabels eng = tree.get("root.eng").orElseThrow().labels();
    assertThat(eng.accessible()).containsExactlyInAnyOrder("gpu", "fpga");
    assertThat(eng.capacity()).isEqualTo(Map.of("gpu", new Capacity.Percent(60), "fpga", new Capacity.Percent(100)));
    assertThat(eng.maximum()).as("-1 is undefined: 100").isEmpty();
    assertThat(tree.get("root.research").orElseThrow().labels().accessible()).isEmpty();
    assertThat(tree.get("root.eng.train").orElseThrow().labels()).isEqualTo(QueueLabels.INHERIT);

    assertThatThrownBy(() -> parse(with(threeLevel(), "root.eng.accessible-node-labels.gpu.capacity", "60",
        "root.eng.accessible-node-labels.gpu.maximum-capacity", "40")))
        .hasMessageContaining("yarn.scheduler.capacity.root.eng.accessible-node-labels.gpu.maximum-capacity")
        .hasMessageContaining("below the capacity");
    assertThatThrownBy(() -> parse(with(threeLevel(), "root.eng.accessible-node-labels.gpu.capacity", "lots")))
        .hasMessageContaining("root.eng.accessible-node-labels.gpu.capacity");
    rejects(with(threeLevel(), "root.eng.accessible-node-labels.gpu.capacity", "60",
        "root.research.accessible-node-labels.gpu.capacity", "30"), "root.eng.accessible-node-labels.gpu.capacity",
        "children of root in label gpu sum to 90");
    rejects(with(threeLevel(), "root.eng.accessible-node-labels", "gpu"), "root.eng.accessible-node-labels.gpu.capacity",
        "sum to 0, not 100 (0 only where root has none of the label");
  }

  @Test
  void ignoresNonQueueKeysOfAQueue() {
    Map<String, String> c = with(threeLevel(),
        "root.eng.acl_submit_applications", "alice,bob eng",
        "root.eng.train.ordering-policy.fair.enable-size-based-weight", "true",
        "root.research.state", "RUNNING",
        "maximum-applications", "10000");
    c.put("yarn.resourcemanager.scheduler.class", "whatever");
    QueueTree tree = parse(c);
    assertThat(tree).usingRecursiveComparison().isEqualTo(parse(threeLevel()));
    assertThat(tree.size()).isEqualTo(7);
  }

  @Test
  void readsALeafsOrderingPolicyAndNoParents() {
    QueueTree tree = parse(with(threeLevel(), "root.eng.train.ordering-policy", "fair",
        "root.eng.ordering-policy", "utilization"));
    assertThat(tree.get("root.eng.train").orElseThrow().ordering()).isEqualTo(AppOrdering.FAIR);
    assertThat(tree.get("root.eng.serve").orElseThrow().ordering()).isEqualTo(AppOrdering.FIFO);
    assertThat(tree.get("root.eng").orElseThrow().ordering()).isEqualTo(AppOrdering.FIFO);
  }

  @Test
  void acceptsExtraSpindleKeysDeclaredByOtherComponents() {
    Map<String, String> c = with(threeLevel(), "root.eng.spindle.preemption", "off");
    assertThat(new QueueConfigParser(Set.of("spindle.preemption")).parse(c).size()).isEqualTo(7);
    rejects(c, "root.eng.spindle.preemption", "unknown Spindle queue key", "spindle.preemption");
  }

  @Test
  void acceptsChildrenOfAnEmptyParentSummingToZero() {
    QueueTree tree = parse(with(threeLevel(),
        "root.eng.capacity", "100", "root.research.capacity", "0",
        "root.research.a.capacity", "0", "root.research.b.capacity", "0"));
    assertThat(tree.get("root.research.a").orElseThrow().capacity()).isEqualTo(new Capacity.Percent(0));
  }

  @Test
  void acceptsFractionalPercentagesThatSumTo100() {
    QueueTree tree = parse(with(threeLevel(),
        "root.research.queues", "a,b,c",
        "root.research.a.capacity", "33.33",
        "root.research.b.capacity", "33.33",
        "root.research.c.capacity", "33.34"));
    assertThat(tree.leaves()).hasSize(5);
  }

  // ---------------------------------------------------------------- one test per validation error path

  @Test
  void rejectsChildrenNotSummingTo100() {
    rejects(with(threeLevel(), "root.eng.serve.capacity", "20"),
        "root.eng.queues", "sum to 90", "not 100");
  }

  @Test
  void rejectsRootChildrenNotSummingTo100() {
    rejects(with(threeLevel(), "root.research.capacity", "50"), "root.queues", "sum to 110", "not 100");
  }

  @Test
  void ignoresKeysOfAnUndeclaredQueueAndNamesTheNearestDeclaredOne() {
    // What CapacityScheduler starts with: a typo'd or removed queue's keys are ignored. Spindle says which.
    QueueTree tree = parse(with(threeLevel(), "root.eng.tran.capacity", "10", "root.eng.tran.spindle.weight", "2",
        "root.ops.maximum-capacity", "10"));
    assertThat(tree.get("root.eng.tran")).isEmpty();
    assertThat(tree.ignoredKeys()).extracting(QueueTree.IgnoredKey::key).containsExactly(
        P + "root.eng.tran.capacity", P + "root.eng.tran.spindle.weight", P + "root.ops.maximum-capacity");
    assertThat(tree.ignoredKeys().get(0).nearest()).isEqualTo("root.eng.train");
    assertThat(tree.ignoredKeys().get(0).describe()).contains("root.eng.tran.capacity")
        .contains("queue 'root.eng.tran' is not declared").contains("did you mean 'root.eng.train'");
    assertThat(tree.ignoredKeys().get(2).queue()).isEqualTo("root.ops");
  }

  @Test
  void theShippedDefaultQueueKeysStayWhenRootIsGivenOtherChildren() {
    // The first edit most admins make to Hadoop's capacity-scheduler.xml: root.queues=a,b, root.default.* left.
    QueueTree tree = parse(Map.of(P + "root.queues", "a,b", P + "root.a.capacity", "50", P + "root.b.capacity", "50",
        P + "root.default.capacity", "100", P + "root.default.user-limit-factor", "1",
        P + "root.default.maximum-capacity", "100", P + "root.default.state", "RUNNING",
        P + "root.default.acl_submit_applications", "*"));
    assertThat(tree.leaves()).extracting(QueueConfig::path).containsExactly("root.a", "root.b");
    assertThat(tree.ignoredKeys()).extracting(QueueTree.IgnoredKey::queue).containsOnly("root.default").hasSize(3);
  }

  @Test
  void rejectsDuplicateSiblingQueue() {
    rejects(with(threeLevel(), "root.eng.queues", "train,serve,train"),
        "root.eng.queues", "duplicate queue", "train");
  }

  @Test
  void aLeafNameMayRecurUnderTwoParentsAndIsThenNamedByItsPath() {
    QueueTree tree = parse(with(threeLevel(),
        "root.research.queues", "train,b",
        "root.research.a.capacity", null,
        "root.research.train.capacity", "50"));
    assertThat(tree.leaves()).extracting(QueueConfig::path)
        .containsExactly("root.eng.train", "root.eng.serve", "root.research.train", "root.research.b");
    assertThat(tree.leaf("root.research.train")).isPresent();
    assertThat(tree.leaf("train")).isEmpty();
    assertThat(tree.lookup("train")).isEqualTo(
        new QueueTree.Lookup.Ambiguous("train", List.of("root.eng.train", "root.research.train")));
    assertThat(tree.whyNotALeaf("train").orElseThrow()).contains("ambiguous")
        .contains("root.eng.train and root.research.train").contains("full path");
    assertThat(tree.leaf("serve")).isPresent();
    assertThat(tree.whyNotALeaf("eng").orElseThrow()).contains("'eng' is a parent queue");
  }

  @Test
  void rejectsPercentMaximumBelowCapacity() {
    rejects(with(threeLevel(), "root.eng.maximum-capacity", "50"),
        "root.eng.maximum-capacity", "below capacity");
  }

  @Test
  void rejectsAbsoluteMaximumBelowCapacity() {
    rejects(with(threeLevel(),
            "root.eng.capacity", "[memory=100Gi,vcores=10]",
            "root.research.capacity", "[memory=100Gi,vcores=10]",
            "root.eng.maximum-capacity", "[memory=200Gi,vcores=5]"),
        "root.eng.maximum-capacity", "below capacity", "vcores");
  }

  @Test
  void rejectsAbsoluteWithoutClosingBracket() {
    rejects(with(threeLevel(), "root.eng.train.maximum-capacity", "[memory=1024Gi,vcores=64"),
        "root.eng.train.maximum-capacity", "malformed absolute resource", "missing ']'");
  }

  @Test
  void rejectsAbsoluteWithUnknownResourceName() {
    rejects(with(threeLevel(), "root.eng.train.maximum-capacity", "[memory=10Gi,nvidia.com/gpu=2]"),
        "root.eng.train.maximum-capacity", "unknown resource 'nvidia.com/gpu'");
  }

  @Test
  void rejectsAbsoluteWithNonNumberAmount() {
    rejects(with(threeLevel(), "root.eng.train.maximum-capacity", "[memory=10Gi,vcores=many]"),
        "root.eng.train.maximum-capacity", "vcores='many'", "not a whole number");
  }

  @Test
  void rejectsAbsoluteWithNonNumberMemory() {
    rejects(with(threeLevel(), "root.eng.train.maximum-capacity", "[memory=ten]"),
        "root.eng.train.maximum-capacity", "memory='ten'", "not a whole number");
  }

  @Test
  void rejectsAbsoluteWithNegativeAmount() {
    rejects(with(threeLevel(), "root.eng.train.maximum-capacity", "[memory=10Gi,yarn.io/gpu=-1]"),
        "root.eng.train.maximum-capacity", "yarn.io/gpu is negative");
  }

  @Test
  void rejectsAbsoluteWithNameGivenTwice() {
    rejects(with(threeLevel(), "root.eng.train.maximum-capacity", "[vcores=4,vcores=8]"),
        "root.eng.train.maximum-capacity", "vcores given twice");
  }

  @Test
  void rejectsAbsoluteWithMemoryGivenTwiceUnderBothNames() {
    rejects(with(threeLevel(), "root.eng.train.maximum-capacity", "[memory=1Gi,memory-mb=1024]"),
        "root.eng.train.maximum-capacity", "given twice");
  }

  @Test
  void rejectsEmptyAbsolute() {
    rejects(with(threeLevel(), "root.eng.train.maximum-capacity", "[]"),
        "root.eng.train.maximum-capacity", "names no resource");
  }

  @Test
  void rejectsAbsolutePartThatIsNotNameValue() {
    rejects(with(threeLevel(), "root.eng.train.maximum-capacity", "[memory=1Gi,vcores]"),
        "root.eng.train.maximum-capacity", "'vcores' is not name=value");
  }

  @Test
  void rejectsAbsoluteAmountThatOverflows() {
    rejects(with(threeLevel(), "root.eng.train.maximum-capacity", "[yarn.io/gpu=9223372036854775807]"),
        "root.eng.train.maximum-capacity", "yarn.io/gpu");
    rejects(with(threeLevel(), "root.eng.train.maximum-capacity", "[memory=9223372036854775807Gi]"),
        "root.eng.train.maximum-capacity", "memory");
  }

  @Test
  void rejectsAbsoluteChildrenWhoseSumOverflows() {
    rejects(with(threeLevel(),
            "root.eng.capacity", "[vcores=10]",
            "root.research.capacity", "[vcores=10]",
            "root.eng.train.capacity", "[vcores=9223372036854775807]",
            "root.eng.serve.capacity", "[vcores=9223372036854775807]"),
        "root.eng.queues", "add up to more vcores than the parent's");
  }

  @Test
  void rejectsCapacityAbove100() {
    rejects(with(threeLevel(), "root.eng.train.capacity", "100.5"),
        "root.eng.train.capacity", "between 0 and 100", "100.5");
  }

  @Test
  void rejectsNegativeCapacity() {
    rejects(with(threeLevel(), "root.eng.train.capacity", "-10"),
        "root.eng.train.capacity", "between 0 and 100", "-10");
  }

  @Test
  void rejectsMaximumCapacityAbove100() {
    rejects(with(threeLevel(), "root.eng.maximum-capacity", "120"),
        "root.eng.maximum-capacity", "between 0 and 100");
  }

  @Test
  void rejectsNonNumericCapacity() {
    rejects(with(threeLevel(), "root.eng.train.capacity", "seventy"),
        "root.eng.train.capacity", "'seventy' is neither a percentage nor");
  }

  @Test
  void weightModeSharesTheParentByWeightOverTheSiblingsSum() {
    QueueTree tree = parse(with(threeLevel(), "root.eng.capacity", "3w", "root.research.capacity", "1w",
        "root.eng.train.capacity", "1.0w", "root.eng.serve.capacity", "1w"));
    ResourceVector cluster = ResourceVector.of(400_000, 400, 40);
    assertThat(tree.get("root.eng").orElseThrow().capacity()).isEqualTo(new Capacity.Weight(3, 75));
    assertThat(tree.get("root.eng").orElseThrow().capacity().resolveGuarantee(cluster).gpus()).isEqualTo(30);
    assertThat(tree.get("root.eng.train").orElseThrow().capacity()).isEqualTo(new Capacity.Weight(1, 50));
  }

  @Test
  void rejectsMixingWeightsWithPercentages() {
    rejects(with(threeLevel(), "root.eng.capacity", "2w"), "root.queues", "mix weights");
  }

  @Test
  void rejectsAWeightAsMaximumAndANegativeWeight() {
    rejects(with(threeLevel(), "root.eng.maximum-capacity", "2w"), "root.eng.maximum-capacity", "cannot be a weight");
    rejects(with(threeLevel(), "root.eng.capacity", "-2w", "root.research.capacity", "1w"), "root.eng.capacity",
        "must not be negative");
  }

  @Test
  void aMaximumOfMinusOneIsTheParentsMaximum() {
    QueueTree tree = parse(with(threeLevel(), "root.eng.maximum-capacity", "-1"));
    assertThat(tree.get("root.eng").orElseThrow().maximumCapacity()).isEqualTo(new Capacity.Percent(100));
  }

  @Test
  void rejectsMixingPercentAndAbsoluteSiblings() {
    rejects(with(threeLevel(), "root.eng.train.capacity", "[memory=10Gi]"),
        "root.eng.queues", "mix percentage and absolute");
  }

  @Test
  void rejectsAbsoluteChildrenExceedingAbsoluteParent() {
    rejects(with(threeLevel(),
            "root.eng.capacity", "[memory=100Gi,vcores=10,yarn.io/gpu=8]",
            "root.research.capacity", "[memory=100Gi,vcores=10,yarn.io/gpu=8]",
            "root.eng.train.capacity", "[memory=60Gi,vcores=5,yarn.io/gpu=6]",
            "root.eng.serve.capacity", "[memory=40Gi,vcores=5,yarn.io/gpu=3]"),
        "root.eng.queues", "add up to more gpu than the parent's");
  }

  @Test
  void acceptsAbsoluteChildrenExactlyFillingAbsoluteParent() {
    QueueTree tree = parse(with(threeLevel(),
        "root.eng.capacity", "[memory=100Gi,vcores=10,yarn.io/gpu=8]",
        "root.research.capacity", "[memory=100Gi,vcores=10,yarn.io/gpu=8]",
        "root.eng.train.capacity", "[memory=60Gi,vcores=5,yarn.io/gpu=5]",
        "root.eng.serve.capacity", "[memory=40Gi,vcores=5,yarn.io/gpu=3]"));
    assertThat(tree.get("root.eng.serve").orElseThrow().capacity())
        .isEqualTo(new Capacity.Absolute(40L * 1024, 5L, 3 * 840L));
  }

  @Test
  void aMissingCapacityIsZeroAsCapacitySchedulerReadsIt() {
    rejects(with(threeLevel(), "root.research.b.capacity", null), "root.research.queues", "sum to 50");
    QueueTree tree = parse(with(threeLevel(), "root.research.b.capacity", null, "root.research.a.capacity", "100"));
    assertThat(tree.get("root.research.b").orElseThrow().capacity()).isEqualTo(new Capacity.Percent(0));
  }

  @Test
  void rejectsMissingRootQueues() {
    rejects(with(threeLevel(), "root.queues", null), "root.queues", "missing", "root needs");
  }

  @Test
  void rejectsEmptyRootQueues() {
    rejects(with(threeLevel(), "root.queues", ","), "root.queues", "empty queue name");
  }

  @Test
  void rejectsEmptyQueueNameInList() {
    rejects(with(threeLevel(), "root.eng.queues", "train,,serve"), "root.eng.queues", "empty queue name");
  }

  @Test
  void rejectsBadQueueNameCharacters() {
    rejects(with(threeLevel(), "root.eng.queues", "train,se rve"),
        "root.eng.queues", "queue name 'se rve'", "letters, digits");
    rejects(with(threeLevel(), "root.eng.queues", "train,serve.x"),
        "root.eng.queues", "queue name 'serve.x'");
  }

  @Test
  void rejectsUserLimitFactorZero() {
    rejects(with(threeLevel(), "root.eng.train.user-limit-factor", "0"),
        "root.eng.train.user-limit-factor", "must be above 0, or -1");
  }

  @Test
  void rejectsUserLimitFactorNegativeOtherThanMinusOne() {
    rejects(with(threeLevel(), "root.eng.train.user-limit-factor", "-2"),
        "root.eng.train.user-limit-factor", "must be above 0, or -1");
  }

  @Test
  void rejectsUserLimitFactorNonNumber() {
    rejects(with(threeLevel(), "root.eng.train.user-limit-factor", "lots"),
        "root.eng.train.user-limit-factor", "'lots' is not a number");
  }

  @Test
  void rejectsWeightZero() {
    rejects(with(threeLevel(), "root.research.spindle.weight", "0"),
        "root.research.spindle.weight", "must be above 0");
  }

  @Test
  void rejectsWeightNegative() {
    rejects(with(threeLevel(), "root.research.a.spindle.weight", "-1.5"),
        "root.research.a.spindle.weight", "must be above 0", "-1.5");
  }

  @Test
  void rejectsWeightNonNumber() {
    rejects(with(threeLevel(), "root.research.a.spindle.weight", "NaN"),
        "root.research.a.spindle.weight", "not a number");
  }

  @Test
  void rejectsUnknownSpindleKey() {
    rejects(with(threeLevel(), "root.eng.spindle.nosuch", "1"),
        "root.eng.spindle.nosuch", "unknown Spindle queue key 'spindle.nosuch'", "spindle.weight");
  }

  @Test
  void rejectsRootCapacityOtherThan100() {
    rejects(with(threeLevel(), "root.capacity", "50"), "root.capacity", "only 100");
  }

  @Test
  void rejectsRootMaximumCapacityOtherThan100() {
    rejects(with(threeLevel(), "root.maximum-capacity", "[memory=10Gi]"), "root.maximum-capacity", "only 100");
  }

  @Test
  void acceptsRootCapacityOf100() {
    assertThat(parse(with(threeLevel(), "root.capacity", "100", "root.maximum-capacity", "100%"))
        .root().capacity()).isEqualTo(new Capacity.Percent(100));
  }

  @Test
  void exceptionIsAnIllegalArgumentExceptionNamingKeyFirst() {
    assertThatThrownBy(() -> parse(with(threeLevel(), "root.eng.capacity", "61")))
        .isInstanceOf(IllegalArgumentException.class)
        .isInstanceOf(QueueConfigException.class)
        .hasMessageStartingWith(P + "root.queues: ");
  }

  @Test
  void rejectsNumbersJavaWouldParseButAdminsDoNotWrite() {
    rejects(with(threeLevel(), "root.eng.train.capacity", "70d"), "root.eng.train.capacity", "neither a percentage");
    rejects(with(threeLevel(), "root.eng.train.capacity", "0x1p4"), "root.eng.train.capacity", "neither a percentage");
    rejects(with(threeLevel(), "root.eng.train.spindle.weight", "Infinity"), "root.eng.train.spindle.weight",
        "not a number");
  }

  @Test
  void rejectsTrailingCommas() {
    rejects(with(threeLevel(), "root.eng.queues", "train,serve,"), "root.eng.queues", "empty queue name");
    rejects(with(threeLevel(), "root.eng.train.maximum-capacity", "[memory=1Gi,]"),
        "root.eng.train.maximum-capacity", "is not name=value");
  }

  @Test
  void readsPerQueuePreemptionBoundsAndLeavesTheRestToInherit() {
    QueueTree tree = parse(with(threeLevel(), "root.eng.spindle.preemption.max-extensions", "3",
        "root.eng.train.spindle.preemption.max-extension-seconds", "45"));
    assertThat(tree.get("root.eng").orElseThrow().preemption()).isEqualTo(new QueuePreemption(3, null));
    assertThat(tree.get("root.eng.train").orElseThrow().preemption()).isEqualTo(new QueuePreemption(null, 45_000L));
    assertThat(tree.get("root.research.a").orElseThrow().preemption()).isEqualTo(QueuePreemption.INHERIT);
  }

  @Test
  void rejectsBadPreemptionBounds() {
    rejects(with(threeLevel(), "root.eng.spindle.preemption.max-extensions", "-1"),
        "root.eng.spindle.preemption.max-extensions", "outside 0..100");
    rejects(with(threeLevel(), "root.eng.spindle.preemption.max-extensions", "1.5"),
        "root.eng.spindle.preemption.max-extensions", "not a whole number");
    rejects(with(threeLevel(), "root.eng.spindle.preemption.max-extension-seconds", "86401"),
        "root.eng.spindle.preemption.max-extension-seconds", "outside 0..86400");
    rejects(with(threeLevel(), "root.eng.spindle.preemption.max-extensionz", "1"),
        "root.eng.spindle.preemption.max-extensionz", "unknown Spindle queue key");
  }

  @Test
  void readsPerQueueThrashGuardsAndLeavesTheRestToInherit() {
    QueueTree tree = parse(with(threeLevel(), "root.spindle.preemption.delay-seconds", "120",
        "root.eng.spindle.preemption.min-runtime-seconds", " 300 ", "root.eng.train.spindle.preemption.delay-seconds",
        "0"));
    assertThat(tree.root().preemption()).isEqualTo(new QueuePreemption(null, null, null, null, 120_000L));
    assertThat(tree.get("root.eng").orElseThrow().preemption())
        .isEqualTo(new QueuePreemption(null, null, null, 300_000L, null));
    assertThat(tree.get("root.eng.train").orElseThrow().preemption())
        .isEqualTo(new QueuePreemption(null, null, null, null, 0L));
    assertThat(tree.get("root.research.a").orElseThrow().preemption()).isEqualTo(QueuePreemption.INHERIT);
  }

  @Test
  void rejectsBadThrashGuardsWithTheKeyAndTheReason() {
    for (String suffix : List.of("min-runtime-seconds", "delay-seconds")) {
      String key = "root.eng.spindle.preemption." + suffix;
      rejects(with(threeLevel(), key, "-1"), key, "-1 is outside 0..604800");
      rejects(with(threeLevel(), key, "604801"), key, "604801 is outside 0..604800");
      rejects(with(threeLevel(), key, "5m"), key, "'5m' is not a whole number");
      rejects(with(threeLevel(), key, "1.5"), key, "'1.5' is not a whole number");
      rejects(with(threeLevel(), key, ""), key, "is not a whole number");
    }
  }
}
