package io.spindle.bench;

import io.spindle.core.model.GpuModel;
import io.spindle.core.model.MigLayout;
import io.spindle.core.model.MigPlacement;
import io.spindle.core.model.MigProfile;
import io.spindle.core.model.Resources;
import java.util.Arrays;

/** Node capacity and use as the harness mirrors it from the decisions (no departures: only ever taken). */
final class OpenbNodeMirror {

  final OpenbPackingBenchmark.OpenbNode node;
  long freeCpu;
  long freeMem;
  final MigLayout[] layouts;
  final int[] heldMask;
  /** SHARE mode: free thousandths of each GPU. */
  final int[] freeMilli;
  int freeWhole;

  OpenbNodeMirror(OpenbPackingBenchmark.OpenbNode node, GpuModel model, OpenbPackingBenchmark.Mode mode) {
    this.node = node;
    this.freeCpu = node.cpuMilli();
    this.freeMem = node.memoryMib();
    this.layouts = new MigLayout[node.gpus()];
    this.heldMask = new int[node.gpus()];
    this.freeMilli = new int[node.gpus()];
    Arrays.fill(freeMilli, 1000);
    if (mode == OpenbPackingBenchmark.Mode.MIG && model != null) {
      Arrays.fill(layouts, MigLayout.empty(model));
    }
    this.freeWhole = mode == OpenbPackingBenchmark.Mode.MIG ? 0 : node.gpus();
  }

  /**
   * Whether this node could hold the MIG request if its GPUs were re-partitioned for it without touching an
   * instance in use (what the engine's planner may do): on each GPU, as many instances of the profile as fit
   * beside the instances held there.
   */
  boolean couldHold(Resources shape, GpuModel model) {
    if (freeCpu < shape.vcores() || freeMem < shape.memoryMb()) {
      return false;
    }
    if (!shape.wantsGpu()) {
      return true;
    }
    if (model == null) {
      return false;
    }
    if (!shape.models().accepts(model.name())) {
      return false;
    }
    if (shape.wantsShare()) {
      for (int free : freeMilli) {
        if (free >= shape.gpuMilli()) {
          return true;
        }
      }
      return false;
    }
    if (!shape.wantsMig()) {
      return freeWhole >= shape.gpus();
    }
    MigProfile p = model.profile(shape.migProfile()).orElseThrow();
    int room = 0;
    for (int g = 0; g < layouts.length; g++) {
      MigLayout held = MigLayout.empty(model);
      for (MigPlacement inst : layouts[g].placements()) {
        if ((heldMask[g] & inst.sliceMask()) != 0) {
          held = held.with(inst);
        }
      }
      room += held.placeable(p);
    }
    return room >= shape.migInstances();
  }
}
