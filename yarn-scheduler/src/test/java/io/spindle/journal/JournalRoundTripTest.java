package io.spindle.journal;

import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.core.engine.Decision;
import io.spindle.core.engine.DurableState;
import io.spindle.core.engine.EngineEvent;
import io.spindle.core.engine.PlacementSpec;
import io.spindle.core.model.AppId;
import io.spindle.core.model.Gpu;
import io.spindle.core.model.GpuModel;
import io.spindle.core.model.GpuModelCatalog;
import io.spindle.core.model.MigLayout;
import io.spindle.core.model.MigPlacement;
import io.spindle.core.model.Node;
import io.spindle.core.model.NodeId;
import io.spindle.core.model.ResourceVector;
import io.spindle.core.model.Resources;
import io.spindle.core.placement.GpuSlot;
import io.spindle.core.preemption.CheckpointAnswer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every entry, event and decision type written to a journal file and read back equal to what was written. */
class JournalRoundTripTest {

  private static final GpuModelCatalog CATALOG = GpuModelCatalog.builtIn();
  private static final GpuModel H100 = CATALOG.require("model", "H100-80GB");
  private static final GpuModel A30 = CATALOG.require("model", "A30-24GB");
  private static final MigLayout H100_LAYOUT = MigLayout.of(H100, List.of(mig(H100, "3g.40gb", 4),
      mig(H100, "1g.10gb", 0), mig(H100, "2g.20gb", 2)));
  private static final Resources WHOLE = Resources.of(16_384, 4).withGpus(2).withGpuModel("H100-80GB");
  private static final Resources SLICE = Resources.of(4_096, 2).withMig("2g.12gb", 1);

  @TempDir
  Path dir;

