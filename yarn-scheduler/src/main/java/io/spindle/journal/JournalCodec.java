package io.spindle.journal;

import io.spindle.core.model.GpuModelCatalog;
import io.spindle.ha.SchedulerStateCodec;
import io.spindle.journal.avro.CycleRecord;
import io.spindle.journal.avro.EndRecord;
import io.spindle.journal.avro.GapRecord;
import io.spindle.journal.avro.HeaderRecord;
import io.spindle.journal.avro.JournalEntryRecord;
import io.spindle.journal.avro.ReconfigureRecord;
import io.spindle.journal.avro.RestoreRecord;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Journal entries as Avro records and back, in file order. One codec per file: a cycle's time is stored as the
 * difference to the cycle before (an idle cycle then costs a few bytes), so the codec keeps the last cycle's time.
 * The durable state of a restore is stored as {@link SchedulerStateCodec} bytes, with their own writer schema.
 */
final class JournalCodec {

  private final ModelRecords model;
  private final EventRecords events;
  private final DecisionRecords decisions;
  private long lastCycleMillis;

  JournalCodec(GpuModelCatalog catalog) {
    this.model = new ModelRecords(catalog);
    this.events = new EventRecords(model);
    this.decisions = new DecisionRecords(model);
  }

  /** The record of {@code entry}; call {@link #written} once it is in the file. */
  JournalEntryRecord encode(JournalEntry entry) {
    Object record;
    if (entry instanceof JournalEntry.Header h) {
      record = new HeaderRecord(h.formatVersion(), h.writtenBy(), h.spindleVersion(), h.startedMillis(),
          h.clockStartMillis(), h.topologyLevels(), new TreeMap<>(h.configuration()));
    } else if (entry instanceof JournalEntry.Cycle c) {
      List<Object> eventRecords = ModelRecords.map(c.events(), EventRecords::toRecord);
      List<Object> decisionRecords = ModelRecords.map(c.decisions(), decisions::toRecord);
      record = new CycleRecord(c.timeMillis() - lastCycleMillis, eventRecords, decisionRecords);
    } else if (entry instanceof JournalEntry.Reconfigure r) {
      record = new ReconfigureRecord(new TreeMap<>(r.configuration()));
    } else if (entry instanceof JournalEntry.Restore r) {
      record = new RestoreRecord(r.timeMillis(), ByteBuffer.wrap(SchedulerStateCodec.encode(r.state(), 0)),
          new TreeMap<>(r.allocationIds()), r.failure());
    } else if (entry instanceof JournalEntry.Gap g) {
      record = new GapRecord(g.lostEntries());
    } else if (entry instanceof JournalEntry.End e) {
      record = new EndRecord(e.closedMillis(), e.lostEntries());
    } else {
      throw new IllegalArgumentException("unknown journal entry " + entry);
    }
    return new JournalEntryRecord(record);
  }

  /**
   * {@code entry} is in the file: the next cycle's time counts from it. An entry that failed to encode or append is
   * not, and the next cycle's time counts from the last one that is, as a reader counts.
   */
  void written(JournalEntry entry) {
    if (entry instanceof JournalEntry.Header h) {
      lastCycleMillis = h.clockStartMillis();
    } else if (entry instanceof JournalEntry.Cycle c) {
      lastCycleMillis = c.timeMillis();
    }
  }

  JournalEntry decode(JournalEntryRecord wrapper) {
    Object record = wrapper.getEntry();
    if (record instanceof HeaderRecord h) {
      lastCycleMillis = h.getClockStartMillis();
      return new JournalEntry.Header(h.getFormatVersion(), h.getWrittenBy(), h.getSpindleVersion(),
          h.getStartedMillis(), h.getClockStartMillis(), h.getTopologyLevels(), h.getConfiguration());
    } else if (record instanceof CycleRecord c) {
      lastCycleMillis += c.getTimeDeltaMillis();
      return new JournalEntry.Cycle(lastCycleMillis, ModelRecords.map(c.getEvents(), events::toEvent),
          ModelRecords.map(c.getDecisions(), decisions::toDecision));
    } else if (record instanceof ReconfigureRecord r) {
      return new JournalEntry.Reconfigure(r.getConfiguration());
    } else if (record instanceof RestoreRecord r) {
      ByteBuffer buffer = r.getState();
      byte[] bytes = new byte[buffer.remaining()];
      buffer.duplicate().get(bytes);
      return new JournalEntry.Restore(r.getTimeMillis(), SchedulerStateCodec.decode(bytes).state(),
          Map.copyOf(r.getAllocationIds()), r.getFailure());
    } else if (record instanceof GapRecord g) {
      return new JournalEntry.Gap(g.getLostEntries());
    } else if (record instanceof EndRecord e) {
      return new JournalEntry.End(e.getClosedMillis(), e.getLostEntries());
    }
    throw new IllegalArgumentException("not a journal entry: " + record);
  }
}
