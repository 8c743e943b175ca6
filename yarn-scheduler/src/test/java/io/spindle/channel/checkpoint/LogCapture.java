package io.spindle.channel.checkpoint;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.log4j.AppenderSkeleton;
import org.apache.log4j.Logger;
import org.apache.log4j.spi.LoggingEvent;

/** The log lines of one class, as Hadoop's SLF4J binding (reload4j) sees them; for asserting what was logged. */
final class LogCapture extends AppenderSkeleton implements AutoCloseable {

  private final Logger logger;
  private final List<String> lines = new CopyOnWriteArrayList<>();

  private LogCapture(Class<?> source) {
    this.logger = Logger.getLogger(source);
    logger.addAppender(this);
  }

  static LogCapture of(Class<?> source) {
    return new LogCapture(source);
  }

  List<String> lines() {
    return List.copyOf(lines);
  }

  @Override
  protected void append(LoggingEvent event) {
    lines.add(event.getLevel() + " " + event.getRenderedMessage());
  }

  @Override
  public boolean requiresLayout() {
    return false;
  }

  @Override
  public void close() {
    logger.removeAppender(this);
  }
}
