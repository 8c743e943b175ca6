package io.spindle.core.queue;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/** The sample {@code conf/capacity-scheduler.xml} that admins copy must always parse. */
class SampleConfigTest {

  @Test
  void shippedSampleParses() throws Exception {
    Map<String, String> conf = readHadoopXml(Path.of("../conf/capacity-scheduler.xml"));
    QueueTree tree = new QueueConfigParser().parse(conf);
    assertThat(tree.leaves()).extracting(QueueConfig::path).containsExactly(
        "root.research.vision", "root.research.llm", "root.production.inference", "root.production.etl");
    assertThat(tree.leaf("llm").orElseThrow().weight()).isEqualTo(2.0);
    assertThat(tree.leaf("llm").orElseThrow().userLimitFactor()).isEqualTo(-1.0);
  }

  /** Hadoop's configuration format, read the plain way (the core knows no Hadoop classes). */
  static Map<String, String> readHadoopXml(Path file) throws Exception {
    DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
    factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
    Document doc = factory.newDocumentBuilder().parse(file.toFile());
    NodeList properties = doc.getElementsByTagName("property");
    Map<String, String> out = new LinkedHashMap<>();
    for (int i = 0; i < properties.getLength(); i++) {
      Element p = (Element) properties.item(i);
      out.put(p.getElementsByTagName("name").item(0).getTextContent().strip(),
          p.getElementsByTagName("value").item(0).getTextContent().strip());
    }
    return out;
  }
}
