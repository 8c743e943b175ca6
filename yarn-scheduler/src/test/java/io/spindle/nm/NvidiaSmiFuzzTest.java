package io.spindle.nm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.spindle.fuzz.FuzzInput;
import io.spindle.fuzz.HostileInput;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hostile {@code nvidia-smi} output (a broken driver, a wrapper script, a tool version Spindle has not seen): each
 * of {@link NvidiaSmiParser}'s readers returns records or throws an {@link NvidiaSmiFormatException} that says what
 * it could not read; nothing else, so the NodeManager keeps running and logs the reason. Inputs are random text and
 * the recorded fixtures with lines cut, repeated, numbers made huge and markup (entities, a DOCTYPE) slipped in.
 */
class NvidiaSmiFuzzTest {

  private static final String TARGET = "nvidia-smi output";
  private static final List<String> FIXTURES = List.of("a100-mig", "a100-mig-partial", "h100-2x4-islands", "h100-8x",
      "a100-mig/after-reconfigure", "a100-mig-partial/after-reconfigure");
  /** Words that mean something to one of the four readers, or to an XML parser. */
  private static final List<String> TOKENS = List.of("GPU", "GPU0", "GPU99999999999", "GPU2147483647", "GPU-1", "NV4",
      "NV", "X", "MIG ", "MIG 1g.5gb", "Device", "(UUID: ", ")", "|", ":", "GPU instances:", "No GPU instances found",
      "99999999999999999999", "2147483648", "4294967297", "-1", "N/A", "<gpu>", "</gpu>", "<uuid>", "<mig_device>",
      "<index>", "&amp;", "&lt;", "&#0;", "&#x110000;", "]]>", "<![CDATA[", "<!--", "&undefined;",
      "<!DOCTYPE nvidia_smi_log [<!ENTITY e \"eeeeeeeeeeeeeeee\">]>", "&e;", "\u0000", "\r", "\t", "\u001b[4m",
      "\ud800", "\n");
  private static final Pattern NUMBER = Pattern.compile("\\d+");

  private enum Format {
    LIST("list.txt"), QUERY("query.xml"), TOPOLOGY("topo.txt"), GPU_INSTANCES("lgi.txt");

    final String file;

    Format(String file) {
      this.file = file;
    }
  }

  private static final Map<Format, List<String>> SAMPLES = samples();

  @Test
  void randomListOutputIsReadOrRefusedWithAReason() {
    HostileInput.assertBothKinds(HostileInput.run(TARGET + " -L", in -> check(Format.LIST, in)));
  }

  @Test
  void randomQueryXmlIsReadOrRefusedWithAReason() {
    HostileInput.assertBothKinds(HostileInput.run(TARGET + " -q -x", in -> check(Format.QUERY, in)));
  }

  @Test
  void randomTopologyIsReadOrRefusedWithAReason() {
    HostileInput.assertBothKinds(HostileInput.run(TARGET + " topo -m", in -> check(Format.TOPOLOGY, in)));
  }

  @Test
  void randomGpuInstanceTablesAreReadOrRefusedWithAReason() {
    HostileInput.assertBothKinds(HostileInput.run(TARGET + " mig -lgi", in -> check(Format.GPU_INSTANCES, in)));
  }

  @FuzzTest(maxExecutions = 10_000)
  void coverageGuided(byte[] bytes) {
    HostileInput.once(TARGET, in -> check(in.pick(Format.values()), in), bytes);
  }

  @AfterAll
  static void report() {
    HostileInput.report(TARGET);
  }

  static String check(Format format, FuzzInput in) {
    String text = in.below(4) == 0 ? in.text(400) : mutate(in, in.pick(SAMPLES.get(format)));
    try {
      Object parsed = switch (format) {
        case LIST -> NvidiaSmiParser.parseList(text);
        case QUERY -> NvidiaSmiParser.parseQuery(text);
        case TOPOLOGY -> NvidiaSmiParser.parseTopology(text);
        case GPU_INSTANCES -> NvidiaSmiParser.parseGpuInstances(text);
      };
      assertThat(parsed).isNotNull();
      return HostileInput.ACCEPTED;
    } catch (NvidiaSmiFormatException e) {
      return HostileInput.rejected(e, NvidiaSmiFormatException.class);
    }
  }

  /** Shared with {@link GpuHealthFuzzTest}: the fixture with lines cut, repeated, numbers made huge, markup slipped in. */
  static String mutate(FuzzInput in, String sample) {
    StringBuilder s = new StringBuilder(sample);
    int edits = in.intIn(1, 4);
    for (int i = 0; i < edits; i++) {
      int at = s.length() == 0 ? 0 : in.below(s.length());
      int to = Math.min(s.length(), at + in.below(200));
      switch (in.below(7)) {
        case 0 -> s.delete(at, to);
        case 1 -> s.insert(at, s.substring(at, to).repeat(in.intIn(1, 8)));
        case 2 -> s.insert(at, in.pick(TOKENS));
        case 3 -> s.insert(at, in.text(30));
        case 4 -> s.setLength(at);
        case 5 -> {
          if (s.length() > 0) {
            s.setCharAt(Math.min(at, s.length() - 1), (char) in.nextByte());
          }
        }
        default -> {
          // A number of the output made huge, negative or otherwise out of range.
          Matcher m = NUMBER.matcher(s);
          if (m.find(at)) {
            s.replace(m.start(), m.end(), in.pick("99999999999999999999", "2147483648", "4294967296", "-1",
                "1000000", "0", Integer.toString(in.interestingInt())));
          }
        }
      }
      if (s.length() == 0) {
        break;
      }
    }
    return s.toString();
  }

