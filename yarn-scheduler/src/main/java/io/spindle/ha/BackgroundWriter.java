package io.spindle.ha;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;

/**
 * The one daemon thread a ZooKeeper store writes (or reads) on, so the ResourceManager's own threads never wait on
 * ZooKeeper; on close, what is queued gets a few seconds to finish.
 */
final class BackgroundWriter {

  private BackgroundWriter() {}

  static ExecutorService start(String threadName) {
    return Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, threadName);
      t.setDaemon(true);
      return t;
    });
  }

  /** Lets queued writes finish for up to five seconds; says on {@code log} what was dropped if they do not. */
  static void stop(ExecutorService writer, Logger log, String droppedWhat) {
    writer.shutdown();
    try {
      if (!writer.awaitTermination(5, TimeUnit.SECONDS)) {
        log.warn("{} still being written at shutdown were dropped", droppedWhat);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
