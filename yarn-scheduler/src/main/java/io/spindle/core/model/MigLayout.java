package io.spindle.core.model;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The MIG instances on one GPU. Immutable; every instance is checked for a legal start, overlapping memory
 * slices, the profile's instance limit, the one-media-extension rule and the compute-slice budget, so an illegal
 * layout cannot be built.
 */
public final class MigLayout {

  private final GpuModel model;
  private final List<MigPlacement> placements;
  private final int usedMask;
  private final int usedCompute;

  private MigLayout(GpuModel model, List<MigPlacement> placements, int usedMask, int usedCompute) {
    this.model = model;
    this.placements = placements;
    this.usedMask = usedMask;
    this.usedCompute = usedCompute;
  }

  public static MigLayout empty(GpuModel model) {
    if (!model.migCapable()) {
      throw new InvalidInputException("gpu.model", model.name(), "GPU model does not support MIG");
    }
    return new MigLayout(model, List.of(), 0, 0);
  }

  /** Builds a layout from placements, rejecting the first illegal one with a reason. */
  public static MigLayout of(GpuModel model, List<MigPlacement> placements) {
    MigLayout layout = empty(model);
    for (MigPlacement p : placements) {
      layout = layout.with(p);
    }
    return layout;
  }

  public GpuModel model() {
    return model;
  }

  public List<MigPlacement> placements() {
    return placements;
  }

  public int usedSliceMask() {
    return usedMask;
  }

  public int freeMemorySlices() {
    return model.memorySlices() - Integer.bitCount(usedMask);
  }

  public int usedComputeSlices() {
    return usedCompute;
  }

  public boolean isEmpty() {
    return placements.isEmpty();
  }

  /** Why {@code p} cannot be added, or {@code null} when it can. */
  public String whyNot(MigPlacement p) {
    MigProfile profile = p.profile();
    MigProfile own = ownProfile(profile);
    if (own == null) {
      return "profile " + profile.name() + " does not belong to " + model.name();
    }
    if (!profile.isLegalStart(p.start())) {
      return profile.name() + " may start only at memory slice " + profile.legalStarts() + ", not " + p.start();
    }
    if ((usedMask & p.sliceMask()) != 0) {
      return profile.name() + "@" + p.start() + " overlaps memory slices already used by " + placements;
    }
    if (usedCompute + profile.computeSlices() > model.computeSlices()) {
      return profile.name() + " needs " + profile.computeSlices() + " compute slices; only "
          + (model.computeSlices() - usedCompute) + " of " + model.computeSlices() + " are free";
    }
    int same = 0;
    boolean media = false;
    for (MigPlacement q : placements) {
      if (q.profile() == own || q.profile().name().equals(own.name())) {
        same++;
      }
      media |= q.profile().mediaExtension();
    }
    if (same >= profile.maxInstances()) {
      return "at most " + profile.maxInstances() + " instance(s) of " + profile.name() + " per GPU";
    }
    if (profile.mediaExtension() && media) {
      return "at most one media-extension (+me) instance per GPU";
    }
    return null;
  }

  /** The model's own profile equal to {@code profile}, or null; by identity first, since it nearly always is. */
  private MigProfile ownProfile(MigProfile profile) {
    for (MigProfile own : model.profiles()) {
      if (own == profile) {
        return own;
      }
    }
    for (MigProfile own : model.profiles()) {
      if (own.name().equals(profile.name())) {
        return own.equals(profile) ? own : null;
      }
    }
    return null;
  }

  public boolean canAdd(MigPlacement p) {
    return whyNot(p) == null;
  }

  public MigLayout with(MigPlacement p) {
    String why = whyNot(p);
    if (why != null) {
      throw new InvalidInputException("mig.placement", p, why);
    }
    List<MigPlacement> next = new ArrayList<>(placements);
    next.add(p);
    next.sort(Comparator.comparingInt(MigPlacement::start));
    return new MigLayout(model, List.copyOf(next), usedMask | p.sliceMask(),
        usedCompute + p.profile().computeSlices());
  }

  public MigLayout without(MigPlacement p) {
    if (!placements.contains(p)) {
      throw new InvalidInputException("mig.placement", p, "not in layout " + placements);
    }
    List<MigPlacement> next = new ArrayList<>(placements);
    next.remove(p);
    return new MigLayout(model, List.copyOf(next), usedMask & ~p.sliceMask(),
        usedCompute - p.profile().computeSlices());
  }

  /** The first legal start at which {@code profile} fits now, or -1. */
  public int firstFreeStart(MigProfile profile) {
    for (int start : profile.legalStarts()) {
      if (canAdd(new MigPlacement(profile, start))) {
        return start;
      }
    }
    return -1;
  }

  /**
   * How many more instances of {@code profile} could be added, placing greedily at the lowest legal starts (optimal
   * for one profile: its placements are aligned runs of equal length). Cached, since layouts are immutable and
   * packing asks the same question many times.
   */
  public int placeable(MigProfile profile) {
    int i = profileIndex(profile);
    if (i < 0) {
      return 0;
    }
    int[] room = this.room;
    if (room == null) {
      room = new int[model.profiles().size()];
      java.util.Arrays.fill(room, -1);
      this.room = room;
    }
    if (room[i] < 0) {
      MigLayout layout = this;
      int n = 0;
      int start;
      while ((start = layout.firstFreeStart(profile)) >= 0) {
        layout = layout.with(new MigPlacement(profile, start));
        n++;
      }
      room[i] = n;
    }
    return room[i];
  }

  private int profileIndex(MigProfile profile) {
    List<MigProfile> profiles = model.profiles();
    for (int i = 0; i < profiles.size(); i++) {
      if (profiles.get(i) == profile) {
        return i;
      }
    }
    return profiles.indexOf(profile);
  }

  /** Per profile (catalog order) how many more fit; -1 until asked. Immutable layout, so a benign cache. */
  private int[] room;
  /** 0 until computed; layouts are hashed in every planning pass, and the placements' records hash deeply. */
  private int hash;

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    return o instanceof MigLayout other && usedMask == other.usedMask && model.sameModel(other.model)
        && placements.equals(other.placements);
  }

  @Override
  public int hashCode() {
    int h = hash;
    if (h == 0) {
      h = model.name().hashCode() * 31 + placements.hashCode();
      hash = h == 0 ? 1 : h;
    }
    return h;
  }

  @Override
  public String toString() {
    return model.name() + placements;
  }
}
