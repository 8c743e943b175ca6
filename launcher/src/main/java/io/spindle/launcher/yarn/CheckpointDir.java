package io.spindle.launcher.yarn;

import java.io.IOException;
import java.util.Optional;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * The job's {@code --checkpoint-dir} on any Hadoop file system: checked writable before anything is submitted, and
 * searched for the newest checkpoint when the gang starts again.
 */
final class CheckpointDir {

  private CheckpointDir() {}

  /** Creates the directory if needed and writes and deletes a probe file; the message says what failed. */
  static void requireWritable(Configuration conf, String dir) throws IOException {
    Path p = new Path(dir);
    FileSystem fs = p.getFileSystem(conf);
    Path probe = new Path(p, ".spindle-run-probe-" + System.nanoTime());
    try {
      fs.mkdirs(p);
      fs.create(probe, true).close();
      fs.delete(probe, false);
    } catch (IOException | RuntimeException e) {
      throw new IOException("--checkpoint-dir " + dir + " is not writable: " + e.getMessage(), e);
    }
  }

  /**
   * The newest entry of the directory by modification time (ties by name), skipping hidden ones ({@code .x},
   * {@code _x}) and unfinished ones ({@code *.tmp}, {@code *._COPYING_}): what a restart resumes from.
   */
  static Optional<String> newest(Configuration conf, String dir) throws IOException {
    Path p = new Path(dir);
    FileSystem fs = p.getFileSystem(conf);
    if (!fs.exists(p)) {
      return Optional.empty();
    }
    FileStatus best = null;
    for (FileStatus st : fs.listStatus(p)) {
      String name = st.getPath().getName();
      if (name.startsWith(".") || name.startsWith("_") || name.endsWith(".tmp") || name.endsWith("._COPYING_")) {
        continue;
      }
      if (best == null || st.getModificationTime() > best.getModificationTime()
          || (st.getModificationTime() == best.getModificationTime()
              && name.compareTo(best.getPath().getName()) > 0)) {
        best = st;
      }
    }
    return Optional.ofNullable(best).map(st -> st.getPath().toString());
  }
}
