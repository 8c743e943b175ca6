package io.spindle.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.StringReader;
import org.junit.jupiter.api.Test;

class CsvTableTest {

  private static CsvTable csv(String text) throws Exception {
    return CsvTable.read("test.csv", new StringReader(text));
  }

  @Test
  void fieldsAreFoundByHeaderNameWhateverTheColumnOrder() throws Exception {
    CsvTable a = csv("sn,cpu_milli,gpu\nn1,32000,8\n");
    CsvTable b = csv("gpu,sn,cpu_milli\n8,n1,32000\n");
    for (CsvTable t : new CsvTable[] {a, b}) {
      assertThat(t.size()).isEqualTo(1);
      assertThat(t.get(0, "sn")).isEqualTo("n1");
      assertThat(t.getLong(0, "cpu_milli")).isEqualTo(32000);
      assertThat(t.getLong(0, "gpu")).isEqualTo(8);
    }
  }

  @Test
  void quotedFieldsShortRowsAndByteOrderMark() throws Exception {
    CsvTable t = csv("\uFEFFname,spec,model\n\"a,b\",\"V100M16|T4\"\nc,\"say \"\"hi\"\"\",G2\n\n");
    assertThat(t.size()).isEqualTo(2);
    assertThat(t.get(0, "name")).isEqualTo("a,b");
    assertThat(t.get(0, "spec")).isEqualTo("V100M16|T4");
    assertThat(t.get(0, "model")).isEmpty(); // trailing column left out by the writer
    assertThat(t.get(1, "spec")).isEqualTo("say \"hi\"");
    assertThat(t.get(1, "model")).isEqualTo("G2");
  }

  @Test
  void aMissingColumnOrBadNumberIsNamed() throws Exception {
    CsvTable t = csv("sn,gpu\nn1,eight\n");
    assertThatThrownBy(() -> t.get(0, "model")).hasMessageContaining("no column 'model'")
        .hasMessageContaining("[sn, gpu]");
    assertThatThrownBy(() -> t.getLong(0, "gpu")).hasMessageContaining("'gpu' is 'eight'");
    assertThatThrownBy(() -> csv("a,b\n1,2,3\n")).hasMessageContaining("line 2: 3 fields, header has 2");
  }
}
