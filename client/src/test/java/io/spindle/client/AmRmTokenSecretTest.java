package io.spindle.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.security.PrivilegedExceptionAction;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.security.token.TokenIdentifier;
import org.junit.jupiter.api.Test;

class AmRmTokenSecretTest {

  @Test
  void readsThePasswordOfTheCurrentUsersAmRmToken() throws Exception {
    UserGroupInformation am = UserGroupInformation.createRemoteUser("am-user");
    am.addToken(new Token<TokenIdentifier>(new byte[] {1}, new byte[] {9, 9}, new Text("HDFS_DELEGATION_TOKEN"),
        new Text("nn:8020")));
    am.addToken(new Token<TokenIdentifier>(new byte[] {2}, new byte[] {4, 2}, new Text(AmRmTokenSecret.KIND),
        new Text("rm:8030")));

    byte[] secret = am.doAs((PrivilegedExceptionAction<byte[]>) () -> AmRmTokenSecret.currentUser().get());

    assertThat(secret).containsExactly(4, 2);
    assertThatThrownBy(() -> AmRmTokenSecret.of(UserGroupInformation.createRemoteUser("not-an-am")))
        .hasMessageContaining("holds no YARN_AM_RM_TOKEN");
  }
}
