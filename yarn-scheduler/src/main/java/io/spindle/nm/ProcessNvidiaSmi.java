package io.spindle.nm;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Runs the real {@code nvidia-smi} binary (or any stand-in at the configured path) as a child process. */
public final class ProcessNvidiaSmi implements NvidiaSmi {

  private final List<String> command;
  private final Duration timeout;

  /**
   * @param command the binary and any leading arguments ({@code [/usr/bin/nvidia-smi]}; tests put a fake script
   *     and its fixture folder here)
   * @param timeout how long one invocation may run before it is killed; nvidia-smi hangs when the driver does
   */
  public ProcessNvidiaSmi(List<String> command, Duration timeout) {
    if (command.isEmpty()) {
      throw new IllegalArgumentException("nvidia-smi command is empty");
    }
    this.command = List.copyOf(command);
    this.timeout = timeout;
  }

  @Override
  public Result run(List<String> args) {
    List<String> full = new ArrayList<>(command);
    full.addAll(args);
    Process process;
    try {
      process = new ProcessBuilder(full).start();
    } catch (IOException e) {
      return new Result(-1, "", "cannot start " + command.get(0) + ": " + e.getMessage());
    }
    closeStdin(process);
    // Both streams are drained concurrently: a child that fills the stderr pipe while we read stdout would block.
    CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> read(process.getInputStream()));
    CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> read(process.getErrorStream()));
    try {
      if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        process.destroyForcibly();
        return new Result(-1, "", "timed out after " + timeout.toMillis() + " ms");
      }
      return new Result(process.exitValue(), out.get(timeout.toMillis(), TimeUnit.MILLISECONDS),
          err.get(timeout.toMillis(), TimeUnit.MILLISECONDS));
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
      return new Result(-1, "", "interrupted");
    } catch (ExecutionException | TimeoutException e) {
      process.destroyForcibly();
      return new Result(-1, "", "cannot read its output: " + e.getMessage());
    }
  }

  /** nvidia-smi reads nothing; closing stdin lets a tool that asks for confirmation fail instead of hanging. */
  private static void closeStdin(Process process) {
    try {
      process.getOutputStream().close();
    } catch (IOException ignored) {
      // Nothing to do: the child either never reads stdin or already exited.
    }
  }

  private static String read(InputStream in) {
    try (in) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
