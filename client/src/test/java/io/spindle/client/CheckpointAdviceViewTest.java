package io.spindle.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class CheckpointAdviceViewTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void theStatusApisAdviceReadsWithItsFiguresAndFieldsItDoesNotKnowAreIgnored() throws Exception {
    CheckpointAdviceView a = CheckpointAdviceView.fromJson(JSON.readTree("""
        {"intervalSeconds": 5400, "mtbfHours": 63.4, "failuresPerGpuHour": 1.97e-5, "gpus": 800,
         "writeSeconds": 45, "writeReported": true, "basis": "Daly's optimum", "later": 1}"""));
    assertThat(a).isEqualTo(new CheckpointAdviceView(5400, 63.4, 1.97e-5, 800, 45, "Daly's optimum"));
    assertThat(a.interval()).isEqualTo(Duration.ofMinutes(90));
  }

  @Test
  void adviceWithoutItsFiguresIsRefusedSayingWhich() {
    assertThatThrownBy(() -> CheckpointAdviceView.fromJson(JSON.readTree("{\"error\": \"no such application\"}")))
        .hasMessageContaining("intervalSeconds");
    assertThatThrownBy(() -> CheckpointAdviceView.fromJson(JSON.readTree("""
        {"intervalSeconds": 0, "mtbfHours": 1, "failuresPerGpuHour": 1, "gpus": 1, "writeSeconds": 1}""")))
        .hasMessageContaining("invalid checkpoint advice");
  }
}
