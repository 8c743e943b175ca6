package io.spindle.core.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Queues created on submission under a legacy managed parent or a flexible (v2) parent, as CapacityScheduler. */
class AutoCreatedQueuesTest {

  private static final String P = QueueConfigParser.PREFIX;

  private static Map<String, String> conf(String... kv) {
    Map<String, String> c = new LinkedHashMap<>();
    c.put(P + "root.queues", "prod,users");
    c.put(P + "root.prod.capacity", "60");
    c.put(P + "root.users.capacity", "40");
    for (int i = 0; i < kv.length; i += 2) {
      c.put(P + kv[i], kv[i + 1]);
    }
    return c;
  }

  private static QueueTree parse(Map<String, String> c, List<String> created) {
    return new QueueConfigParser().parse(QueueConfigParser.withCreated(c, created));
  }

  private static Map<String, String> legacy(String... more) {
    Map<String, String> c = conf("root.users.auto-create-child-queue.enabled", "true",
        "root.users.leaf-queue-template.capacity", "40", "root.users.leaf-queue-template.maximum-capacity", "80",
        "root.users.leaf-queue-template.user-limit-factor", "2");
    for (int i = 0; i < more.length; i += 2) {
      c.put(P + more[i], more[i + 1]);
    }
    return c;
  }

  @Test
  void aManagedParentTakesNoApplicationsItselfButCreatesLeavesFromItsTemplate() {
    QueueTree before = new QueueConfigParser().parse(legacy());
    assertThat(before.lookup("users")).isInstanceOf(QueueTree.Lookup.Parent.class);
    assertThat(before.leaves()).extracting(QueueConfig::path).containsExactly("root.prod");
    assertThat(before.whyNotCreatable("root.users", "alice")).isEmpty();
    assertThat(before.whyNotCreatable("root.prod", "alice")).get().asString().contains("does not create queues");

    QueueTree after = parse(legacy(), List.of("root.users.alice"));
    QueueConfig alice = after.leaf("alice").orElseThrow();
    assertThat(alice.capacity()).isEqualTo(new Capacity.Percent(40));
    assertThat(alice.maximumCapacity()).isEqualTo(new Capacity.Percent(80));
    assertThat(alice.userLimitFactor()).isEqualTo(2);
    assertThat(after.created()).containsExactly("root.users.alice");
  }

  @Test
  void legacyGuaranteesGoToTheFirstLeavesWhileTheyFitAndLaterOnesGetNone() {
    QueueTree t = parse(legacy(), List.of("root.users.a", "root.users.b", "root.users.c"));
    assertThat(t.children(t.get("root.users").orElseThrow())).extracting(QueueConfig::capacity).containsExactly(
        new Capacity.Percent(40), new Capacity.Percent(40), new Capacity.Percent(0));
    QueueTree strict = parse(legacy("root.users.auto-create-child-queue.fail-on-exceeding-parent-capacity", "true"),
        List.of("root.users.a", "root.users.b"));
    assertThat(strict.whyNotCreatable("root.users", "c")).get().asString().contains("exceed its capacity");
  }

  @Test
  void flexibleCreationSharesTheParentByWeightBesideDeclaredQueues() {
    Map<String, String> c = conf("root.users.queues", "shared", "root.users.shared.capacity", "2w",
        "root.users.auto-queue-creation-v2.enabled", "true",
        "root.users.auto-queue-creation-v2.template.maximum-capacity", "70");
    QueueTree t = parse(c, List.of("root.users.alice", "root.users.bob"));
    assertThat(t.leaf("shared").orElseThrow().capacity()).isEqualTo(new Capacity.Weight(2, 50));
    assertThat(t.leaf("alice").orElseThrow().capacity()).isEqualTo(new Capacity.Weight(1, 25));
    assertThat(t.leaf("bob").orElseThrow().maximumCapacity()).isEqualTo(new Capacity.Percent(70));
    // The leaf-template wins over the template, which also shapes created parents in CapacityScheduler.
    c.put(P + "root.users.auto-queue-creation-v2.leaf-template.capacity", "3w");
    assertThat(parse(c, List.of("root.users.alice")).leaf("alice").orElseThrow().capacity())
        .isEqualTo(new Capacity.Weight(3, 60));
  }

  @Test
  void createdLeavesWhoseParentNoLongerCreatesAreDroppedAndDeclaredOnesStayDeclared() {
    QueueTree t = parse(conf(), List.of("root.users.alice"));
    assertThat(t.get("root.users.alice")).isEmpty();
    assertThat(t.created()).isEmpty();
    Map<String, String> declared = conf("root.users.queues", "alice", "root.users.alice.capacity", "1w",
        "root.users.auto-queue-creation-v2.enabled", "true");
    assertThat(parse(declared, List.of("root.users.alice")).created()).isEmpty();
  }

