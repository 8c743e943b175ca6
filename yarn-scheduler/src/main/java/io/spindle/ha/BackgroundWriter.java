package io.spindle.ha;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;

/**
 * The one daemon thread a ZooKeeper store writes (or reads) on, so the ResourceManager's own threads never wait on
 * ZooKeeper; on close, what is queued gets a few seconds to finish. Leadership and the channels
 * ({@code io.spindle.channel}) use it alike.
 */
public final class BackgroundWriter {

  private BackgroundWriter() {}

  public static ExecutorService start(String threadName) {
    return Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, threadName);
      t.setDaemon(true);
      return t;
    });
  }

  /**
   * Lets queued writes finish for up to five seconds, then drops the rest, saying on {@code log} how many: left
   * running, they would go on against a ZooKeeper client the caller is about to close, failing one by one.
   */
  public static void stop(ExecutorService writer, Logger log, String droppedWhat) {
    writer.shutdown();
    try {
      if (!writer.awaitTermination(5, TimeUnit.SECONDS)) {
        int dropped = writer.shutdownNow().size();
        log.warn("{} still being written at shutdown were dropped ({} queued writes)", droppedWhat, dropped);
      }
    } catch (InterruptedException e) {
      writer.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }
}
