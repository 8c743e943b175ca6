package io.spindle.core.model;

import java.util.Objects;

/**
 * One request of one application: what waits, holds a reservation, starves, or resumes from a checkpoint. Written
 * {@code appId/requestKey} for people (a request key may itself hold a slash; nothing parses this text back).
 */
public record RequestRef(AppId appId, String requestKey) {

  public RequestRef {
    Objects.requireNonNull(appId, "appId");
    Objects.requireNonNull(requestKey, "requestKey");
  }

  @Override
  public String toString() {
    return appId + "/" + requestKey;
  }
}
