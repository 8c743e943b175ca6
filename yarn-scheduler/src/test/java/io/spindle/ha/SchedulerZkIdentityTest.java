package io.spindle.ha;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spindle.client.CheckpointCredentials;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.hadoop.conf.Configuration;
import org.apache.zookeeper.data.Id;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SchedulerZkIdentityTest {

  @Test
  void aConfiguredDigestIsTheSchedulersIdentity() throws Exception {
    Configuration conf = new Configuration(false);
    conf.set(SchedulerZkIdentity.ZK_AUTH, "digest:spindle-rm:s3cret");
    SchedulerZkIdentity id = SchedulerZkIdentity.from(conf);

    assertThat(id.aclId()).isEqualTo(new Id("digest", CheckpointCredentials.digest("spindle-rm:s3cret")));
    assertThat(id.auth()).singleElement().satisfies(a -> {
      assertThat(a.getScheme()).isEqualTo("digest");
      assertThat(new String(a.getAuth(), StandardCharsets.UTF_8)).isEqualTo("spindle-rm:s3cret");
    });
    assertThat(id.generated()).isFalse();
    assertThat(id.toString()).doesNotContain("s3cret");
  }

  @Test
  void theResourceManagersOwnZooKeeperAuthIsTheFallbackAndFilesAreRead(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("zk-auth");
    Files.writeString(file, "digest:rm:from-file");
    Configuration conf = new Configuration(false);
    conf.set("hadoop.zk.auth", "@" + file);
    assertThat(SchedulerZkIdentity.from(conf).aclId().getId()).isEqualTo(CheckpointCredentials.digest("rm:from-file"));

    conf.set(SchedulerZkIdentity.ZK_AUTH, "sasl:rm/host@REALM");
    SchedulerZkIdentity sasl = SchedulerZkIdentity.from(conf);
    assertThat(sasl.aclId()).isEqualTo(new Id("sasl", "rm/host@REALM"));
    assertThat(sasl.auth()).isEmpty();
  }

  @Test
  void withNothingConfiguredAPasswordIsMadeUpPerProcess() throws Exception {
    SchedulerZkIdentity a = SchedulerZkIdentity.from(new Configuration(false));
    SchedulerZkIdentity b = SchedulerZkIdentity.from(new Configuration(false));
    assertThat(a.generated()).isTrue();
    assertThat(a.aclId().getId()).startsWith("spindle-rm:").isNotEqualTo(b.aclId().getId());
  }

  @Test
  void anIdentityOfAnotherSchemeIsRefused() {
    Configuration conf = new Configuration(false);
    conf.set(SchedulerZkIdentity.ZK_AUTH, "ip:10.0.0.1");
    assertThatThrownBy(() -> SchedulerZkIdentity.from(conf)).hasMessageContaining(SchedulerZkIdentity.ZK_AUTH);
  }
}
