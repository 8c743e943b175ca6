package io.spindle.client.cli;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** The status API over plain HTTP: a cluster with Hadoop's simple authentication. */
final class PlainTransport implements ApiTransport {

  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

  @Override
  public Reply send(String method, URI uri) throws IOException, InterruptedException {
    HttpRequest request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30))
        .method(method, HttpRequest.BodyPublishers.noBody()).build();
    HttpResponse<String> r = http.send(request, HttpResponse.BodyHandlers.ofString());
    return new Reply(r.statusCode(), r.body(), r.headers().firstValue("WWW-Authenticate").orElse(null));
  }
}
