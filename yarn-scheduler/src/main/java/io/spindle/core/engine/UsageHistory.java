package io.spindle.core.engine;

import io.spindle.core.model.ResourceVector;
import io.spindle.core.queue.FairShareCalculator;
import io.spindle.core.queue.UsageWeighting;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * Decayed usage per queue and per user ({@code yarn.scheduler.spindle.usage.*}): what weighs the sharing of idle
 * capacity ({@link UsageWeighting}) and what the views show.
 *
 * <p>A queue accrues what it holds <em>above its guarantee</em> in the default partition (what it borrows): using a
 * guarantee is never held against a queue. A user accrues everything it holds in its leaf. Each meter decays
 * exponentially with the half-life {@code T}: with a constant rate {@code r} from {@code t0},
 * {@code H(t) = H(t0)·d + r·T/ln2·(1 - d)}, {@code d = 2^(-(t - t0)/T)}, so it is exact for any cycle spacing and is
 * settled only when a rate changes (once per cycle the engine compares each queue's and user's rate, O(queues +
 * users), nothing per application). Reading it at any instant is a function of the settled value, that instant and
 * the rate, so a replay, and a standby given the saved meters, compute the very same doubles.
 *
 * <p>The rate in force is what was held at the end of the last cycle, counted from the instant of that cycle: a
 * burst that starts a hundred containers in one cycle is charged from that cycle on, and — what matters more — the
 * placement walk compares each queue's usage <em>at once</em> (a container counts the moment it starts) with the
 * fair share its history allows, so a burst cannot take more idle capacity than that share while others want it
 * (Kueue's entry-penalty problem cannot arise: history sets the share, current usage fills it).
 */
final class UsageHistory {

  /** A meter's saved form; also {@link DurableState.UsageState}'s content. */
  static final class Meter {
    final double[] settled = new double[ResourceVector.DIMENSIONS];
    ResourceVector rate = ResourceVector.ZERO;
    long asOfMillis;

    Meter(long asOfMillis) {
      this.asOfMillis = asOfMillis;
    }
  }

  /** A queue (user {@code ""}) or a user of a leaf. */
  record Key(String queue, String user) implements Comparable<Key> {
    @Override
    public int compareTo(Key o) {
      int c = queue.compareTo(o.queue);
      return c != 0 ? c : user.compareTo(o.user);
    }
  }

  private final UsageSettings settings;
  private final Map<Key, Meter> meters = new TreeMap<>();
  private long changes;

  UsageHistory(UsageSettings settings) {
    this.settings = settings;
  }

  UsageSettings settings() {
    return settings;
  }

  /** Moves whenever a meter is settled, made or forgotten: the saved state changed. */
  long changes() {
    return changes;
  }

  /**
   * After a cycle's placement: each queue's borrowed usage and each user's usage from {@code now} on. A meter whose
   * rate is unchanged is left alone (its saved form stays the same); one with nothing held for longer than the window
   * is forgotten.
   */
  void settle(long now, java.util.Collection<QueueState> queues,
      Supplier<Map<String, FairShareCalculator.Limits>> limits) {
    if (!settings.enabled()) {
      return;
    }
    // Guarantees resolved afresh rather than taken from the cycle's shares: a cycle with nothing waiting computes no
    // shares, and a new leader has computed none before its first placement.
    Map<String, FairShareCalculator.Limits> resolved = limits.get();
    Map<Key, ResourceVector> rates = new HashMap<>();
    for (QueueState q : queues) {
      FairShareCalculator.Limits l = resolved.get(q.path());
      ResourceVector guarantee = l == null ? ResourceVector.ZERO : l.guarantee();
      rates.put(new Key(q.path(), ""), borrowed(q.usage, guarantee));
      if (q.isLeaf()) {
        q.userUsage.forEach((user, held) -> rates.put(new Key(q.path(), user), held));
      }
    }
    rates.forEach((key, rate) -> {
      Meter m = meters.get(key);
      if (m == null && !rate.equals(ResourceVector.ZERO)) {
        m = new Meter(now);
        meters.put(key, m);
        changes++;
      }
      if (m != null && !m.rate.equals(rate)) {
        fold(m, now);
        m.rate = rate;
        changes++;
      }
    });
    List<Key> gone = new ArrayList<>();
    meters.forEach((key, m) -> {
      if (!rates.containsKey(key) && !m.rate.equals(ResourceVector.ZERO)) {
        fold(m, now); // its queue or user went away: it holds nothing from now on
        m.rate = ResourceVector.ZERO;
        changes++;
      }
      if (m.rate.equals(ResourceVector.ZERO) && now - m.asOfMillis > settings.windowMillis()) {
        gone.add(key);
      }
    });
    gone.forEach(meters::remove);
    changes += gone.size();
  }

  /** Decayed usage of a meter at {@code now}: {memory MB-seconds, vcore-seconds, GPU-unit-seconds}. */
  double[] at(Key key, long now) {
    Meter m = meters.get(key);
    return m == null ? new double[ResourceVector.DIMENSIONS] : valueOf(m, now);
  }

  /** A queue's decayed borrowed usage at {@code now}. */
  double[] queue(String path, long now) {
    return at(new Key(path, ""), now);
  }

  /** Each user's decayed usage in leaf {@code path}, by user name. */
  Map<String, double[]> users(String path, long now) {
    Map<String, double[]> out = new TreeMap<>();
    meters.forEach((key, m) -> {
      if (key.queue().equals(path) && !key.user().isEmpty()) {
        out.put(key.user(), at(key, now));
      }
    });
    return out;
  }

  /** What the fair-share calculation weighs idle capacity by at {@code now}. */
  UsageWeighting weighting(long now) {
    if (!settings.enabled() || settings.strength() <= 0) {
      return UsageWeighting.NONE;
    }
    Map<String, double[]> byQueue = new HashMap<>();
    meters.forEach((key, m) -> {
      if (key.user().isEmpty()) {
        byQueue.put(key.queue(), at(key, now));
      }
    });
    return new UsageWeighting(byQueue, settings.strength());
  }

  /** Every meter, in key order, for the durable state. */
  List<DurableState.UsageState> export() {
    List<DurableState.UsageState> out = new ArrayList<>();
    meters.forEach((key, m) -> out.add(new DurableState.UsageState(key.queue(), key.user(), m.settled[0],
        m.settled[1], m.settled[2], m.rate, m.asOfMillis)));
    return out;
  }

  /** Takes the saved meters over from an earlier leader: they go on from their instant at their saved rate. */
  void restore(List<DurableState.UsageState> saved) {
    if (!settings.enabled()) {
      return;
    }
    meters.clear();
    for (DurableState.UsageState u : saved) {
      Meter m = new Meter(u.asOfMillis());
      m.settled[0] = u.memoryMbSeconds();
      m.settled[1] = u.vcoreSeconds();
      m.settled[2] = u.gpuUnitSeconds();
      m.rate = u.rate();
      meters.put(new Key(u.queue(), u.user()), m);
    }
    changes++;
  }

  private void fold(Meter m, long now) {
    double[] v = valueOf(m, now);
    System.arraycopy(v, 0, m.settled, 0, v.length);
    m.asOfMillis = Math.max(m.asOfMillis, now);
  }

  private double[] valueOf(Meter m, long now) {
    double[] out = new double[ResourceVector.DIMENSIONS];
    if (m.rate.equals(ResourceVector.ZERO) && now - m.asOfMillis > settings.windowMillis()) {
      return out;
    }
    double dt = Math.max(0, now - m.asOfMillis) / 1000.0;
    double halfLife = settings.halfLifeMillis() / 1000.0;
    double d = Math.pow(2, -dt / halfLife);
    double accrual = halfLife / Math.log(2) * (1 - d);
    for (int k = 0; k < out.length; k++) {
      out[k] = m.settled[k] * d + m.rate.get(k) * accrual;
    }
    return out;
  }

  private static ResourceVector borrowed(ResourceVector usage, ResourceVector guarantee) {
    return new ResourceVector(Math.max(0, usage.memoryMb() - guarantee.memoryMb()),
        Math.max(0, usage.vcores() - guarantee.vcores()), Math.max(0, usage.gpuUnits() - guarantee.gpuUnits()));
  }
}
