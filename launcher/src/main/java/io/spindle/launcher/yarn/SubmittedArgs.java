package io.spindle.launcher.yarn;

import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The command line as the client hands it to the ApplicationMaster: one URL-encoded word per line after a {@code =}
 * (so an empty word is a line too), so any word arrives as given.
 */
final class SubmittedArgs {

  private SubmittedArgs() {}

  static String write(List<String> args) {
    StringBuilder b = new StringBuilder();
    for (String a : args) {
      b.append('=').append(URLEncoder.encode(a, StandardCharsets.UTF_8)).append('\n');
    }
    return b.toString();
  }

  static List<String> read(String text) {
    List<String> out = new ArrayList<>();
    for (String line : text.split("\n")) {
      if (line.startsWith("=")) {
        out.add(URLDecoder.decode(line.substring(1), StandardCharsets.UTF_8));
      }
    }
    return out;
  }
}
