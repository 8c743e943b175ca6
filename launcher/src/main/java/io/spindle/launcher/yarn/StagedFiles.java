package io.spindle.launcher.yarn;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.yarn.api.records.LocalResource;
import org.apache.hadoop.yarn.api.records.LocalResourceType;
import org.apache.hadoop.yarn.api.records.LocalResourceVisibility;
import org.apache.hadoop.yarn.api.records.URL;

/**
 * The job's staging directory ({@code ~/.spindle-run/<application id>} on the default file system): what the client
 * uploads — the jars of Spindle's code the AM runs, the client's configuration, the command line, {@code --files} under {@code files/}
 * and {@code --archives} under {@code archives/} — and how it becomes YARN local resources of the AM and every worker.
 */
final class StagedFiles {

  static final String CONF = "__spindle_run_conf__.xml";
  static final String ARGS = "__spindle_run_args__";
  static final String FILES = "files";
  static final String ARCHIVES = "archives";
  /** Tells the AM where the staging directory is. */
  static final String STAGING_ENV = "SPINDLE_RUN_STAGING";

  private StagedFiles() {}

  static Path stagingDir(FileSystem fs, String appId) {
    return new Path(fs.getHomeDirectory(), ".spindle-run/" + appId);
  }

  static LocalResource resource(FileSystem fs, Path path, LocalResourceType type) throws IOException {
    FileStatus st = fs.getFileStatus(path);
    return LocalResource.newInstance(URL.fromPath(fs.makeQualified(path)), type,
        LocalResourceVisibility.APPLICATION, st.getLen(), st.getModificationTime());
  }

  /** The workers' local resources: every staged file and archive under its own name. */
  static Map<String, LocalResource> workerResources(FileSystem fs, Path staging) throws IOException {
    Map<String, LocalResource> out = new HashMap<>();
    add(fs, new Path(staging, FILES), LocalResourceType.FILE, out);
    add(fs, new Path(staging, ARCHIVES), LocalResourceType.ARCHIVE, out);
    return out;
  }

  private static void add(FileSystem fs, Path dir, LocalResourceType type, Map<String, LocalResource> out)
      throws IOException {
    if (!fs.exists(dir)) {
      return;
    }
    for (FileStatus st : fs.listStatus(dir)) {
      out.put(st.getPath().getName(), resource(fs, st.getPath(), type));
    }
  }
}
