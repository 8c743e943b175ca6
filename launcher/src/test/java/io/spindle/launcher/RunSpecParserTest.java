package io.spindle.launcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RunSpecParserTest {

  @Test
  void theIssuesExampleBecomesOneGangWithTopologyAndData() {
    RunSpec spec = RunSpecParser.parse("--queue", "llm", "--workers", "4", "--gpus-per-worker", "8",
        "--topology", "required=rack", "--checkpoint-dir", "hdfs:///ckpt/run1", "--files", "data.tar.gz",
        "--max-runtime", "2h", "--env", "NCCL_DEBUG=INFO", "--env=A=b=c", "--",
        "torchrun", "--nproc-per-node=8", "train.py", "--epochs", "3");
    assertThat(spec.queue()).isEqualTo("llm");
    assertThat(spec.workers()).isEqualTo(4);
    assertThat(spec.gpusPerWorker()).isEqualTo(8);
    assertThat(spec.files()).containsExactly("data.tar.gz");
    assertThat(spec.env()).isEqualTo(Map.of("NCCL_DEBUG", "INFO", "A", "b=c"));
    assertThat(spec.maxRuntime()).isEqualTo(Duration.ofHours(2));
    // What follows -- is the workers' command, options of its own included.
    assertThat(spec.command()).containsExactly("torchrun", "--nproc-per-node=8", "train.py", "--epochs", "3");
    assertThat(spec.applicationTags()).containsExactly("spindle.gang.size=4", "spindle.topology.required=rack",
        "spindle.max-runtime=7200s");
  }

  @Test
  void badCommandLinesSayWhichOptionAndWhy() {
    assertThatThrownBy(() -> RunSpecParser.parse("--workers", "0", "--", "true"))
        .isInstanceOf(UsageException.class).hasMessage("--workers must be between 1 and 100000, not 0");
    assertThatThrownBy(() -> RunSpecParser.parse("--workers", "2"))
        .hasMessageStartingWith("no command");
    assertThatThrownBy(() -> RunSpecParser.parse("--", "true")).hasMessageStartingWith("--workers is required");
    assertThatThrownBy(() -> RunSpecParser.parse("--workers", "two", "--", "true"))
        .hasMessage("--workers takes a whole number, not 'two'");
    assertThatThrownBy(() -> RunSpecParser.parse("--workers", "2", "--topology", "rack", "--", "true"))
        .hasMessageContaining("required=LEVEL or preferred=LEVEL");
    assertThatThrownBy(() -> RunSpecParser.parse("--workers", "2", "--max-runtime", "soon", "--", "true"))
        .hasMessageContaining("90s, 30m, 2h or 1d");
    assertThatThrownBy(() -> RunSpecParser.parse("--workers", "2", "--gpu-milli", "250", "--gpus-per-worker", "1",
        "--", "true")).hasMessageContaining("give one");
    assertThatThrownBy(() -> RunSpecParser.parse("--workers", "2", "--mig-profile", "3g.40gb", "--gpus-per-worker",
        "1", "--", "true")).hasMessageContaining("give one");
    assertThatThrownBy(() -> RunSpecParser.parse("--workers", "2", "--mig-profile", "half", "--", "true"))
        .hasMessage("--mig-profile takes a MIG profile such as 1g.10gb or 3g.40gb, not 'half'");
    assertThatThrownBy(() -> RunSpecParser.parse("--workers", "2", "--env", "1X=2", "--", "true"))
        .hasMessageContaining("--env takes KEY=VALUE");
    assertThatThrownBy(() -> RunSpecParser.parse("--workers", "2", "--frobnicate", "--", "true"))
        .hasMessageStartingWith("unknown option --frobnicate");
    assertThatThrownBy(() -> RunSpecParser.parse("--workers", "--", "true")).hasMessage("--workers needs a value");
  }

  @Test
  void aShareOfAGpuAndNoTopologyMakeNoTopologyTag() {
    RunSpec spec = RunSpecParser.parse("--workers", "3", "--gpu-milli", "250", "--", "python3", "infer.py");
    assertThat(spec.gpuMilli()).isEqualTo(250);
    assertThat(spec.applicationTags()).containsExactly("spindle.gang.size=3");
    assertThat(spec.toString()).isEqualTo(
        "3 workers x (250 milli-GPU, 4096 MB, 1 vcores) in queue default: python3 infer.py");
    assertThat(List.of(RunSpecParser.USAGE.split("\n"))).anyMatch(l -> l.contains("--hang-timeout"));
  }

  @Test
  void aMigInstancePerWorker() {
    RunSpec spec = RunSpecParser.parse("--workers", "7", "--mig-profile", "1g.10gb", "--", "python3", "tune.py");
    assertThat(spec.migProfile()).isEqualTo("1g.10gb");
    assertThat(spec.toString()).startsWith("7 workers x (MIG 1g.10gb, 4096 MB, 1 vcores)");
  }

  @Test
  void anElasticJobTagsItsMinimumAndStep() {
    RunSpec spec = RunSpecParser.parse("--workers", "8", "--min-workers", "2", "--worker-step", "2",
        "--checkpoint-dir", "/ckpt", "--", "torchrun", "train.py");
    assertThat(spec.elastic()).isTrue();
    assertThat(spec.applicationTags()).containsExactly("spindle.gang.size=8", "spindle.gang.min=2",
        "spindle.gang.step=2");
    assertThat(spec.toString()).startsWith("2 to 8 workers in steps of 2 x (0 GPUs");
    RunSpec rigid = RunSpecParser.parse("--workers", "4", "--min-workers", "4", "--", "true");
    assertThat(rigid.elastic()).isFalse();
    assertThat(rigid.applicationTags()).containsExactly("spindle.gang.size=4");
    assertThat(RunSpecParser.parse("--workers", "4", "--min-workers", "1", "--checkpoint-dir", "/c", "--", "true")
        .applicationTags()).containsExactly("spindle.gang.size=4", "spindle.gang.min=1");
  }

  @Test
  void badElasticSizesSayWhichOptionAndValue() {
    assertThatThrownBy(() -> RunSpecParser.parse("--workers", "4", "--min-workers", "5", "--checkpoint-dir", "/c",
        "--", "true")).isInstanceOf(UsageException.class)
        .hasMessageStartingWith("--min-workers 5 is more than --workers 4");
    assertThatThrownBy(() -> RunSpecParser.parse("--workers", "4", "--min-workers", "0", "--", "true"))
        .hasMessage("--min-workers must be between 1 and 100000, not 0");
    assertThatThrownBy(() -> RunSpecParser.parse("--workers", "4", "--min-workers", "-1", "--", "true"))
        .hasMessage("--min-workers must be between 1 and 100000, not -1");
    assertThatThrownBy(() -> RunSpecParser.parse("--workers", "5", "--min-workers", "2", "--worker-step", "2",
        "--checkpoint-dir", "/c", "--", "true"))
        .hasMessage("--worker-step 2 does not divide the 3 worker(s) between --min-workers 2 and --workers 5");
    assertThatThrownBy(() -> RunSpecParser.parse("--workers", "4", "--worker-step", "2", "--", "true"))
        .hasMessageStartingWith("--worker-step 2 needs --min-workers");
    assertThatThrownBy(() -> RunSpecParser.parse("--workers", "4", "--min-workers", "2", "--", "true"))
        .hasMessageStartingWith("--min-workers 2 needs --checkpoint-dir");
  }
}
