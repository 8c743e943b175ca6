package io.spindle.core.engine;

import io.spindle.core.model.ResourceVector;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;

/**
 * CapacityScheduler's limits on one user of a leaf, in each resource the leaf is guaranteed (resources it has no
 * guarantee of are bounded by its maximum alone):
 * <ul>
 *   <li>{@code user-limit-factor}: at most that many times the leaf's guarantee ({@code -1}: no bound);
 *   <li>{@code minimum-user-limit-percent} below 100: with N users asking in the leaf, at most the larger of 1/N and
 *       that percent of the leaf's current capacity — its guarantee, or what it holds and is about to be given when
 *       that is more (CapacityScheduler's {@code UsersManager}), so users who ask share a busy queue evenly.
 * </ul>
 * One computation for placement and for preemption planning, which must agree on what a user may get.
 */
final class UserLimits {

  private UserLimits() {}

  /** Why {@code app}'s user may not be charged {@code charge} more in {@code partition} now; empty if they may. */
  static Optional<Refusal> exceeded(AppState app, String partition, ResourceVector charge) {
    QueueState leaf = app.leaf;
    ResourceVector guarantee = leaf.share(partition).guarantee();
    ResourceVector after = leaf.userUsage(partition).getOrDefault(app.user, ResourceVector.ZERO).plus(charge);
    double factor = leaf.config.userLimitFactor();
    if (factor >= 0) {
      for (int i = 0; i < ResourceVector.DIMENSIONS; i++) {
        long g = guarantee.get(i);
        if (g > 0 && after.get(i) > byFactor(g, factor)) {
          return Optional.of(new Refusal.UserLimit(app.user, leaf.path(), factor, guarantee, i));
        }
      }
    }
    double percent = leaf.config.minimumUserLimitPercent();
    if (percent < 100) {
      int users = activeUsers(leaf, app.user);
      ResourceVector share = share(leaf, partition, charge, users, percent);
      for (int i = 0; i < ResourceVector.DIMENSIONS; i++) {
        if (guarantee.get(i) > 0 && after.get(i) > share.get(i)) {
          return Optional.of(new Refusal.UserShare(app.user, leaf.path(), percent, users, share, i));
        }
      }
    }
    return Optional.empty();
  }

  /** The most {@code user} may hold in the leaf's {@code partition} now, per resource; {@code null}: no bound. */
  static ResourceVector limit(QueueState leaf, String partition, String user) {
    double factor = leaf.config.userLimitFactor();
    double percent = leaf.config.minimumUserLimitPercent();
    if (factor < 0 && percent >= 100) {
      return null;
    }
    ResourceVector guarantee = leaf.share(partition).guarantee();
    ResourceVector share = percent < 100
        ? share(leaf, partition, ResourceVector.ZERO, activeUsers(leaf, user), percent) : null;
    long[] limit = new long[ResourceVector.DIMENSIONS];
    for (int i = 0; i < limit.length; i++) {
      long g = guarantee.get(i);
      limit[i] = Long.MAX_VALUE;
      if (g > 0 && factor >= 0) {
        limit[i] = byFactor(g, factor);
      }
      if (g > 0 && share != null) {
        limit[i] = Math.min(limit[i], share.get(i));
      }
    }
    return new ResourceVector(limit[0], limit[1], limit[2]);
  }

  private static long byFactor(long guarantee, double factor) {
    return (long) Math.floor(guarantee * factor + 1e-9);
  }

  /** Users with work waiting in the leaf, {@code user} counted whether or not it waits. */
  private static int activeUsers(QueueState leaf, String user) {
    Set<String> users = new HashSet<>();
    users.add(user);
    for (AppState a : leaf.waitingApps) {
      users.add(a.user);
    }
    return users.size();
  }

  private static ResourceVector share(QueueState leaf, String partition, ResourceVector charge, int users,
      double percent) {
    ResourceVector guarantee = leaf.share(partition).guarantee();
    ResourceVector used = leaf.usage(partition).plus(charge);
    long[] out = new long[ResourceVector.DIMENSIONS];
    for (int i = 0; i < out.length; i++) {
      long current = Math.max(guarantee.get(i), used.get(i));
      out[i] = Math.max(ceilDiv(current, users), (long) Math.ceil(current * percent / 100 - 1e-9));
    }
    return new ResourceVector(out[0], out[1], out[2]);
  }

  private static long ceilDiv(long a, int b) {
    return (a + b - 1) / b;
  }
}