  static List<EngineEvent> everyEvent() {
    Node migNode = new Node(NodeId.of("mig-1:8041"), "/spine1/rack2", 512_000, 96, List.of(Gpu.mig(0, H100, 0, H100_LAYOUT),
        new Gpu(1, H100, 0, true), Gpu.mig(2, H100, 1, MigLayout.of(H100, List.of(mig(H100, "7g.80gb", 0))))));
    Node a30Node = new Node(NodeId.of("a30-1:8041"), "/spine1/rack3", 128_000, 32,
        List.of(Gpu.mig(0, A30, 0, MigLayout.of(A30, List.of(mig(A30, "2g.12gb", 0), mig(A30, "1g.6gb+me", 3))))));
    return List.of(
        new EngineEvent.NodeAdded(migNode),
        new EngineEvent.NodeAdded(a30Node),
        new EngineEvent.NodeAdded(new Node(NodeId.of("whole-1:8041"), "/spine2/rack1", 256_000, 64,
            List.of(new Gpu(0, H100, 0, false), new Gpu(1, H100, 1, false)))),
        new EngineEvent.NodeAdded(new Node(NodeId.of("cpu-1:8041"), "/spine2/rack1", 64_000, 16, List.of())),
        new EngineEvent.NodeAdded(new Node(NodeId.of("gpu-9:8041"), "/spine2/rack1", 64_000, 16,
            List.of(new Gpu(0, H100, 0, false)), "GPU")),
        new EngineEvent.NodePartitionChanged(NodeId.of("gpu-9:8041"), "TRAIN"),
        new EngineEvent.NodeAdded(new Node(NodeId.of("spare-1:8041"), "/spine2/rack1", 64_000, 16,
            List.of(new Gpu(0, H100, 0, false)), "SPARE", true)),
        new EngineEvent.NodePartitionChanged(NodeId.of("spare-1:8041"), "SPARE2", true),
        new EngineEvent.NodeCordonChanged(NodeId.of("spare-1:8041"), "replacing a fan"),
        new EngineEvent.NodeCordonChanged(NodeId.of("spare-1:8041"), null),
        new EngineEvent.GpuHealthReported(NodeId.of("whole-1:8041"), 3, new io.spindle.core.model.GpuHealth(
            io.spindle.core.model.GpuHealth.State.FAILED, List.of(new io.spindle.core.model.HealthEvidence(
                io.spindle.core.model.HealthEvidence.Kind.XID, 79, "Xid 79: GPU has fallen off the bus")))),
        new EngineEvent.GpuHealthReported(NodeId.of("whole-1:8041"), 3, io.spindle.core.model.GpuHealth.HEALTHY),
        new EngineEvent.GpuCordonChanged(NodeId.of("whole-1:8041"), 2, "reseat"),
        new EngineEvent.GpuCordonChanged(NodeId.of("whole-1:8041"), 2, null),
        new EngineEvent.NodeRemoved(NodeId.of("cpu-1:8041")),
        new EngineEvent.AppSubmitted(AppId.of("application_1_0001"), "root.a", "alice", 3),
        new EngineEvent.AppSubmitted(AppId.of("application_1_0002"), "b", null, 0),
        new EngineEvent.Demand(AppId.of("application_1_0001"), "p9/a0", WHOLE.withPartition("TRAIN"), 1),
        new EngineEvent.Demand(AppId.of("application_1_0001"), "p1/a0", WHOLE, 8,
            new PlacementSpec(true, "rack", true, 3_600_000, true)),
        new EngineEvent.Demand(AppId.of("application_1_0001"), "p0/a0", Resources.of(1_024, 1), 1,
            PlacementSpec.APPLICATION_MASTER),
        new EngineEvent.Demand(AppId.of("application_1_0002"), "p1/a7", SLICE, 0, PlacementSpec.gang(null, false)),
        new EngineEvent.Demand(AppId.of("application_1_0002"), "p2/a7", WHOLE, 4,
            PlacementSpec.gang("rack", false).withRestartOnMemberLoss(false)
                .withElasticity(io.spindle.core.engine.Elasticity.of(2, 2))),
        new EngineEvent.MigLayoutReported(NodeId.of("mig-1:8041"), 1, H100_LAYOUT),
        new EngineEvent.MigLayoutReported(NodeId.of("a30-1:8041"), 0, MigLayout.empty(A30)),
        new EngineEvent.ContainerRecovered(-3, AppId.of("application_1_0002"), "p0/a0", NodeId.of("whole-1:8041"),
            Resources.of(1_024, 1), false),
        new EngineEvent.ContainerRecovered(-4, AppId.of("application_1_0002"), "p1/a0", NodeId.of("mig-1:8041"),
            Resources.of(2_048, 1).withMig("3g.40gb", 1).withGpuModel("H100-80GB")),
        new EngineEvent.ContainerFinished(17),
        new EngineEvent.ContainerLost(18, "expired before it was launched"),
        new EngineEvent.ContainerLost(19, null),
        new EngineEvent.CheckpointAnswered(AppId.of("application_1_0001"), 5, CheckpointAnswer.DONE, 0, "hdfs:///ckpt/step-900"),
        new EngineEvent.CheckpointAnswered(AppId.of("application_1_0001"), 6, CheckpointAnswer.EXTEND, 60_000, null),
        new EngineEvent.CheckpointReported(AppId.of("application_1_0002"), 1_700_000_000_000L, "s3://bucket/ckpt/7"),
        new EngineEvent.CheckpointReported(AppId.of("application_1_0002"), 1_700_000_000_500L, null),
        new EngineEvent.CheckpointReported(AppId.of("application_1_0002"), 1_700_000_000_900L, "s3://bucket/ckpt/8",
            java.util.OptionalLong.of(42_000)),
        new EngineEvent.AppPriorityChanged(AppId.of("application_1_0002"), 7),
        new EngineEvent.AppFinished(AppId.of("application_1_0002")));
  }

