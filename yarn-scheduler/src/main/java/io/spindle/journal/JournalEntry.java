package io.spindle.journal;

import io.spindle.core.engine.Decision;
import io.spindle.core.engine.DurableState;
import io.spindle.core.engine.EngineEvent;
import java.util.List;
import java.util.Map;

/** What a decision journal holds, entry by entry, as the engine's own values ({@code DecisionJournal.avsc}). */
public sealed interface JournalEntry {

  /** The format this code writes; raised with every change to {@code DecisionJournal.avsc}. */
  // 2: AppPriorityChangedRecord; 3: NodePartitionChangedRecord, node and shape partitions; 4: NodeCordonChangedRecord;
  // 5: GpuHealthReportedRecord, GpuCordonChangedRecord, StopContainersRecord, CheckpointReportedRecord.writeMillis
  int FORMAT_VERSION = 5;

  /**
   * How the engine was built: from the built-in GPU catalog, the queue tree and {@code EngineSettings} parsed from
   * {@code configuration}, {@code Topology.open(topologyLevels)}, and a clock showing {@code clockStartMillis}.
   *
   * @param writtenBy the scheduler instance (host, the RM's HA id if any, process id)
   * @param spindleVersion of the JAR that wrote it, or {@code null} when unknown (classes not from a JAR)
   * @param startedMillis wall clock when the engine was built
   */
  record Header(int formatVersion, String writtenBy, String spindleVersion, long startedMillis, long clockStartMillis,
      List<String> topologyLevels, Map<String, String> configuration) implements JournalEntry {
    public Header {
      topologyLevels = List.copyOf(topologyLevels);
      configuration = Map.copyOf(configuration);
    }
  }

  /** One {@code Engine.cycle} at {@code timeMillis} on the engine clock: what it was given and what it decided. */
  record Cycle(long timeMillis, List<EngineEvent> events, List<Decision> decisions) implements JournalEntry {
    public Cycle {
      events = List.copyOf(events);
      decisions = List.copyOf(decisions);
    }

    public boolean idle() {
      return events.isEmpty() && decisions.isEmpty();
    }
  }

  /** {@code Engine.reconfigure} with the queue tree parsed from {@code configuration}. */
  record Reconfigure(Map<String, String> configuration) implements JournalEntry {
    public Reconfigure {
      configuration = Map.copyOf(configuration);
    }
  }

  /**
   * {@code Engine.restore(state, allocationIds::get)} at {@code timeMillis} on the engine clock.
   *
   * @param allocationIds the names the engine looked up that were recovered, with the id each was given
   * @param failure what the restore threw, or {@code null}
   */
  record Restore(long timeMillis, DurableState state, Map<String, Long> allocationIds, String failure)
      implements JournalEntry {
    public Restore {
      allocationIds = Map.copyOf(allocationIds);
    }
  }

  /** Entries were lost here: the engine's state from this point on cannot be rebuilt. */
  record Gap(long lostEntries) implements JournalEntry {}

  /** The scheduler closed the journal; {@code lostEntries} in all were dropped. */
  record End(long closedMillis, long lostEntries) implements JournalEntry {}
}
