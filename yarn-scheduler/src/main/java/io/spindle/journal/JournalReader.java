package io.spindle.journal;

import io.spindle.core.model.GpuModelCatalog;
import io.spindle.journal.avro.JournalEntryRecord;
import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;
import org.apache.avro.file.DataFileReader;
import org.apache.avro.specific.SpecificDatumReader;

/**
 * Reads a decision journal entry by entry. Avro resolves the file's writer schema against this reader's, so a
 * journal of an older format version reads as long as the schema only grew by Avro's rules.
 */
public final class JournalReader implements Closeable {

  private final DataFileReader<JournalEntryRecord> file;
  private final JournalCodec codec = new JournalCodec(GpuModelCatalog.builtIn());
  private final JournalEntry.Header header;
  private long entriesRead = 1;

  private JournalReader(DataFileReader<JournalEntryRecord> file) throws IOException {
    this.file = file;
    JournalEntry first = file.hasNext() ? codec.decode(file.next()) : null;
    if (!(first instanceof JournalEntry.Header h)) {
      throw new IOException("not a decision journal: its first entry is " + (first == null ? "missing" : first)
          + ", not a header");
    }
    if (h.formatVersion() > JournalEntry.FORMAT_VERSION) {
      throw new IOException("journal format " + h.formatVersion() + " is newer than this reader's ("
          + JournalEntry.FORMAT_VERSION + "); replay with the Spindle version that wrote it (" + h.spindleVersion()
          + ")");
    }
    this.header = h;
  }

  /** @throws IOException when the file is not a decision journal, or a newer format than this code reads */
  public static JournalReader open(Path path) throws IOException {
    DataFileReader<JournalEntryRecord> file;
    try {
      file = new DataFileReader<>(path.toFile(), new SpecificDatumReader<>(JournalEntryRecord.class));
    } catch (IOException | RuntimeException e) {
      throw new IOException("not a readable Avro container file: " + path + " (" + e.getMessage() + ")", e);
    }
    try {
      return new JournalReader(file);
    } catch (IOException | RuntimeException e) {
      file.close();
      throw e instanceof IOException io ? io : new IOException("not a decision journal: " + e.getMessage(), e);
    }
  }

  public JournalEntry.Header header() {
    return header;
  }

  /**
   * The next entry after the header, or empty at the end of the file.
   *
   * <p>A file whose last block the writer never finished (the ResourceManager died, the disk filled) simply ends
   * after the last whole block: Avro reads a block cut short as the end of the file. Only the missing
   * {@link JournalEntry.End} tells.
   *
   * @throws IOException when the rest of the file cannot be read: a block is damaged. Every entry before it was read
   *     whole.
   */
  public Optional<JournalEntry> next() throws IOException {
    try {
      if (!file.hasNext()) {
        return Optional.empty();
      }
      JournalEntry entry = codec.decode(file.next());
      entriesRead++;
      return Optional.of(entry);
    } catch (RuntimeException e) { // Avro reports a cut-off or damaged block as an AvroRuntimeException.
      throw new IOException("the journal cannot be read past entry " + entriesRead + ": " + e.getMessage(), e);
    }
  }

  @Override
  public void close() throws IOException {
    file.close();
  }
}
