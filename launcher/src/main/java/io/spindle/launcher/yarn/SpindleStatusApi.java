package io.spindle.launcher.yarn;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.spindle.client.StatusApiAddress;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.util.Optional;
import org.apache.hadoop.conf.Configuration;

/**
 * Spindle's status API in the ResourceManager, found from the Hadoop configuration as {@code scripts/spindle} finds
 * it ({@link StatusApiAddress}). Optional: without it {@code spindle-run} still runs,
 * but cannot show why a gang waits nor number ranks by NVLink island. Plain HTTP (a Kerberos cluster's SPNEGO is
 * not spoken here yet); every failure reads as "not available".
 */
final class SpindleStatusApi {

  private static final ObjectMapper MAPPER = new ObjectMapper();

  private final URI base;

  private SpindleStatusApi(URI base) {
    this.base = base;
  }

  static Optional<SpindleStatusApi> of(Configuration conf) {
    return StatusApiAddress.from(conf::get).map(root -> new SpindleStatusApi(root.resolve("api/v1/")));
  }

  /** GETs {@code path} under {@code /api/v1/}; empty when the API does not answer 200 with JSON. */
  Optional<JsonNode> get(String path) {
    try {
      HttpURLConnection c = (HttpURLConnection) base.resolve(path).toURL().openConnection();
      c.setConnectTimeout(2_000);
      c.setReadTimeout(5_000);
      if (c.getResponseCode() != 200) {
        return Optional.empty();
      }
      try (InputStream in = c.getInputStream()) {
        return Optional.of(MAPPER.readTree(in));
      }
    } catch (IOException | RuntimeException e) {
      return Optional.empty();
    }
  }

  /** Spindle's explanation of why the application waits ({@code spindle why}), while it waits for something. */
  Optional<String> why(String appId) {
    return get("apps/" + appId + "/why")
        .filter(j -> !j.path("state").asText("").equals("RUNNING") && !j.path("state").asText("").equals("UNKNOWN"))
        .map(j -> j.path("explanation").asText("")).filter(s -> !s.isBlank());
  }
}
