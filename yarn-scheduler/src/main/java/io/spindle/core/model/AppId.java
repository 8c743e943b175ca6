package io.spindle.core.model;

/**
 * An application, as the engine knows it. The YARN adapter makes one from an {@code ApplicationId} (its text form,
 * {@code application_<cluster>_<n>}) and keeps the way back; the simulator makes one from a trace's job id.
 */
public final class AppId extends TextId<AppId> {

  private AppId(String value) {
    super("appId", value);
  }

  public static AppId of(String value) {
    return new AppId(value);
  }
}
