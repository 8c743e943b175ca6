package io.spindle.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ShellWordsTest {

  @TempDir
  Path dir;

  /**
   * Runs the quoted command the way a NodeManager's launch_container.sh does ({@code exec /bin/bash -c "..."}) and
   * reads back the words the program received, one per line.
   */
  private List<String> asReceived(List<String> words) throws Exception {
    Path script = dir.resolve("launch_container.sh");
    Files.writeString(script, "#!/bin/bash\nexport RANK=7\nexec /bin/bash -c \"printf '%s\\n' "
        + ShellWords.join(words) + "\"\n");
    Process p = new ProcessBuilder("bash", script.toString()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor()).as(out).isZero();
    return List.of(out.split("\n", -1)).subList(0, words.size());
  }

  @Test
  void everyWordArrivesAsGivenThroughTheLaunchScriptsTwoShells() throws Exception {
    List<String> words = List.of("plain", "two words", "it's", "\"quoted\"", "$RANK", "${RANK}x", "`date`",
        "back\\slash", "a;b|c&d", "*", "", "tab\there", "%and@=:,+");
    assertThat(asReceived(words)).containsExactlyElementsOf(words);
  }

  @Test
  void aScriptGivenToBashMinusCSeesItsOwnVariablesAtRunTime() throws Exception {
    Path script = dir.resolve("launch_container.sh");
    Files.writeString(script, "#!/bin/bash\nexport RANK=3\nexec /bin/bash -c \""
        + ShellWords.join(List.of("bash", "-c", "if [ \"$RANK\" = 3 ]; then echo \"rank $RANK\"; fi")) + "\"\n");
    Process p = new ProcessBuilder("bash", script.toString()).redirectErrorStream(true).start();
    assertThat(new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("rank 3\n");
  }
}
