package io.spindle.client.cli;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/** Left-aligned columns as wide as their widest cell, for terminal output. */
final class TextTable {

  private final List<String[]> rows = new ArrayList<>();

  TextTable(String... header) {
    rows.add(header);
  }

  void row(Object... cells) {
    String[] r = new String[cells.length];
    for (int i = 0; i < cells.length; i++) {
      r[i] = String.valueOf(cells[i]);
    }
    rows.add(r);
  }

  void print(PrintStream out) {
    int[] width = new int[rows.get(0).length];
    for (String[] r : rows) {
      for (int i = 0; i < r.length; i++) {
        width[i] = Math.max(width[i], r[i].length());
      }
    }
    for (String[] r : rows) {
      StringBuilder line = new StringBuilder();
      for (int i = 0; i < r.length; i++) {
        line.append(i == r.length - 1 ? r[i] : String.format("%-" + (width[i] + 2) + "s", r[i]));
      }
      out.println(line.toString().stripTrailing());
    }
  }
}
