package io.spindle.nm;

import java.io.IOException;
import java.io.StringReader;
import java.util.ArrayList;
import java.util.List;
import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.parsers.ParserConfigurationException;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;
import org.xml.sax.ErrorHandler;
import org.xml.sax.InputSource;
import org.xml.sax.SAXException;
import org.xml.sax.SAXParseException;

/**
 * The one safe way to read {@code nvidia-smi -q -x}: no DTD fetched, no entity expanded, every parse problem an
 * {@link NvidiaSmiFormatException}. Shared by discovery ({@link NvidiaSmiParser}) and health ({@link GpuHealthXml}).
 */
final class SmiXml {

  private SmiXml() {}

  /** The {@code <nvidia_smi_log>} root of {@code xml}, or a reason it is not one. */
  static Element root(String xml) throws NvidiaSmiFormatException {
    if (xml == null || xml.isBlank()) {
      throw new NvidiaSmiFormatException("empty output");
    }
    Element root = parse(xml).getDocumentElement();
    if (!"nvidia_smi_log".equals(root.getTagName())) {
      throw new NvidiaSmiFormatException("root element is <" + root.getTagName() + ">, expected <nvidia_smi_log>");
    }
    return root;
  }

  static Document parse(String xml) throws NvidiaSmiFormatException {
    try {
      DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
      // nvidia-smi names a DTD file that is not on every node; never fetch it, and never expand entities.
      factory.setFeature("http://apache.org/xml/features/nonvalidating/load-external-dtd", false);
      factory.setFeature("http://xml.org/sax/features/external-general-entities", false);
      factory.setFeature("http://xml.org/sax/features/external-parameter-entities", false);
      factory.setFeature(XMLConstants.FEATURE_SECURE_PROCESSING, true);
      factory.setXIncludeAware(false);
      factory.setExpandEntityReferences(false);
      DocumentBuilder builder = factory.newDocumentBuilder();
      builder.setErrorHandler(THROWING);
      return builder.parse(new InputSource(new StringReader(xml)));
    } catch (SAXParseException e) {
      throw new NvidiaSmiFormatException(
          "malformed XML at line " + e.getLineNumber() + ", column " + e.getColumnNumber() + ": " + e.getMessage(), e);
    } catch (SAXException | IOException | ParserConfigurationException e) {
      throw new NvidiaSmiFormatException("unreadable XML: " + e.getMessage(), e);
    }
  }

  /** The JDK parser prints "[Fatal Error]" to stderr by default; errors here become exceptions and nothing else. */
  private static final ErrorHandler THROWING = new ErrorHandler() {
    @Override
    public void warning(SAXParseException e) {
      // Warnings (such as an unresolved DTD) do not make the document unreadable.
    }

    @Override
    public void error(SAXParseException e) throws SAXException {
      throw e;
    }

    @Override
    public void fatalError(SAXParseException e) throws SAXException {
      throw e;
    }
  };

  static List<Element> children(Element parent, String tag) {
    List<Element> out = new ArrayList<>();
    NodeList nodes = parent.getChildNodes();
    for (int i = 0; i < nodes.getLength(); i++) {
      Node n = nodes.item(i);
      if (n instanceof Element e && e.getTagName().equals(tag)) {
        out.add(e);
      }
    }
    return out;
  }

  static Element child(Element parent, String tag) {
    List<Element> found = children(parent, tag);
    return found.isEmpty() ? null : found.get(0);
  }

  /** The stripped text of the first {@code <tag>} under {@code parent}; {@code null} when there is none. */
  static String text(Element parent, String tag) {
    Element e = child(parent, tag);
    return e == null ? null : e.getTextContent().strip();
  }

  static String requiredText(Element parent, String tag, String where) throws NvidiaSmiFormatException {
    String value = text(parent, tag);
    if (value == null || value.isEmpty()) {
      throw new NvidiaSmiFormatException(where + " has no <" + tag + ">");
    }
    return value;
  }

  /** Enough of a value or line to find it in the output, however long it is. */
  static String excerpt(String text) {
    return text.length() <= 120 ? text : text.substring(0, 120) + "…";
  }
}
