package io.spindle.core.placement;

import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.core.model.Node;
import io.spindle.core.model.NodeId;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The placement indexes give exactly the order of one sorted list, whatever was added, changed and removed. */
class PlacementIndexTest {

  private static final Comparator<NodeState> BEST_FIT = Comparator.<NodeState>comparingInt(n -> n.freeWholeGpus)
      .thenComparingInt(n -> n.freeMigSlices).thenComparingLong(n -> n.freeMemoryMb)
      .thenComparingInt(n -> n.freeVcores).thenComparingInt(n -> n.seq);

  @Test
  void bestFitIndexWalksNodesInBestFitOrderFromTheContainersSize() {
    Random rnd = new Random(11);
    BestFitIndex index = new BestFitIndex();
    List<NodeState> nodes = new ArrayList<>();
    List<NodeState> indexed = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      NodeState n = new NodeState(new Node(NodeId.of("n" + i), "/r", 512_000, 64, List.of()), i);
      randomize(n, rnd);
      nodes.add(n);
    }
    for (int step = 0; step < 3_000; step++) {
      NodeState n = nodes.get(rnd.nextInt(nodes.size()));
      if (indexed.remove(n)) {
        assertThat(index.remove(n)).isTrue();
        randomize(n, rnd); // a node changes only while it is out of the index
        if (rnd.nextBoolean()) {
          continue;
        }
      }
      assertThat(index.add(n)).isTrue();
      indexed.add(n);
      if (step % 100 == 0) {
        int gpus = rnd.nextInt(5);
        long memory = rnd.nextInt(8) * 64_000L;
        List<NodeState> expected = indexed.stream().filter(x -> x.freeWholeGpus >= gpus && x.freeMemoryMb >= memory)
            .sorted(BEST_FIT).toList();
        assertThat(drain(index.from(gpus, memory))).containsExactlyElementsOf(expected);
        assertThat(drain(index.iterator())).containsExactlyElementsOf(indexed.stream().sorted(BEST_FIT).toList());
        assertThat(index).hasSize(indexed.size());
      }
    }
  }

  @Test
  void freeComputeIndexWalksGpusByFreeComputeThenSlot() {
    Random rnd = new Random(13);
    List<SharedGpu> gpus = new ArrayList<>();
    // Slots far apart as well as close together, so that walks cross empty words and summary words.
    for (int i = 0; i < 400; i++) {
      SharedGpu g = new SharedGpu(null, null, 0);
      g.slot = i < 200 ? i : 200 + rnd.nextInt(50) * 4_096 + i;
      gpus.add(g);
    }
    List<SharedGpu> indexed = new ArrayList<>();
    FreeComputeIndex index = new FreeComputeIndex(slot -> gpus.stream().filter(g -> g.slot == slot).findFirst()
        .orElseThrow());
    Comparator<SharedGpu> order = Comparator.<SharedGpu>comparingInt(g -> g.indexedFree).thenComparingInt(g -> g.slot);
    for (int step = 0; step < 3_000; step++) {
      SharedGpu g = gpus.get(rnd.nextInt(gpus.size()));
      if (indexed.remove(g)) {
        assertThat(index.remove(g)).isTrue();
        continue;
      }
      g.indexedFree = 1 + rnd.nextInt(rnd.nextBoolean() ? 1_000 : 4);
      assertThat(index.add(g)).isTrue();
      indexed.add(g);
      if (step % 100 == 0) {
        int minFree = rnd.nextInt(1_001);
        assertThat(drain(index.from(minFree))).containsExactlyElementsOf(
            indexed.stream().filter(x -> x.indexedFree >= minFree).sorted(order).toList());
        assertThat(index).hasSize(indexed.size());
      }
    }
  }

  @Test
  void slotBitmapFindsTheNextMemberAcrossWordsAndSummaries() {
    FreeComputeIndex.SlotBitmap bits = new FreeComputeIndex.SlotBitmap();
    int[] members = {0, 63, 64, 4_095, 4_096, 262_143, 262_144, 1_000_000};
    for (int m : members) {
      assertThat(bits.set(m)).isTrue();
    }
    assertThat(bits.set(64)).isFalse();
    for (int k = 0; k < members.length; k++) {
      assertThat(bits.next(members[k])).isEqualTo(members[k]);
      assertThat(bits.next(members[k] + 1)).isEqualTo(k + 1 < members.length ? members[k + 1] : -1);
    }
    assertThat(bits.clear(4_096)).isTrue();
    assertThat(bits.clear(4_096)).isFalse();
    assertThat(bits.next(4_096)).isEqualTo(262_143);
    assertThat(bits.next(2_000_000)).isEqualTo(-1);
  }

  private static void randomize(NodeState n, Random rnd) {
    n.freeWholeGpus = rnd.nextInt(9);
    n.freeMigSlices = rnd.nextInt(4) == 0 ? rnd.nextInt(15) : 0;
    n.freeMemoryMb = rnd.nextInt(9) * 64_000L;
    n.freeVcores = rnd.nextInt(3) * 16;
  }

  private static <T> List<T> drain(Iterator<T> it) {
    List<T> out = new ArrayList<>();
    it.forEachRemaining(out::add);
    return out;
  }
}
