package io.spindle.journal;

import io.spindle.core.engine.Decision;
import io.spindle.core.engine.DurableState;
import io.spindle.core.engine.EngineEvent;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.journal.avro.JournalEntryRecord;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.avro.file.CodecFactory;
import org.apache.avro.file.DataFileWriter;
import org.apache.avro.specific.SpecificDatumWriter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes a decision journal on a thread of its own, in the order entries were handed to it, so the scheduling thread
 * only queues immutable values. One Avro container file (deflate) per engine, created when the first entry after the
 * header arrives (a standby scheduler that never runs a cycle leaves no file).
 *
 * <p><b>Falling behind.</b> At most {@code queueLimit} items (events plus decisions) wait; an entry that does not fit
 * beside what waits is dropped, never waited for — the ResourceManager keeps scheduling. The next entry that fits is preceded by a
 * {@link JournalEntry.Gap} saying how many were lost, and a replay stops there: past a gap the engine's state cannot
 * be rebuilt. An entry that cannot be encoded is lost the same way.
 *
 * <p><b>Disk full, or any other write error.</b> The journal stops: the error is logged once, the file is closed as
 * far as it goes, and every later entry is dropped (counted). What reached the file is a prefix of the run and
 * replays exactly; it has no {@link JournalEntry.End}, as after a crash.
 *
 * <p>What was appended is flushed to the file (one Avro block) once {@value #FLUSH_INTERVAL_MS} ms have passed since
 * the last flush, busy or idle, so a ResourceManager that dies loses about that much of its journal at most. Fewer
 * flushes would compress idle cycles better; a journal is kept for incidents, which are when RMs die.
 */
final class JournalWriter implements DecisionJournal {

  private static final Logger LOG = LoggerFactory.getLogger(JournalWriter.class);
  static final long FLUSH_INTERVAL_MS = 1_000;
  private static final int DEFLATE_LEVEL = 6;
  private static final DateTimeFormatter STAMP =
      DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss").withZone(ZoneOffset.UTC);

  /** An entry waiting for the writer, and how many items it counts against the limit. */
  private record Queued(JournalEntry entry, long items) {}

  private static final Queued CLOSE = new Queued(null, 0);

  private final JournalSettings settings;
  private final JournalEntry.Header header;
  private final LinkedBlockingQueue<Queued> queue = new LinkedBlockingQueue<>();
  private final AtomicLong queuedItems = new AtomicLong();
  private final AtomicLong lost = new AtomicLong();
  private final Thread thread;
  /** Entries dropped since the last one queued: the gap the next queued entry is preceded by. Guarded by this. */
  private long droppedSinceQueued;
  private boolean closed;
  private volatile boolean failed;
  // Written by the writer thread only.
  private final JournalCodec codec = new JournalCodec(GpuModelCatalog.builtIn());
  private DataFileWriter<JournalEntryRecord> file;
  private volatile Path path;
  private boolean dirty;
  private long lastFlush;

  private JournalWriter(JournalSettings settings, JournalEntry.Header header) {
    this.settings = settings;
    this.header = header;
    this.thread = new Thread(this::run, "spindle-journal");
    thread.setDaemon(true);
  }

  static JournalWriter start(JournalSettings settings, JournalEntry.Header header) {
    JournalWriter writer = unstarted(settings, header);
    writer.startWriting();
    return writer;
  }

  /** A writer whose thread has not started: entries only queue (tests make it fall behind so). */
  static JournalWriter unstarted(JournalSettings settings, JournalEntry.Header header) {
    return new JournalWriter(settings, header);
  }

  void startWriting() {
    thread.start();
  }

  @Override
  public void cycle(long timeMillis, List<? extends EngineEvent> events, List<Decision> decisions) {
    // A copy of the driver's event list, taken on its thread: the driver may reuse the list; events are immutable.
    submit(new JournalEntry.Cycle(timeMillis, List.copyOf(events), decisions), 1L + events.size() + decisions.size());
  }

  @Override
  public void reconfigured(Map<String, String> entries) {
    submit(new JournalEntry.Reconfigure(DecisionJournal.engineConfiguration(entries)), 1);
  }

  @Override
  public void restored(long timeMillis, DurableState state, Map<String, Long> allocationIds, String failure) {
    submit(new JournalEntry.Restore(timeMillis, state, allocationIds, failure), 1L + allocationIds.size());
  }

  private synchronized void submit(JournalEntry entry, long items) {
    if (closed) {
      return;
    }
    long waiting = queuedItems.get();
    // An entry is always taken when nothing waits, however large (a big cluster's first cycle): the limit bounds the
    // backlog, not what one cycle may hold.
    if (failed || (waiting > 0 && waiting + items > settings.queueLimit())) {
      if (droppedSinceQueued == 0 && !failed) {
        LOG.warn("Decision journal {} fell behind ({} items waiting, {} = {}): dropping entries; the journal gets a "
            + "gap here and a replay stops at it", path, waiting, JournalSettings.QUEUE_LIMIT,
            settings.queueLimit());
      }
      droppedSinceQueued++;
      lost.incrementAndGet();
      return;
    }
    if (droppedSinceQueued > 0) {
      queue.add(new Queued(new JournalEntry.Gap(droppedSinceQueued), 0));
      droppedSinceQueued = 0;
    }
    queuedItems.addAndGet(items);
    queue.add(new Queued(entry, items));
  }

  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      queue.add(CLOSE);
    }
    try {
      thread.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (thread.isAlive()) {
      LOG.warn("Decision journal {}: {} items still being written at shutdown were dropped", path, queuedItems.get());
    }
  }

  /** Entries dropped so far: the writer fell behind, an entry could not be encoded, or writing failed. */
  long lostEntries() {
    return lost.get();
  }

  /** Items queued and not yet taken by the writer thread. */
  long queuedItems() {
    return queuedItems.get();
  }

  /** The file being written, once created. */
  Path path() {
    return path;
  }

  private void run() {
    Queued inHand = null;
    try {
      while (true) {
        long untilFlush = dirty ? Math.max(0, lastFlush + FLUSH_INTERVAL_MS - System.currentTimeMillis()) : 60_000;
        inHand = queue.poll(untilFlush, TimeUnit.MILLISECONDS);
        if (inHand == CLOSE) {
          break;
        }
        if (inHand != null) {
          queuedItems.addAndGet(-inHand.items());
          write(inHand.entry());
          inHand = null;
        }
        if (dirty && System.currentTimeMillis() - lastFlush >= FLUSH_INTERVAL_MS) {
          file.flush();
          dirty = false;
          lastFlush = System.currentTimeMillis();
        }
      }
      if (file != null) {
        append(new JournalEntry.End(System.currentTimeMillis(), lost.get()));
        file.close();
        LOG.info("Decision journal {} closed ({} entries lost)", path, lost.get());
      }
    } catch (IOException | RuntimeException e) {
      failed = true;
      if (inHand != null && !(inHand.entry() instanceof JournalEntry.Gap)) {
        lost.incrementAndGet();
      }
      LOG.error("Decision journal {} stopped: {}. Scheduling goes on without it; what the file holds still replays.",
          path == null ? settings.dir() : path, e.toString());
      closeQuietly();
      dropQueued();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      closeQuietly();
    }
  }

  private void write(JournalEntry entry) throws IOException {
    if (file == null) {
      open();
    }
    try {
      append(entry);
    } catch (EncodingException e) {
      // This entry alone is lost: the file is intact, and the gap tells a replay where its state stops being known.
      lost.incrementAndGet();
      LOG.error("Decision journal {}: an entry could not be encoded and is lost ({}); the journal gets a gap here",
          path, e.getCause().toString());
      append(new JournalEntry.Gap(1));
    }
  }

  private void append(JournalEntry entry) throws IOException {
    try {
      file.append(codec.encode(entry));
    } catch (RuntimeException e) {
      // The record could not be built, or Avro could not serialise it (AppendWriteException: it took back what it
      // had buffered). Either way the file is intact; a failing disk shows as an IOException instead.
      throw new EncodingException(e);
    }
    codec.written(entry);
    dirty = true;
  }

  private void open() throws IOException {
    Files.createDirectories(settings.dir());
    String base = "spindle-journal-" + STAMP.format(Instant.ofEpochMilli(header.startedMillis())) + "-"
        + header.writtenBy().replaceAll("[^A-Za-z0-9._-]", "_");
    OutputStream out = null;
    for (int n = 1; out == null; n++) {
      path = settings.dir().resolve(base + (n == 1 ? "" : "-" + n) + ".avro");
      try {
        out = Files.newOutputStream(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
      } catch (FileAlreadyExistsException taken) {
        // Another engine of this process started in the same second (an RM that went standby and back).
      }
    }
    DataFileWriter<JournalEntryRecord> writer =
        new DataFileWriter<>(new SpecificDatumWriter<>(JournalEntryRecord.class));
    writer.setCodec(CodecFactory.deflateCodec(DEFLATE_LEVEL));
    file = writer.create(JournalEntryRecord.getClassSchema(), out);
    lastFlush = System.currentTimeMillis();
    LOG.info("Decision journal: writing to {}", path);
    append(header);
  }

  private void closeQuietly() {
    if (file != null) {
      try {
        file.close();
      } catch (IOException | RuntimeException ignored) {
        // Already failing; the first error was logged.
      }
    }
  }

  private void dropQueued() {
    Queued q;
    while ((q = queue.poll()) != null) {
      if (q != CLOSE && !(q.entry() instanceof JournalEntry.Gap)) {
        lost.incrementAndGet();
      }
    }
  }

  /** An entry that could not be turned into a record; nothing of it reached the file. */
  private static final class EncodingException extends RuntimeException {
    EncodingException(RuntimeException cause) {
      super(cause);
    }
  }
}
