package io.spindle.bench.soak;

import io.spindle.bench.soak.SoakJob.Kind;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

/**
 * The soak workload, seeded: 25% gangs in queue {@code llm}, 30% MIG jobs in {@code inference}, 30% single GPU
 * containers in {@code vision}, 15% single CPU containers in {@code batch}; every queue gets applications of every
 * user. A third of the gangs must stay in one rack ({@code spindle.topology.required=rack}), a third prefer to.
 */
public final class SoakMix {

  public static final List<String> USERS = List.of("alice", "bob", "carol", "dave", "erin");
  public static final String WHOLE_GPU = "yarn.io/gpu";
  public static final String MIG_1G = "nvidia.com/mig-1g.10gb";
  public static final String MIG_3G = "nvidia.com/mig-3g.40gb";

  private SoakMix() {}

  public static List<SoakJob> jobs(SoakOptions o) {
    Random random = new Random(o.seed());
    List<SoakJob> out = new ArrayList<>(o.apps());
    for (int i = 0; i < o.apps(); i++) {
      out.add(job(i, random, o));
    }
    return out;
  }

  private static SoakJob job(int i, Random random, SoakOptions o) {
    double p = random.nextDouble();
    String user = USERS.get(random.nextInt(USERS.size()));
    // Each application holds its containers for 1/4 to all of hold-ms, so releases do not come in lockstep.
    long hold = o.holdMs() / 4 + (long) (random.nextDouble() * (o.holdMs() - o.holdMs() / 4));
    boolean launch = o.launchEvery() > 0 && i % o.launchEvery() == 0;
    if (p < 0.25) {
      int size = 2 + random.nextInt(3);
      int gpus = random.nextBoolean() ? 1 : 2;
      Set<String> tags = new LinkedHashSet<>();
      tags.add("spindle.gang.size=" + size);
      int topology = random.nextInt(3);
      if (topology == 1) {
        tags.add("spindle.topology.required=rack");
      } else if (topology == 2) {
        tags.add("spindle.topology.preferred=rack");
      }
      return new SoakJob(i, Kind.GANG, "llm", user, size, 8192L * gpus, 4 * gpus, WHOLE_GPU, gpus, tags, hold,
          launch);
    }
    if (p < 0.55) {
      String profile = random.nextDouble() < 0.75 ? MIG_1G : MIG_3G;
      return new SoakJob(i, Kind.MIG, "inference", user, 1 + random.nextInt(2), 4096, 2, profile, 1, Set.of(), hold,
          launch);
    }
    if (p < 0.85) {
      int gpus = random.nextDouble() < 0.8 ? 1 : 2;
      return new SoakJob(i, Kind.GPU, "vision", user, 1, 8192L * gpus, 4 * gpus, WHOLE_GPU, gpus, Set.of(), hold,
          launch);
    }
    return new SoakJob(i, Kind.CPU, "batch", user, 1, 2048, 1, null, 0, Set.of(), hold, launch);
  }
}
