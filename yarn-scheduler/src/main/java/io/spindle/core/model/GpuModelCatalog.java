package io.spindle.core.model;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The GPU models Spindle knows, with their MIG geometry, read from a small text format (see
 * {@code gpu-models.txt} beside this class) so that geometry is data, not code.
 */
public final class GpuModelCatalog {

  private static final String BUILT_IN = "gpu-models.txt";

  private final Map<String, GpuModel> byName;
  private final Map<String, GpuModel> byAlias;

  private GpuModelCatalog(List<GpuModel> models) {
    Map<String, GpuModel> names = new LinkedHashMap<>();
    Map<String, GpuModel> aliases = new LinkedHashMap<>();
    for (GpuModel m : models) {
      if (names.putIfAbsent(m.name(), m) != null) {
        throw new InvalidInputException("model", m.name(), "duplicate GPU model in catalog");
      }
      aliases.put(m.name().toLowerCase(Locale.ROOT), m);
      for (String alias : m.aliases()) {
        aliases.put(alias.toLowerCase(Locale.ROOT), m);
      }
    }
    this.byName = Map.copyOf(names);
    this.byAlias = Map.copyOf(aliases);
    this.order = List.copyOf(names.values());
  }

  private final List<GpuModel> order;

  /** The catalog shipped with Spindle: A100-40GB/80GB, H100-80GB/94GB, H200-141GB, B200-180GB, A30-24GB. */
  public static GpuModelCatalog builtIn() {
    return BuiltIn.INSTANCE;
  }

  private static final class BuiltIn {
    static final GpuModelCatalog INSTANCE = load();

    private static GpuModelCatalog load() {
      try (InputStream in = GpuModelCatalog.class.getResourceAsStream(BUILT_IN)) {
        if (in == null) {
          throw new IllegalStateException("built-in GPU catalog " + BUILT_IN + " missing from the classpath");
        }
        return parse(new InputStreamReader(in, StandardCharsets.UTF_8));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  /** Parses the catalog format; errors name the line. */
  public static GpuModelCatalog parse(Reader source) throws IOException {
    record Slot(int nvmlId, int compute, int memory, List<Integer> starts, int maxInstances) {}
    record Geometry(int memorySlices, int computeSlices, List<Slot> slots) {}
    Map<String, Geometry> geometries = new LinkedHashMap<>();
    List<GpuModel> models = new ArrayList<>();
    BufferedReader reader = new BufferedReader(source);
    String line;
    int lineNo = 0;
    while ((line = reader.readLine()) != null) {
      lineNo++;
      String trimmed = line.strip();
      if (trimmed.isEmpty() || trimmed.startsWith("#")) {
        continue;
      }
      String field = "gpu-models line " + lineNo;
      try {
        String aliasPart = "";
        int aliasAt = trimmed.indexOf(" aliases=");
        if (aliasAt >= 0) {
          aliasPart = trimmed.substring(aliasAt + " aliases=".length());
          trimmed = trimmed.substring(0, aliasAt);
        }
        String[] t = trimmed.split("\\s+");
        switch (t[0]) {
          case "geometry" -> geometries.put(
              t[1], new Geometry(Integer.parseInt(t[2]), Integer.parseInt(t[3]), new ArrayList<>()));
          case "slot" -> {
            Geometry g = geometries.get(t[1]);
            if (g == null) {
              throw new InvalidInputException(field, t[1], "unknown geometry");
            }
            if (t.length != 7) {
              throw new InvalidInputException(field, line, "a slot has 6 fields after 'slot'");
            }
            g.slots().add(new Slot(Integer.parseInt(t[2]), Integer.parseInt(t[3]), Integer.parseInt(t[4]),
                Arrays.stream(t[5].split(",")).map(Integer::valueOf).toList(), Integer.parseInt(t[6])));
          }
          case "model" -> {
            Geometry g = geometries.get(t[2]);
            if (g == null) {
              throw new InvalidInputException(field, t[2], "unknown geometry");
            }
            String[] names = Arrays.copyOfRange(t, 4, t.length);
            if (names.length != g.slots().size()) {
              throw new InvalidInputException(
                  field, t[1], names.length + " profile names for " + g.slots().size() + " slots of " + t[2]);
            }
            List<MigProfile> profiles = new ArrayList<>();
            for (int i = 0; i < names.length; i++) {
              Slot s = g.slots().get(i);
              profiles.add(new MigProfile(names[i], s.nvmlId(), s.compute(), s.memory(), s.starts(),
                  s.maxInstances(), GpuModel.chargeUnits(s.compute(), s.memory(), g.computeSlices(), g.memorySlices())));
            }
            List<String> aliases = aliasPart.isEmpty()
                ? List.of() : Arrays.stream(aliasPart.split(",")).map(String::strip).toList();
            models.add(new GpuModel(t[1], Integer.parseInt(t[3]), g.memorySlices(), g.computeSlices(),
                profiles, aliases));
          }
          default -> throw new InvalidInputException(field, t[0], "unknown record type");
        }
      } catch (NumberFormatException | ArrayIndexOutOfBoundsException e) {
        throw new InvalidInputException(field, line, "malformed record (" + e.getMessage() + ")");
      }
    }
    return new GpuModelCatalog(models);
  }

  /** A catalog of exactly these models (tests, and products an admin adds). */
  public static GpuModelCatalog of(List<GpuModel> models) {
    return new GpuModelCatalog(models);
  }

  public List<GpuModel> models() {
    return order;
  }

  /** Looks a model up by its Spindle name or any alias nvidia-smi prints, ignoring case. */
  public Optional<GpuModel> find(String nameOrAlias) {
    if (nameOrAlias == null) {
      return Optional.empty();
    }
    GpuModel exact = byName.get(nameOrAlias);
    return exact != null ? Optional.of(exact)
        : Optional.ofNullable(byAlias.get(nameOrAlias.strip().toLowerCase(Locale.ROOT)));
  }

  /** Like {@link #find} but an unknown model is an error naming {@code field}. */
  public GpuModel require(String field, String nameOrAlias) {
    return find(nameOrAlias).orElseThrow(() -> new InvalidInputException(field, nameOrAlias,
        "unknown GPU model; known models: " + byName.keySet()));
  }

  /** Every model that offers a MIG profile of this name, in catalog order. */
  public List<GpuModel> modelsOffering(String profileName) {
    return order.stream().filter(m -> m.profile(profileName).isPresent()).toList();
  }

  /** Throws unless some model in the catalog offers this profile. */
  public void requireProfile(String field, String profileName) {
    if (modelsOffering(profileName).isEmpty()) {
      throw new InvalidInputException(field, profileName, "unknown MIG profile; no GPU model offers it");
    }
  }
}