  @Test
  void theLegacyKeyOnAQueueWithChildrenHasNoEffectAsInCapacityScheduler() {
    QueueTree t = new QueueConfigParser().parse(legacy("root.users.queues", "x", "root.users.x.capacity", "100"));
    assertThat(t.autoCreation("root.users")).isEmpty();
    assertThat(t.leaf("x")).isPresent();
  }

  @Test
  void limitsAndNamesAreCheckedBeforeCreation() {
    QueueTree t = parse(conf("root.users.auto-queue-creation-v2.enabled", "true",
        "root.users.auto-queue-creation-v2.max-queues", "1"), List.of("root.users.alice"));
    assertThat(t.whyNotCreatable("root.users", "bob")).get().asString().contains("already holds 1");
    assertThat(t.whyNotCreatable("root.users", "b.ob")).get().asString().contains("not a queue name");
  }

  @Test
  void badAutoCreationSettingsAreRefusedWithTheKey() {
    assertThatThrownBy(() -> new QueueConfigParser().parse(legacy("root.users.leaf-queue-template.capacity", "2w")))
        .hasMessageContaining(P + "root.users.leaf-queue-template.capacity");
    assertThatThrownBy(() -> new QueueConfigParser().parse(conf("root.users.auto-queue-creation-v2.enabled", "true",
        "root.users.auto-queue-creation-v2.template.capacity", "10")))
        .hasMessageContaining(P + "root.users.auto-queue-creation-v2.template.capacity").hasMessageContaining("weight");
    assertThatThrownBy(() -> new QueueConfigParser().parse(legacy(
        "root.users.leaf-queue-template.maximum-capacity", "20")))
        .hasMessageContaining("maximum-capacity 20.0 is below capacity 40.0");
  }

  @Test
  void aFlexibleQueueCreatesTheMissingParentsOfADeeperPathUpToItsMaximumDepth() {
    Map<String, String> c = conf("root.users.auto-queue-creation-v2.enabled", "true");
    QueueTree before = new QueueConfigParser().parse(c);
    QueueTree.Creation plan = before.creation("root.users.ml.alice");
    assertThat(plan.refusal()).isNull();
    assertThat(plan.queues()).containsExactly("root.users.ml", "root.users.ml.alice");
    assertThat(before.createsBelow("root.users.ml.alice")).isTrue();
    assertThat(before.creation("root.users.a.b.c").refusal()).contains("3 levels").contains("maximum-queue-depth (2)");

    QueueTree after = parse(c, plan.queues());
    assertThat(after.lookup("ml")).isInstanceOf(QueueTree.Lookup.Parent.class);
    assertThat(after.leaf("alice").orElseThrow().path()).isEqualTo("root.users.ml.alice");
    assertThat(after.autoCreation("root.users.ml")).as("a created parent creates as its parent does").isPresent();
    assertThat(after.creation("root.users.ml.bob").queues()).containsExactly("root.users.ml.bob");
    assertThat(parse(c, List.of("root.users.ml", "root.users.ml.alice", "root.users.ml.bob")).get("root.users.ml")
        .orElseThrow().children()).containsExactly("alice", "bob");

    c.put(P + "root.users.auto-queue-creation-v2.maximum-queue-depth", "3");
    assertThat(new QueueConfigParser().parse(c).creation("root.users.a.b.c").queues()).hasSize(3);
  }

  @Test
  void aLegacyManagedParentCreatesLeavesOnly() {
    QueueTree t = new QueueConfigParser().parse(legacy());
    assertThat(t.creation("root.users.alice").queues()).containsExactly("root.users.alice");
    assertThat(t.creation("root.users.ml.alice").refusal()).contains("creates leaf queues only");
    assertThat(t.createsBelow("root.prod.x")).isFalse();
  }

  @Test
  void createdLeavesTakeTheTemplatesNodeLabels() {
    QueueTree t = parse(legacy("root.accessible-node-labels.GPU.capacity", "100",
        "root.users.accessible-node-labels", "GPU,SSD", "root.users.accessible-node-labels.GPU.capacity", "100",
        "root.accessible-node-labels.SSD.capacity", "100", "root.users.accessible-node-labels.SSD.capacity", "100",
        "root.users.leaf-queue-template.accessible-node-labels", "GPU",
        "root.users.leaf-queue-template.accessible-node-labels.GPU.capacity", "5"), List.of("root.users.alice"));
    QueueLabels alice = t.leaf("alice").orElseThrow().labels();
    assertThat(alice.accessible()).containsExactly("GPU");
    assertThat(alice.capacity()).isEqualTo(Map.of("GPU", new Capacity.Percent(5)));
    assertThat(parse(legacy(), List.of("root.users.bob")).leaf("bob").orElseThrow().labels())
        .isEqualTo(QueueLabels.INHERIT);
  }
}
