package io.spindle.client.cli;

import io.spindle.client.StatusApiAddress;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * Where the status API of the ResourceManager is: {@code --url}, else {@code SPINDLE_URL}, else the Spindle HTTP
 * keys and the RM's address in {@code $HADOOP_CONF_DIR/yarn-site.xml} (what every Hadoop client already has).
 */
final class StatusEndpoint {

  static final String PORT_KEY = StatusApiAddress.PORT_KEY;
  static final String AUTHENTICATION_KEY = "hadoop.security.authentication";

  private StatusEndpoint() {}

  static URI resolve(String url, Map<String, String> env) throws IOException {
    if (url != null) {
      return normalise(url);
    }
    String fromEnv = env.get("SPINDLE_URL");
    if (fromEnv != null && !fromEnv.isBlank()) {
      return normalise(fromEnv);
    }
    String confDir = env.getOrDefault("HADOOP_CONF_DIR", env.get("YARN_CONF_DIR"));
    if (confDir == null) {
      throw new IOException("cannot find the status API: give --url http://<rm-host>:<port>, set SPINDLE_URL, or"
          + " set HADOOP_CONF_DIR to a directory whose yarn-site.xml sets " + PORT_KEY);
    }
    Path site = Path.of(confDir, "yarn-site.xml");
    Map<String, String> conf = readSite(site);
    return StatusApiAddress.from(conf::get).orElseThrow(() -> new IOException(site + " sets no " + PORT_KEY
        + " > 0, so the RM serves no status API at a known port; give --url or set SPINDLE_URL"));
  }

  /**
   * Whether the client's Hadoop configuration ({@code $HADOOP_CONF_DIR/core-site.xml}) says
   * {@code hadoop.security.authentication=kerberos}. Without one, the CLI learns it from the server's 401.
   */
  static boolean kerberos(Map<String, String> env) throws IOException {
    Optional<Path> site = coreSite(env);
    return site.isPresent()
        && readSite(site.get()).getOrDefault(AUTHENTICATION_KEY, "simple").trim().equalsIgnoreCase("kerberos");
  }

  /** {@code $HADOOP_CONF_DIR/core-site.xml} (else {@code $YARN_CONF_DIR}'s), if there is one. */
  static Optional<Path> coreSite(Map<String, String> env) {
    String confDir = env.getOrDefault("HADOOP_CONF_DIR", env.get("YARN_CONF_DIR"));
    return Optional.ofNullable(confDir).map(d -> Path.of(d, "core-site.xml")).filter(Files::isRegularFile);
  }

  private static URI normalise(String url) {
    return URI.create(url.endsWith("/") ? url : url + "/");
  }

  /** The name/value pairs of a Hadoop configuration file (no variable expansion, no includes: not needed here). */
  static Map<String, String> readSite(Path file) throws IOException {
    if (!Files.isRegularFile(file)) {
      throw new IOException("no " + file);
    }
    Map<String, String> out = new HashMap<>();
    try (InputStream in = Files.newInputStream(file)) {
      DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
      f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
      NodeList properties = f.newDocumentBuilder().parse(in).getElementsByTagName("property");
      for (int i = 0; i < properties.getLength(); i++) {
        Element p = (Element) properties.item(i);
        text(p, "name").ifPresent(name -> text(p, "value").ifPresent(value -> out.put(name, value)));
      }
    } catch (IOException e) {
      throw e;
    } catch (Exception e) {
      throw new IOException("cannot read " + file + ": " + e.getMessage(), e);
    }
    return out;
  }

  private static Optional<String> text(Element parent, String tag) {
    NodeList n = parent.getElementsByTagName(tag);
    return n.getLength() == 0 ? Optional.empty() : Optional.of(n.item(0).getTextContent().trim());
  }
}
