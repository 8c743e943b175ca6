package io.spindle.core.status;

import io.spindle.core.model.AppId;

/**
 * Why an application is where it is, in one paragraph for people.
 *
 * @param state the one-word summary scripts can test
 * @param text the paragraph
 */
public record Explanation(AppId appId, State state, String text) {

  public enum State {
    /** Requests wait to be placed. */
    PENDING,
    /** Containers were taken back for another request; the request waits again. */
    PREEMPTED,
    /** A checkpoint notice is in flight: containers will be taken back at its deadline unless it is withdrawn. */
    CHECKPOINTING,
    /** Everything asked for runs. */
    RUNNING,
    /** The application or one of its requests can never be served as asked. */
    REJECTED,
    /** Spindle does not know the application (finished long ago, never submitted, or not yet seen). */
    UNKNOWN
  }
}
