package io.spindle.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** Reads Spindle's status API (docs/admin-guide.md, "Status API") of the local cluster, as JSON. */
final class SpindleStatus {

  private static final ObjectMapper MAPPER = new ObjectMapper();
  private final String baseUrl;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  /** @param baseUrl the Spindle web address, ending in {@code /} */
  SpindleStatus(String baseUrl) {
    this.baseUrl = baseUrl;
  }

  /** {@code path} below the base address, e.g. {@code api/v1/queues}; an error status is an IOException. */
  JsonNode get(String path) throws IOException, InterruptedException {
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(baseUrl + path))
        .timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() != 200) {
      throw new IOException("GET " + baseUrl + path + ": HTTP " + r.statusCode() + " " + r.body());
    }
    return MAPPER.readTree(r.body());
  }
}
