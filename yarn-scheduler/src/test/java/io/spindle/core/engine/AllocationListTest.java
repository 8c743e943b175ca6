package io.spindle.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.core.model.AppId;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.model.Resources;
import io.spindle.core.placement.Placement;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** An application's and a node's allocations keep the order they were made in, through any removals. */
class AllocationListTest {

  @Test
  void entriesLeaveBothListsAndTheRestKeepTheirOrder() {
    Random rnd = new Random(3);
    AllocationList app = AllocationList.ofApp();
    AllocationList[] nodes = {AllocationList.ofNode(), AllocationList.ofNode()};
    List<AllocationList.Entry> live = new ArrayList<>();
    List<List<Long>> expectedOnNode = List.of(new ArrayList<>(), new ArrayList<>());
    List<Long> expectedInApp = new ArrayList<>();
    for (long id = 1; id <= 2_000; id++) {
      if (!live.isEmpty() && rnd.nextInt(3) == 0) {
        AllocationList.Entry e = live.remove(rnd.nextInt(live.size()));
        e.unlink();
        expectedInApp.remove(e.allocation.id());
        expectedOnNode.get(0).remove(e.allocation.id());
        expectedOnNode.get(1).remove(e.allocation.id());
        continue;
      }
      int node = rnd.nextInt(2);
      AllocationList.Entry e = new AllocationList.Entry(new Allocation(id, AppId.of("a"), "r", Resources.of(1, 1),
          new Placement(NodeId.of("n" + node), List.of(), ResourceVector.ZERO), Long.MAX_VALUE));
      app.add(e);
      nodes[node].add(e);
      live.add(e);
      expectedInApp.add(id);
      expectedOnNode.get(node).add(id);
    }
    assertThat(app.ids()).containsExactlyElementsOf(expectedInApp);
    assertThat(app).containsExactlyElementsOf(expectedInApp);
    assertThat(app.size()).isEqualTo(expectedInApp.size());
    for (int n = 0; n < 2; n++) {
      assertThat(nodes[n].ids()).containsExactlyElementsOf(expectedOnNode.get(n));
      assertThat(nodes[n].size()).isEqualTo(expectedOnNode.get(n).size());
    }
  }
}
