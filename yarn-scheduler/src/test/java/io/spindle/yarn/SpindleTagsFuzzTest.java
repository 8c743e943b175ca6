package io.spindle.yarn;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.spindle.core.engine.PlacementSpec;
import io.spindle.fuzz.FuzzInput;
import io.spindle.fuzz.HostileInput;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Hostile application tags (any user sets them at submission): {@link SpindleTags#parse} returns settings a gang
 * can be placed with, or throws an {@link IllegalArgumentException} that quotes the offending tag; the adapter then
 * rejects the application with that reason.
 */
class SpindleTagsFuzzTest {

  private static final String TARGET = "application-tag parser";
  private static final List<String> NAMES = List.of(SpindleTags.GANG_SIZE, SpindleTags.GANG,
      SpindleTags.TOPOLOGY_REQUIRED, SpindleTags.TOPOLOGY_PREFERRED, SpindleTags.MAX_RUNTIME, SpindleTags.ON_MEMBER_LOSS,
      "spindle.gang.sizes",
      "spindle.", "spindle.priority", "SPINDLE.GANG.SIZE", "spİndle.gang.size", " spindle.gang.size", "spark.tag");
  private static final List<String> VALUES = List.of("8", "1", "0", "-1", "+8", " 8 ", "2147483648", "executors",
      "EXECUTORS", "rack", "node", "", "90s", "30m", "2h", "1d", "0s", "-5m", "9223372036854775807d", "106751991167301d",
      "1w", "1.5h", "h", "s", "=", "8=8", "restart", "continue", "RESTART", "restart ");

  @Test
  void randomTagsAreParsedOrRefusedNamingTheTag() {
    HostileInput.Tally tally = HostileInput.run(TARGET, SpindleTagsFuzzTest::check);
    assertThat(tally.rejected()).as("bad tags tried").isPositive();
    assertThat(tally.accepted()).as("good tags tried").isPositive();
  }

  @FuzzTest(maxExecutions = 10_000)
  void coverageGuided(byte[] bytes) {
    HostileInput.once(TARGET, SpindleTagsFuzzTest::check, bytes);
  }

  @AfterAll
  static void report() {
    HostileInput.report(TARGET);
  }

  static String check(FuzzInput in) {
    List<String> tags = new ArrayList<>();
    int n = in.below(6);
    for (int i = 0; i < n; i++) {
      tags.add(switch (in.below(5)) {
        case 0 -> in.text(40);
        case 1 -> in.pick(NAMES) + in.pick("=", "==", "", " = ") + in.text(12);
        default -> in.pick(NAMES) + "=" + in.valueOr(VALUES);
      });
    }
    SpindleTags parsed;
    try {
      parsed = SpindleTags.parse(tags);
    } catch (IllegalArgumentException e) {
      boolean namesTag = tags.stream().anyMatch(t -> e.getMessage().contains("'" + t + "'"))
          || e.getMessage().startsWith("application tags ");
      assertThat(namesTag).as("'%s' quotes the tag it refuses", e.getMessage()).isTrue();
      return HostileInput.rejected(e, IllegalArgumentException.class);
    }
    assertThat(parsed.gangSize()).isNotNegative();
    assertThat(parsed.maxRuntimeMillis()).isNotNegative();
    boolean declaresRuntime = tags.stream()
        .anyMatch(t -> t.strip().toLowerCase(Locale.ROOT).startsWith(SpindleTags.MAX_RUNTIME + "="));
    if (declaresRuntime) {
      assertThat(parsed.maxRuntimeMillis()).as("a declared run time").isPositive();
    }
    PlacementSpec single = parsed.placement(false);
    PlacementSpec gang = parsed.placement(true);
    assertThat(single.gang()).isFalse();
    assertThat(gang.gang()).isTrue();
    return HostileInput.ACCEPTED;
  }
}
