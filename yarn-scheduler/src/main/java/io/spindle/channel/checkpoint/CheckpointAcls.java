package io.spindle.channel.checkpoint;

import io.spindle.client.CheckpointCredentials;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.zookeeper.ZooDefs.Ids;
import org.apache.zookeeper.ZooDefs.Perms;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;

/**
 * The ACLs of the checkpoint znodes. The ResourceManager may do everything everywhere; everyone may read the
 * directories and the notices (which name only containers YARN shows anyway); only the owning application may
 * write its ack slots and its report — and may not create, delete or re-ACL anything.
 *
 * <p>An owner slot grants the application's current identity and, during a roll of the AMRMToken master key, the one
 * before it: the ResourceManager re-keys when it sees the new token, possibly before the ApplicationMaster has
 * received it, and the AM must not be locked out in between.
 */
record CheckpointAcls(Id scheduler) {

  private static final int OWNER_PERMS = Perms.READ | Perms.WRITE;

  /** {@code apps/}, {@code apps/<appId>}, {@code notices/}, {@code acks/} and each notice. */
  List<ACL> readable() {
    return List.of(new ACL(Perms.ALL, scheduler), new ACL(Perms.READ, Ids.ANYONE_ID_UNSAFE));
  }

  /** An ack slot or the report: the scheduler, then the application's current and (if any) previous identity. */
  List<ACL> ownerSlot(Id current, Optional<Id> previous) {
    List<ACL> acl = new ArrayList<>(List.of(new ACL(Perms.ALL, scheduler), new ACL(OWNER_PERMS, current)));
    previous.filter(p -> !p.equals(current)).ifPresent(p -> acl.add(new ACL(OWNER_PERMS, p)));
    return List.copyOf(acl);
  }

  /** The newest identity of {@code appId} in an owner slot's ACL (the first listed, as {@link #ownerSlot} writes). */
  static Optional<Id> newestOwner(List<ACL> acl, String appId) {
    return acl.stream().map(ACL::getId).filter(id -> CheckpointCredentials.isIdentityOf(id, appId)).findFirst();
  }

  /**
   * Why an ACL does not protect {@code appId}'s slot (anyone but the scheduler and the application may write it);
   * empty when it does.
   */
  Optional<String> whyNotOwnerOnly(List<ACL> acl, String appId) {
    List<String> strangers = acl.stream()
        .filter(a -> (a.getPerms() & (Perms.WRITE | Perms.ADMIN)) != 0)
        .map(ACL::getId)
        .filter(id -> !id.equals(scheduler) && !CheckpointCredentials.isIdentityOf(id, appId))
        .map(id -> id.getScheme() + ":" + id.getId().replaceAll(":.*", ""))
        .toList();
    return strangers.isEmpty() ? Optional.empty()
        : Optional.of("the slot is writable by " + strangers + ", not only by " + appId + " and the scheduler");
  }
}