  static List<Decision> everyDecision() {
    ResourceVector charge = new ResourceVector(16_384, 4, 1_680);
    return List.of(
        new Decision.Allocate(1, AppId.of("application_1_0001"), "p1/a0", NodeId.of("whole-1:8041"), WHOLE,
            List.of(GpuSlot.whole(0), GpuSlot.whole(1)), charge),
        new Decision.Allocate(2, AppId.of("application_1_0002"), "p1/a7", NodeId.of("a30-1:8041"), SLICE,
            List.of(new GpuSlot(0, mig(A30, "2g.12gb", 0))), new ResourceVector(4_096, 2, 420)),
        new Decision.Allocate(3, AppId.of("application_1_0002"), "p1/a8", NodeId.of("mig-1:8041"),
            Resources.of(2_048, 1).withMig("1g.10gb", 2),
            List.of(new GpuSlot(0, mig(H100, "1g.10gb", 0)), new GpuSlot(1, mig(H100, "1g.10gb", 6))),
            new ResourceVector(2_048, 1, 240)),
        new Decision.Allocate(4, AppId.of("application_1_0003"), "p0/a0", NodeId.of("cpu-1:8041"), Resources.of(1_024, 1), List.of(),
            ResourceVector.of(1_024, 1, 0)),
        new Decision.Reject(AppId.of("application_1_0004"), null, "unknown queue 'nosuch'; leaf queues are [root.a]"),
        new Decision.Reject(AppId.of("application_1_0004"), "p3/a0", "unknown MIG profile '9g.1tb'"),
        new Decision.Reserve(AppId.of("application_1_0001"), "p1/a0", "/spine1/rack2", List.of(NodeId.of("mig-1:8041"), NodeId.of("whole-1:8041")),
            Long.MAX_VALUE),
        new Decision.Wait(AppId.of("application_1_0001"), "p1/a0", "gang of 8 waits for its reservation on /spine1/rack2"),
        new Decision.ReconfigureMig(NodeId.of("mig-1:8041"), 1, H100_LAYOUT, 1_700_000_030_000L),
        new Decision.ReconfigureMig(NodeId.of("a30-1:8041"), 0, MigLayout.empty(A30), 0),
        new Decision.RequestCheckpoint(5, AppId.of("application_1_0002"), "p1/a0", List.of(1L, 2L, 3L), 1_700_000_120_000L, 0,
            1, 300_000, null, AppId.of("application_1_0001"), "p1/a0", "queue root.b is above its fair share"),
        new Decision.RequestCheckpoint(5, AppId.of("application_1_0002"), "p1/a0", List.of(1L, 2L), 1_700_000_120_000L, 1, 1,
            300_000, "no extensions left (1 granted); the deadline holds", AppId.of("application_1_0001"), "p1/a0",
            "queue root.b is above its fair share"),
        new Decision.CancelCheckpoint(6, AppId.of("application_1_0002"), List.of(-4L), "the request it was for started"),
        new Decision.Preempt(5, AppId.of("application_1_0002"), "p1/a0", List.of(1L, 2L), "hdfs:///ckpt/step-900",
            "answered DONE"),
        new Decision.Preempt(7, AppId.of("application_1_0002"), "p1/a0", List.of(), null, "deadline passed"),
        new Decision.RestartGang(AppId.of("application_1_0001"), "p1/a0", List.of(1L, 3L), List.of(2L),
            "member 2 lost: node whole-1:8041 left"),
        new Decision.RequestCheckpoint(8, AppId.of("application_1_0002"), "p1/a0", List.of(4L, 5L), 1_700_000_120_000L, 0,
            1, 300_000, null, AppId.of("application_1_0001"), "p1/a0", "elastic members first", 2),
        new Decision.Preempt(8, AppId.of("application_1_0002"), "p1/a0", List.of(4L, 5L), null, "answered DONE", 2),
        new Decision.Resize(AppId.of("application_1_0002"), "p1/a0", 2, 4, List.of(4L, 5L), "grew by 2 into idle capacity"),
        new Decision.StopContainers(AppId.of("application_1_0003"), List.of(4L), "GPU 0 of node cpu-1:8041 failed"));
  }

