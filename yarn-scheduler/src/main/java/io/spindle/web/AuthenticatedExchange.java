package io.spindle.web;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpContext;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpPrincipal;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;

/**
 * An exchange that {@link SpnegoFilter} authenticated: the same exchange, with the user as its principal. The JDK
 * server sets a principal only through an {@code Authenticator}, whose refusals carry no body; the filter answers
 * refusals itself (with a readable {@code {"error"}}) and hands this on instead.
 */
final class AuthenticatedExchange extends HttpExchange {

  private final HttpExchange exchange;
  private final HttpPrincipal principal;

  AuthenticatedExchange(HttpExchange exchange, HttpPrincipal principal) {
    this.exchange = exchange;
    this.principal = principal;
  }

  @Override
  public HttpPrincipal getPrincipal() {
    return principal;
  }

  @Override
  public Headers getRequestHeaders() {
    return exchange.getRequestHeaders();
  }

  @Override
  public Headers getResponseHeaders() {
    return exchange.getResponseHeaders();
  }

  @Override
  public URI getRequestURI() {
    return exchange.getRequestURI();
  }

  @Override
  public String getRequestMethod() {
    return exchange.getRequestMethod();
  }

  @Override
  public HttpContext getHttpContext() {
    return exchange.getHttpContext();
  }

  @Override
  public void close() {
    exchange.close();
  }

  @Override
  public InputStream getRequestBody() {
    return exchange.getRequestBody();
  }

  @Override
  public OutputStream getResponseBody() {
    return exchange.getResponseBody();
  }

  @Override
  public void sendResponseHeaders(int rCode, long responseLength) throws IOException {
    exchange.sendResponseHeaders(rCode, responseLength);
  }

  @Override
  public InetSocketAddress getRemoteAddress() {
    return exchange.getRemoteAddress();
  }

  @Override
  public int getResponseCode() {
    return exchange.getResponseCode();
  }

  @Override
  public InetSocketAddress getLocalAddress() {
    return exchange.getLocalAddress();
  }

  @Override
  public String getProtocol() {
    return exchange.getProtocol();
  }

  @Override
  public Object getAttribute(String name) {
    return exchange.getAttribute(name);
  }

  @Override
  public void setAttribute(String name, Object value) {
    exchange.setAttribute(name, value);
  }

  @Override
  public void setStreams(InputStream i, OutputStream o) {
    exchange.setStreams(i, o);
  }
}
