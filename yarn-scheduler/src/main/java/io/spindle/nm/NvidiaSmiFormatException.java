package io.spindle.nm;

/** nvidia-smi printed something Spindle cannot read; the message says what and where. */
public final class NvidiaSmiFormatException extends Exception {

  public NvidiaSmiFormatException(String message) {
    super(message);
  }

  public NvidiaSmiFormatException(String message, Throwable cause) {
    super(message, cause);
  }
}
