package io.spindle.sim;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A CSV file read by header name, never by column position: benchmarks read the trace files as they are, and a
 * column added or moved in a later version of a trace must not silently shift the data.
 *
 * <p>Plain RFC 4180 subset: comma separated, optional double quotes around a field (a doubled quote inside is one
 * quote), no line breaks inside fields. A row shorter than the header is padded with empty fields (trailing empty
 * columns are often dropped by writers); a longer row is an error naming the line.
 */
public final class CsvTable {

  private final String source;
  private final Map<String, Integer> columns;
  private final List<String[]> rows;

  private CsvTable(String source, Map<String, Integer> columns, List<String[]> rows) {
    this.source = source;
    this.columns = columns;
    this.rows = rows;
  }

  public static CsvTable read(Path file) {
    try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      return read(file.toString(), in);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file, e);
    }
  }

  public static CsvTable read(String source, Reader in) throws IOException {
    BufferedReader reader = new BufferedReader(in);
    String header = reader.readLine();
    if (header == null) {
      throw new IllegalArgumentException(source + ": empty file, no header line");
    }
    if (header.startsWith("\uFEFF")) {
      header = header.substring(1);
    }
    String[] names = split(header);
    Map<String, Integer> columns = new LinkedHashMap<>();
    for (int i = 0; i < names.length; i++) {
      if (columns.putIfAbsent(names[i].strip(), i) != null) {
        throw new IllegalArgumentException(source + ": duplicate column '" + names[i] + "' in the header");
      }
    }
    List<String[]> rows = new ArrayList<>();
    String line;
    int lineNo = 1;
    while ((line = reader.readLine()) != null) {
      lineNo++;
      if (line.isBlank()) {
        continue;
      }
      String[] fields = split(line);
      if (fields.length > names.length) {
        throw new IllegalArgumentException(source + " line " + lineNo + ": " + fields.length + " fields, header has "
            + names.length);
      }
      if (fields.length < names.length) {
        String[] padded = new String[names.length];
        System.arraycopy(fields, 0, padded, 0, fields.length);
        for (int i = fields.length; i < names.length; i++) {
          padded[i] = "";
        }
        fields = padded;
      }
      rows.add(fields);
    }
    return new CsvTable(source, Collections.unmodifiableMap(columns), rows);
  }

  private static String[] split(String line) {
    List<String> out = new ArrayList<>();
    StringBuilder field = new StringBuilder();
    boolean quoted = false;
    for (int i = 0; i < line.length(); i++) {
      char ch = line.charAt(i);
      if (quoted) {
        if (ch == '"') {
          if (i + 1 < line.length() && line.charAt(i + 1) == '"') {
            field.append('"');
            i++;
          } else {
            quoted = false;
          }
        } else {
          field.append(ch);
        }
      } else if (ch == '"') {
        quoted = true;
      } else if (ch == ',') {
        out.add(field.toString());
        field.setLength(0);
      } else {
        field.append(ch);
      }
    }
    out.add(field.toString());
    return out.toArray(new String[0]);
  }

  /** The header's column names, in file order. */
  public java.util.List<String> columnNames() {
    return java.util.List.copyOf(columns.keySet());
  }

  public boolean has(String column) {
    return columns.containsKey(column);
  }

  /** The column's position; an error naming the file and the columns it has when it is missing. */
  public int column(String name) {
    Integer i = columns.get(name);
    if (i == null) {
      throw new IllegalArgumentException(source + ": no column '" + name + "'; columns are " + columns.keySet());
    }
    return i;
  }

  public int size() {
    return rows.size();
  }

  /** Row {@code row}'s field in the named column, stripped of surrounding blanks. */
  public String get(int row, String column) {
    return rows.get(row)[column(column)].strip();
  }

  public long getLong(int row, String column) {
    String v = get(row, column);
    try {
      return Long.parseLong(v);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(source + " row " + (row + 1) + ": column '" + column + "' is '" + v
          + "', not a whole number");
    }
  }

  public double getDouble(int row, String column) {
    String v = get(row, column);
    try {
      return Double.parseDouble(v);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(source + " row " + (row + 1) + ": column '" + column + "' is '" + v
          + "', not a number");
    }
  }

  public String source() {
    return source;
  }
}