  /** Found by this test: a header naming GPU 2,000,000,000 made the reader allocate an 8 GB array. */
  @Test
  void aTopologyNamingAHugeGpuIndexCostsNothingForIt() throws Exception {
    String topo = "\tGPU0\tGPU2000000000\nGPU0\tX\tNV4\nGPU2000000000\tNV4\tX\n";
    assertThat(NvidiaSmiParser.parseTopology(topo)).containsExactly(Map.entry(0, 0), Map.entry(2_000_000_000, 0));
  }

  /** Found by this test: a row for a GPU the header does not name failed with an index out of bounds. */
  @Test
  void aRowWithoutAColumnIsRefusedWithAReason() {
    assertThatThrownBy(() -> NvidiaSmiParser.parseTopology("\tGPU0\tGPU1\nGPU0\tX\tNV4\nGPU7\tNV4\tX\n"))
        .isInstanceOf(NvidiaSmiFormatException.class).hasMessageContaining("row GPU7 has no column");
  }

  /** Found by this test: indices beyond an int were a NumberFormatException, not a reason. */
  @Test
  void indicesBeyondAnIntAreRefusedWithAReason() {
    assertThatThrownBy(() -> NvidiaSmiParser.parseList("GPU 99999999999: NVIDIA H100 (UUID: GPU-1)\n"))
        .isInstanceOf(NvidiaSmiFormatException.class).hasMessageContaining("99999999999");
    assertThatThrownBy(() -> NvidiaSmiParser.parseGpuInstances("GPU instances:\n"
        + "|   0  MIG 1g.5gb          19  99999999999          2:1     |\n"))
        .isInstanceOf(NvidiaSmiFormatException.class).hasMessageContaining("99999999999");
  }

  /** An entity that expands a billion times must be refused at once, not held in memory. */
  @Test
  void entityExpansionIsRefused() {
    StringBuilder xml = new StringBuilder("<?xml version=\"1.0\"?>\n<!DOCTYPE nvidia_smi_log [\n<!ENTITY l0 \"lol\">\n");
    for (int i = 1; i <= 9; i++) {
      xml.append("<!ENTITY l").append(i).append(" \"").append(("&l" + (i - 1) + ";").repeat(10)).append("\">\n");
    }
    xml.append("]>\n<nvidia_smi_log><gpu><uuid>&l9;</uuid><product_name>x</product_name></gpu></nvidia_smi_log>");
    assertTimeoutPreemptively(Duration.ofSeconds(10), () -> assertThatThrownBy(
        () -> NvidiaSmiParser.parseQuery(xml.toString())).isInstanceOf(NvidiaSmiFormatException.class));
  }

  /** An external entity must never be read: output naming a file gets nothing of it. */
  @Test
  void externalEntitiesAreNotRead(@TempDir Path dir) throws Exception {
    Path secret = dir.resolve("secret");
    Files.writeString(secret, "do-not-read-me");
    String xml = "<?xml version=\"1.0\"?>\n<!DOCTYPE nvidia_smi_log [<!ENTITY x SYSTEM \"" + secret.toUri() + "\">]>\n"
        + "<nvidia_smi_log><gpu><uuid>GPU-1</uuid><product_name>A&x;</product_name></gpu></nvidia_smi_log>";
    try {
      List<NvidiaSmiParser.SmiGpu> gpus = NvidiaSmiParser.parseQuery(xml);
      assertThat(gpus.toString()).doesNotContain("do-not-read-me");
    } catch (NvidiaSmiFormatException refused) {
      assertThat(refused.getMessage()).doesNotContain("do-not-read-me");
    }
  }

  private static Map<Format, List<String>> samples() {
    Map<Format, List<String>> out = new java.util.EnumMap<>(Format.class);
    for (Format f : Format.values()) {
      List<String> texts = new ArrayList<>();
      for (String fixture : FIXTURES) {
        try (InputStream in = NvidiaSmiFuzzTest.class.getResourceAsStream("/nvidia-smi/" + fixture + "/" + f.file)) {
          if (in != null) {
            texts.add(new String(in.readAllBytes(), StandardCharsets.UTF_8));
          }
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }
      if (f == Format.QUERY) {
        try (InputStream in = NvidiaSmiFuzzTest.class.getResourceAsStream("/nvidia-smi/a100-mig/query-busy.xml")) {
          texts.add(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }
      texts.add(f == Format.GPU_INSTANCES ? "No GPU instances found: Not Found\n" : "");
      out.put(f, List.copyOf(texts));
    }
    return out;
  }
}
