package io.spindle.journal;

import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * The container-name lookup a restore is given, recording what it answered so the journal can give a replay the
 * same answers. Each name is looked up once and its first answer kept: the driver's own map may change while the
 * restore runs (a node re-registering), and the engine must see one consistent view that the journal then holds.
 */
public final class RecordingLookup implements Function<String, Long> {

  private final Function<String, Long> lookup;
  private final Map<String, Long> answers = new HashMap<>();

  public RecordingLookup(Function<String, Long> lookup) {
    this.lookup = lookup;
  }

  @Override
  public Long apply(String name) {
    if (answers.containsKey(name)) {
      return answers.get(name);
    }
    Long id = lookup.apply(name);
    answers.put(name, id);
    return id;
  }

  /** The names answered with an allocation id; every other name the restore asked for was not recovered. */
  public Map<String, Long> found() {
    Map<String, Long> found = new TreeMap<>();
    answers.forEach((name, id) -> {
      if (id != null) {
        found.put(name, id);
      }
    });
    return found;
  }
}