  @Test
  void everyEntryEventAndDecisionReadsBackEqual() throws IOException {
    JournalEntry.Header header = header(1_700_000_000_000L);
    DurableState state = new DurableState(8, 5, List.of(new DurableState.UnitState(4, AppId.of("application_1_0002"), "p1/a0",
        WHOLE, PlacementSpec.gang("rack", false), 1_699_999_000_000L, 2, List.of("container_1_0002_01_000002"))),
        List.of(), List.of(), List.of(),
        List.of(new DurableState.CheckpointState(AppId.of("application_1_0002"), 1_699_999_500_000L, "s3://b/c",
            java.util.OptionalLong.of(30_000))), List.of(),
        new DurableState.StarvationState(List.of(), List.of(new DurableState.BelowFairShareSince("root.a", 7))),
        List.of());
    List<JournalEntry> written = List.of(
        new JournalEntry.Cycle(1_700_000_000_100L, everyEvent(), List.of()),
        new JournalEntry.Cycle(1_700_000_000_100L, List.of(), everyDecision()),
        new JournalEntry.Cycle(1_700_000_000_201L, List.of(), List.of()),
        new JournalEntry.Reconfigure(Map.of("yarn.scheduler.capacity.root.queues", "a,b")),
        new JournalEntry.Restore(1_700_000_000_201L, state, Map.of("container_1_0002_01_000002", -7L), null),
        new JournalEntry.Restore(1_700_000_000_201L, DurableState.EMPTY, Map.of(),
            "java.lang.IllegalStateException: a restore must come first"),
        new JournalEntry.Cycle(1_699_999_999_000L, List.of(new EngineEvent.ContainerFinished(2)), List.of()));

    DecisionJournal journal = DecisionJournal.open(new JournalSettings(dir, 10_000), header);
    for (JournalEntry e : written) {
      if (e instanceof JournalEntry.Cycle c) {
        journal.cycle(c.timeMillis(), c.events(), c.decisions());
      } else if (e instanceof JournalEntry.Reconfigure r) {
        journal.reconfigured(r.configuration());
      } else if (e instanceof JournalEntry.Restore r) {
        journal.restored(r.timeMillis(), r.state(), r.allocationIds(), r.failure());
      }
    }
    journal.close();

    Path file = onlyFile(dir);
    assertThat(file.getFileName().toString()).isEqualTo("spindle-journal-20231114-221320-rm1.example.com_rm1_4242.avro");
    List<JournalEntry> read = new ArrayList<>();
    try (JournalReader reader = JournalReader.open(file)) {
      assertThat(reader.header()).isEqualTo(header);
      Optional<JournalEntry> e;
      while ((e = reader.next()).isPresent()) {
        read.add(e.get());
      }
    }
    assertThat(read.subList(0, written.size())).containsExactlyElementsOf(written);
    assertThat(read.get(written.size())).isInstanceOfSatisfying(JournalEntry.End.class,
        end -> assertThat(end.lostEntries()).isZero());
    assertThat(read).hasSize(written.size() + 1);
  }

