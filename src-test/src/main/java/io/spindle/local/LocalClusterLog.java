package io.spindle.local;

import java.net.URL;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import org.apache.log4j.LogManager;
import org.apache.log4j.PropertyConfigurator;

/** The local cluster's log: Hadoop's, ZooKeeper's and Spindle's go to one file, not the console. */
final class LocalClusterLog {

  /** Held so the level settings are not garbage-collected with the loggers. */
  private static final List<java.util.logging.Logger> JUL_QUIET = List.of(
      java.util.logging.Logger.getLogger("com.google.inject"), java.util.logging.Logger.getLogger("org.glassfish"));

  private LocalClusterLog() {}

  /** Everything to {@code logFile}; to the console too when {@code verbose}. */
  static void toFile(Path logFile, boolean verbose) {
    Properties p = new Properties();
    p.setProperty("log4j.rootLogger", verbose ? "INFO, file, console" : "INFO, file");
    p.setProperty("log4j.appender.file", "org.apache.log4j.FileAppender");
    p.setProperty("log4j.appender.file.File", logFile.toString());
    p.setProperty("log4j.appender.file.Append", "false");
    p.setProperty("log4j.appender.file.layout", "org.apache.log4j.PatternLayout");
    p.setProperty("log4j.appender.file.layout.ConversionPattern", "%d{ISO8601} %-5p [%t] %c{2}: %m%n");
    p.setProperty("log4j.appender.console", "org.apache.log4j.ConsoleAppender");
    p.setProperty("log4j.appender.console.Target", "System.err");
    p.setProperty("log4j.appender.console.layout", "org.apache.log4j.PatternLayout");
    p.setProperty("log4j.appender.console.layout.ConversionPattern", "%d{ISO8601} %-5p %c{1}: %m%n");
    // Chatty at INFO and of no use here.
    p.setProperty("log4j.logger.org.apache.zookeeper", "WARN");
    p.setProperty("log4j.logger.org.apache.curator", "WARN");
    p.setProperty("log4j.logger.org.apache.hadoop.ipc", "WARN");
    p.setProperty("log4j.logger.org.apache.hadoop.metrics2", "WARN");
    LogManager.resetConfiguration();
    PropertyConfigurator.configure(p);
    // Guice and Jersey (the web UIs) log through java.util.logging straight to the console.
    for (java.util.logging.Logger l : JUL_QUIET) {
      l.setLevel(verbose ? java.util.logging.Level.INFO : java.util.logging.Level.SEVERE);
    }
  }

  /** Back to the classpath's log4j.properties, for whatever else runs in this JVM (other tests). */
  static void restoreClasspathDefaults() {
    LogManager.resetConfiguration();
    URL defaults = LocalClusterLog.class.getClassLoader().getResource("log4j.properties");
    if (defaults != null) {
      PropertyConfigurator.configure(defaults);
    }
  }
}
