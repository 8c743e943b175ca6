package io.spindle.journal;

import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.core.engine.EngineEvent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the writer does when it cannot write: the scheduler's calls never fail or wait. */
class JournalWriterTest {

  @TempDir
  Path dir;

  @Test
  void aJournalThatCannotBeWrittenDropsEntriesAndNeverFailsTheScheduler() throws Exception {
    Path notADirectory = Files.writeString(dir.resolve("taken"), "a file where the directory should be");
    JournalEntry.Header header = JournalRoundTripTest.header(1_700_000_000_000L);
    JournalWriter writer = JournalWriter.start(new JournalSettings(notADirectory.resolve("journal"), 1_000), header);

    for (int i = 0; i < 50; i++) {
      writer.cycle(header.clockStartMillis() + i * 100L, List.of(new EngineEvent.ContainerFinished(i)), List.of());
    }
    long started = System.nanoTime();
    writer.close();

    assertThat(System.nanoTime() - started).as("close does not hang").isLessThan(5_000_000_000L);
    assertThat(writer.lostEntries()).as("every entry is counted lost").isEqualTo(50);
    assertThat(writer.path()).isNull();
  }

  @Test
  void anEngineThatNeverRanACycleLeavesNoFile() throws Exception {
    DecisionJournal journal = DecisionJournal.open(new JournalSettings(dir, 1_000),
        JournalRoundTripTest.header(1_700_000_000_000L));
    journal.close();

    try (var files = Files.list(dir)) {
      assertThat(files).as("a standby ResourceManager's scheduler").isEmpty();
    }
  }

  @Test
  void noDirectoryMeansNoJournal() {
    assertThat(JournalSettings.from(java.util.Map.of()).enabled()).isFalse();
    assertThat(DecisionJournal.open(JournalSettings.from(java.util.Map.of(JournalSettings.DIR, " ")),
        JournalRoundTripTest.header(0))).isSameAs(DecisionJournal.OFF);
  }
}
