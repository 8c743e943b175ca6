package io.spindle.journal;

import io.spindle.core.engine.Elasticity;
import io.spindle.core.engine.PlacementSpec;
import io.spindle.core.model.Gpu;
import io.spindle.core.model.GpuIsolation;
import io.spindle.core.model.GpuModelSet;
import io.spindle.core.model.GpuSharing;
import io.spindle.core.model.GpuModel;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.InvalidInputException;
import io.spindle.core.model.MigLayout;
import io.spindle.core.model.MigPlacement;
import io.spindle.core.model.MigProfile;
import io.spindle.core.model.Node;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.model.Resources;
import io.spindle.core.placement.GpuSlot;
import io.spindle.journal.avro.GpuRecord;
import io.spindle.journal.avro.GpuSlotRecord;
import io.spindle.journal.avro.LayoutRecord;
import io.spindle.journal.avro.MigInstanceRecord;
import io.spindle.journal.avro.NodeRecord;
import io.spindle.journal.avro.PlacementRecord;
import io.spindle.journal.avro.PlacementSpecRecord;
import io.spindle.journal.avro.ResourceVectorRecord;
import io.spindle.journal.avro.ResourcesRecord;
import java.util.List;
import java.util.function.Function;

/**
 * The model values events and decisions carry, as the journal's Avro records and back. GPU models and MIG profiles
 * travel by name and come back as the catalog's own instances, so what is read equals what the engine makes.
 */
final class ModelRecords {

  private final GpuModelCatalog catalog;

  ModelRecords(GpuModelCatalog catalog) {
    this.catalog = catalog;
  }

  static ResourcesRecord resources(Resources r) {
    return new ResourcesRecord(r.memoryMb(), r.vcores(), r.gpus(), r.models().text(), r.migProfile(),
        r.migInstances(), r.partition(), r.gpuMilli(), r.gpuMemoryMb(), r.isolation().text());
  }

  static Resources resources(ResourcesRecord r) {
    return new Resources(r.getMemoryMb(), r.getVcores(), r.getGpus(), GpuModelSet.parse(r.getGpuModel()),
        r.getMigProfile(), r.getMigInstances(), r.getPartition(), r.getGpuMilli(), r.getGpuMemoryMb(),
        GpuIsolation.parse("isolation", r.getIsolation()));
  }

  static ResourceVectorRecord vector(ResourceVector v) {
    return new ResourceVectorRecord(v.memoryMb(), v.vcores(), v.gpuUnits());
  }

  static ResourceVector vector(ResourceVectorRecord v) {
    return new ResourceVector(v.getMemoryMb(), v.getVcores(), v.getGpuUnits());
  }

  static PlacementSpecRecord spec(PlacementSpec s) {
    return new PlacementSpecRecord(s.gang(), s.topologyLevel(), s.required(), s.maxRuntimeMillis(), s.preemptible(),
        s.restartOnMemberLoss(), s.elasticity().min(), s.elasticity().step());
  }

  static PlacementSpec spec(PlacementSpecRecord s) {
    return new PlacementSpec(s.getGang(), s.getTopologyLevel(), s.getRequired(), s.getMaxRuntimeMillis(),
        s.getPreemptible(), s.getRestartOnMemberLoss(),
        s.getElasticMin() > 0 ? Elasticity.of(s.getElasticMin(), s.getElasticStep()) : Elasticity.RIGID);
  }

  static NodeRecord node(Node n) {
    return new NodeRecord(n.id().value(), n.location(), n.memoryMb(), n.vcores(), n.partition(), n.sharesIdle(),
        map(n.gpus(),
        g -> new GpuRecord(g.index(), g.model().name(), g.nvlinkIsland(), g.migEnabled(), g.sharing().text(),
        g.migLayout() == null ? null : layout(g.migLayout()))));
  }

  Node node(NodeRecord n) {
    return new Node(NodeId.of(n.getId()), n.getLocation(), n.getMemoryMb(), n.getVcores(), map(n.getGpus(),
        g -> new Gpu(g.getIndex(), model(g.getModel()), g.getNvlinkIsland(), g.getMigEnabled(),
        g.getMigLayout() == null ? null : layout(g.getMigLayout()), GpuSharing.parse("gpu.sharing", g.getSharing()))),
        n.getPartition(), n.getSharesIdle());
  }

  static LayoutRecord layout(MigLayout l) {
    return new LayoutRecord(l.model().name(), map(l.placements(),
        p -> new PlacementRecord(p.profile().name(), p.start())));
  }

  MigLayout layout(LayoutRecord l) {
    GpuModel model = model(l.getModel());
    return MigLayout.of(model, map(l.getPlacements(),
        p -> new MigPlacement(profile(model, p.getProfile()), p.getStart())));
  }

  /**
   * A MIG instance travels with a GPU model that has its profile: a profile's name alone does not say which geometry
   * it is (the same name may mean other slices on another model).
   */
  GpuSlotRecord slot(GpuSlot s) {
    if (s.mig() == null) {
      return new GpuSlotRecord(s.gpuIndex(), null, s.share());
    }
    MigProfile profile = s.mig().profile();
    GpuModel owner = catalog.models().stream().filter(m -> m.profiles().contains(profile)).findFirst()
        .orElseThrow(() -> new InvalidInputException("mig.profile", profile.name(), "of no model in the GPU catalog"));
    return new GpuSlotRecord(s.gpuIndex(), new MigInstanceRecord(owner.name(), profile.name(), s.mig().start()),
        false);
  }

  GpuSlot slot(GpuSlotRecord s) {
    MigInstanceRecord mig = s.getMig();
    if (mig == null) {
      return s.getShare() ? GpuSlot.shareOf(s.getGpuIndex()) : GpuSlot.whole(s.getGpuIndex());
    }
    return new GpuSlot(s.getGpuIndex(), new MigPlacement(profile(model(mig.getModel()), mig.getProfile()),
        mig.getStart()));
  }

  GpuModel model(String name) {
    return catalog.find(name).orElseThrow(() -> new InvalidInputException("gpu.model", name,
        "not in this Spindle's GPU catalog; replay with the version that wrote the journal"));
  }

  /** The model that owns the profile: the same instance as the engine's, not only an equal one. */
  static MigProfile profile(GpuModel model, String name) {
    return model.profile(name).orElseThrow(() -> new InvalidInputException("mig.profile", name,
        "not a MIG profile of " + model.name()));
  }

  static <A, B> List<B> map(List<A> in, Function<A, B> f) {
    return in.stream().map(f).toList();
  }
}
