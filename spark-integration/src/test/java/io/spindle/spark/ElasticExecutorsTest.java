package io.spindle.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Test;

/** An elastic executor gang's tags must agree with Spark's executor bounds, or the driver stops at start. */
class ElasticExecutorsTest {

  private final List<String> warnings = new ArrayList<>();

  @Test
  void dynamicAllocationsMinimumIsTheGangsMinimum() {
    SparkConf conf = dynamic("spindle.gang=executors,spindle.gang.min=2,spindle.gang.step=2", 2, 4);
    assertThat(ElasticExecutors.check(conf, warnings::add)).contains(new ElasticExecutors(2, 2));
    assertThat(warnings).isEmpty();
  }

  @Test
  void tagsAreReadAsYarnLowerCasesThemAndTheStepDefaultsToOne() {
    SparkConf conf = dynamic(" Spindle.Gang=Executors , SPINDLE.GANG.MIN=3 ", 3, 10);
    assertThat(ElasticExecutors.check(conf, warnings::add)).contains(new ElasticExecutors(3, 1));
  }

  @Test
  void aMinimumThatDiffersFromSparksStopsTheApplicationNamingBothKeys() {
    assertThatThrownBy(() -> ElasticExecutors.check(dynamic("spindle.gang=executors,spindle.gang.min=2", 1, 4),
        warnings::add)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("spindle.gang.min=2").hasMessageContaining("spark.dynamicAllocation.minExecutors is 1");
    SparkConf unset = dynamic("spindle.gang=executors,spindle.gang.min=2", 0, 4).remove(ElasticExecutors.DYNAMIC_MIN);
    assertThatThrownBy(() -> ElasticExecutors.check(unset, warnings::add))
        .hasMessageContaining("spark.dynamicAllocation.minExecutors is 0 (not set)");
  }

  @Test
  void aStepThatDoesNotDivideTheRangeToMaxExecutorsIsRefused() {
    assertThatThrownBy(() -> ElasticExecutors.check(
        dynamic("spindle.gang=executors,spindle.gang.min=2,spindle.gang.step=2", 2, 5), warnings::add))
        .hasMessageContaining("spindle.gang.step=2").hasMessageContaining("spark.dynamicAllocation.maxExecutors=5");
    SparkConf noMax = dynamic("spindle.gang=executors,spindle.gang.min=2,spindle.gang.step=2", 2, 0)
        .remove(ElasticExecutors.DYNAMIC_MAX);
    assertThat(ElasticExecutors.check(noMax, warnings::add)).as("no maximum: nothing to divide").isPresent();
  }

  @Test
  void withStaticAllocationTheMinimumIsAtMostTheExecutorsAsked() {
    SparkConf conf = decommissioning().set(ElasticExecutors.TAGS, "spindle.gang=executors,spindle.gang.min=2")
        .set(ElasticExecutors.INSTANCES, "4");
    assertThat(ElasticExecutors.check(conf, warnings::add)).contains(new ElasticExecutors(2, 1));
    assertThatThrownBy(() -> ElasticExecutors.check(conf.clone().set(ElasticExecutors.INSTANCES, "1"), warnings::add))
        .hasMessageContaining("spark.executor.instances=1");
  }

  @Test
  void anElasticGangNeedsDecommissioningAndIsWarnedWithoutBlockMigration() {
    SparkConf conf = dynamic("spindle.gang=executors,spindle.gang.min=2", 2, 4);
    assertThatThrownBy(() -> ElasticExecutors.check(conf.clone().set(ElasticExecutors.DECOMMISSION, "false"),
        warnings::add)).hasMessageContaining("spark.decommission.enabled=true");
    assertThat(ElasticExecutors.check(conf.set(ElasticExecutors.STORAGE_DECOMMISSION, "false"), warnings::add))
        .isPresent();
    assertThat(warnings).singleElement().asString().contains("spark.storage.decommission.enabled is false");
  }

  @Test
  void withoutTheMinimumTagNothingIsElasticAndADynamicExecutorGangIsWarned() {
    assertThat(ElasticExecutors.check(new SparkConf(false), warnings::add)).isEmpty();
    assertThat(warnings).isEmpty();
    assertThat(ElasticExecutors.check(dynamic("spindle.gang=executors", 0, 4), warnings::add)).isEmpty();
    assertThat(warnings).singleElement().asString().contains("add spindle.gang.min=");
  }

  @Test
  void aMinimumThatIsNoNumberIsRefused() {
    assertThatThrownBy(() -> ElasticExecutors.check(dynamic("spindle.gang=executors,spindle.gang.min=two", 2, 4),
        warnings::add)).hasMessageContaining("spindle.gang.min=two is not a number");
  }

  private static SparkConf dynamic(String tags, int min, int max) {
    return decommissioning().set(ElasticExecutors.TAGS, tags).set(ElasticExecutors.DYNAMIC, "true")
        .set(ElasticExecutors.DYNAMIC_MIN, Integer.toString(min)).set(ElasticExecutors.DYNAMIC_MAX, Integer.toString(max));
  }

  private static SparkConf decommissioning() {
    return new SparkConf(false).set(ElasticExecutors.DECOMMISSION, "true")
        .set(ElasticExecutors.STORAGE_DECOMMISSION, "true");
  }
}
