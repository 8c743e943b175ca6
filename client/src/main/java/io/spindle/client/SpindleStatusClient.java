package io.spindle.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.function.Function;

/**
 * An application's view of Spindle's status API in the ResourceManager: what the scheduler advises it, for now how
 * often to checkpoint ({@link #checkpointAdvice}).
 *
 * <pre>{@code
 * SpindleStatusClient.from(yarnConf::get).ifPresent(status -> {
 *   try {
 *     Duration every = status.checkpointAdvice(appId).interval();
 *   } catch (IOException e) { ... keep the job's own interval }
 * });
 * }</pre>
 *
 * <p>Plain HTTP: on a cluster whose status API asks for Kerberos (SPNEGO) the calls fail with the server's 401, and
 * the application keeps its own interval; {@code scripts/spindle advice} speaks Kerberos.
 */
public final class SpindleStatusClient {

  private static final ObjectMapper JSON = new ObjectMapper();

  private final URI api;

  /** The status API at {@code root} ({@code http://host:port/}). */
  public SpindleStatusClient(URI root) {
    this.api = root.resolve("api/v1/");
  }

  /** The status API a Hadoop configuration names ({@link StatusApiAddress}); empty when it names none. */
  public static Optional<SpindleStatusClient> from(Function<String, String> conf) {
    return StatusApiAddress.from(conf).map(SpindleStatusClient::new);
  }

  /**
   * How often the application should checkpoint, as Spindle advises it now: for the GPUs it holds (or, before its
   * gang starts, asks for), at the failure rate the cluster has seen, with the write time it last reported
   * ({@link SpindleCheckpointClient#reportCheckpoint(String, long, java.time.Duration)}).
   *
   * @throws IOException with the reason when there is no advice: the API cannot be reached, the application is not
   *     known to the scheduler or has no GPU
   */
  public CheckpointAdviceView checkpointAdvice(String appId) throws IOException {
    JsonNode body = get("apps/" + URLEncoder.encode(appId, StandardCharsets.UTF_8) + "/checkpoint-advice");
    return CheckpointAdviceView.fromJson(body);
  }

  private JsonNode get(String path) throws IOException {
    URI uri = api.resolve(path);
    HttpURLConnection c = (HttpURLConnection) uri.toURL().openConnection();
    c.setConnectTimeout(2_000);
    c.setReadTimeout(5_000);
    try {
      int status = c.getResponseCode();
      InputStream in = status < 400 ? c.getInputStream() : c.getErrorStream();
      JsonNode body;
      try (InputStream stream = in) {
        body = stream == null ? null : JSON.readTree(stream);
      } catch (IOException notJson) {
        body = null;
      }
      if (status != 200 || body == null) {
        String error = body != null && body.hasNonNull("error") ? ": " + body.get("error").asText() : "";
        throw new IOException(uri + " answered HTTP " + status + error);
      }
      return body;
    } finally {
      c.disconnect();
    }
  }
}