  /**
   * A journal of format 4, before checkpoint reports said how long the write took, reads with the write time
   * unknown: the schema only grew by a field with a default.
   */
  @Test
  void aFormat4JournalReadsItsCheckpointReportsWithoutAWriteTime() throws IOException {
    String current = io.spindle.journal.avro.JournalEntryRecord.getClassSchema().toString();
    String field = ",{\"name\":\"writeMillis\",\"type\":[\"null\",\"long\"]";
    int at = current.indexOf(field);
    assertThat(at).as("the field this test removes").isPositive();
    org.apache.avro.Schema format4 = new org.apache.avro.Schema.Parser().parse(current.substring(0, at)
        + current.substring(current.indexOf('}', at) + 1));
    JournalEntry.Header header = new JournalEntry.Header(4, "rm1/rm1#1", "0.1.0-old", 1_000, 950, List.of("rack"),
        Map.of());
    EngineEvent.CheckpointReported report = new EngineEvent.CheckpointReported(AppId.of("application_1_0002"),
        900, "hdfs:///ckpt/3");
    JournalCodec codec = new JournalCodec(CATALOG);
    Path file = dir.resolve("format4.avro");
    try (org.apache.avro.file.DataFileWriter<org.apache.avro.generic.GenericRecord> out =
        new org.apache.avro.file.DataFileWriter<>(new org.apache.avro.generic.GenericDatumWriter<>(format4))) {
      out.create(format4, file.toFile());
      for (JournalEntry e : List.of(header, new JournalEntry.Cycle(1_000, List.of(report), List.of()))) {
        out.append(asWrittenBy(format4, codec.encode(e)));
      }
    }

    try (JournalReader reader = JournalReader.open(file)) {
      assertThat(reader.header().formatVersion()).isEqualTo(4);
      assertThat(reader.next().orElseThrow()).isInstanceOfSatisfying(JournalEntry.Cycle.class,
          c -> assertThat(c.events()).containsExactly(report));
      assertThat(report.writeMillis()).isEmpty();
    }
  }

  /** The record as a writer of {@code older} would have written it: the current one resolved to that schema. */
  private static org.apache.avro.generic.GenericRecord asWrittenBy(org.apache.avro.Schema older,
      io.spindle.journal.avro.JournalEntryRecord current) throws IOException {
    java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
    org.apache.avro.io.BinaryEncoder encoder = org.apache.avro.io.EncoderFactory.get().binaryEncoder(bytes, null);
    new org.apache.avro.specific.SpecificDatumWriter<io.spindle.journal.avro.JournalEntryRecord>(current.getSchema())
        .write(current, encoder);
    encoder.flush();
    return new org.apache.avro.generic.GenericDatumReader<org.apache.avro.generic.GenericRecord>(current.getSchema(),
        older).read(null, org.apache.avro.io.DecoderFactory.get().binaryDecoder(bytes.toByteArray(), null));
  }

  @Test
  void theSamplesCoverEveryEventAndDecisionType() {
    assertThat(everyEvent().stream().map(Object::getClass).distinct())
        .containsExactlyInAnyOrder(EngineEvent.class.getPermittedSubclasses());
    assertThat(everyDecision().stream().map(Object::getClass).distinct())
        .containsExactlyInAnyOrder(Decision.class.getPermittedSubclasses());
  }

  @Test
  void theHeaderKeepsTheEngineKeysAndLeavesOutTheAdaptersAndTheZooKeeperPassword() {
    Map<String, String> kept = DecisionJournal.engineConfiguration(Map.of(
        "yarn.scheduler.capacity.root.queues", "a,b",
        "yarn.scheduler.spindle.preemption.enabled", "true",
        "yarn.scheduler.spindle.zk.auth", "digest:rm:secret",
        "yarn.scheduler.spindle.metrics.jmx.enabled", "true",
        "yarn.scheduler.spindle.http.port", "8095",
        "yarn.scheduler.spindle.journal.dir", "/var/log/spindle"));
    assertThat(kept).containsOnlyKeys("yarn.scheduler.capacity.root.queues",
        "yarn.scheduler.spindle.preemption.enabled");
  }

  static JournalEntry.Header header(long startedMillis) {
    return new JournalEntry.Header(JournalEntry.FORMAT_VERSION, "rm1.example.com/rm1#4242", "0.1.0-test",
        startedMillis, startedMillis - 50, List.of("spine", "rack"),
        Map.of("yarn.scheduler.capacity.root.queues", "a,b", "yarn.scheduler.capacity.root.a.capacity", "50",
            "yarn.scheduler.capacity.root.b.capacity", "50"));
  }

  static Path onlyFile(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      List<Path> all = files.toList();
      assertThat(all).hasSize(1);
      return all.get(0);
    }
  }

  private static MigPlacement mig(GpuModel model, String profile, int start) {
    return new MigPlacement(model.profile(profile).orElseThrow(), start);
  }
}
