package io.spindle.core.engine;

import io.spindle.core.model.GpuModel;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.InvalidInputException;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.model.Resources;
import io.spindle.core.placement.ClusterState;

/** What a request of a shape and spec is counted as while it waits, and how far a gang of it may spread. */
final class ShapeCharges {

  private final GpuModelCatalog catalog;
  private final ClusterState cluster;

  ShapeCharges(GpuModelCatalog catalog, ClusterState cluster) {
    this.catalog = catalog;
    this.cluster = cluster;
  }

  /** What one container of the shape is counted as while it waits; a MIG instance at its cheapest model. */
  ResourceVector unitCharge(Resources shape) {
    if (!shape.wantsMig()) {
      return shape.baseVector();
    }
    long cheapest = Long.MAX_VALUE;
    for (GpuModel m : catalog.modelsOffering(shape.migProfile())) {
      if (shape.models().accepts(m.name())) {
        cheapest = Math.min(cheapest, m.profile(shape.migProfile()).orElseThrow().gpuUnits());
      }
    }
    return shape.baseVector().plus(new ResourceVector(0, 0, cheapest * shape.migInstances()));
  }

  /** {@link #unitCharge}, refusing a MIG profile no model offers (saved state from another catalog). */
  ResourceVector checkedUnitCharge(Resources shape) {
    if (shape.wantsMig() && catalog.modelsOffering(shape.migProfile()).isEmpty()) {
      throw new InvalidInputException("migProfile", shape.migProfile(), "no GPU model offers it");
    }
    return unitCharge(shape);
  }

  /** The topology depth a gang of this spec must stay within; -1 for none, and for what is not a gang. */
  int requiredDepth(PlacementSpec spec) {
    return spec.gang() ? cluster.depthOf(spec.required() ? spec.topologyLevel() : null) : -1;
  }
}
