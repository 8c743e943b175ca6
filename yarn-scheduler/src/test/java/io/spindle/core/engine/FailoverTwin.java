package io.spindle.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.spindle.core.engine.Decision.Allocate;
import io.spindle.core.engine.Decision.CancelCheckpoint;
import io.spindle.core.engine.Decision.Preempt;
import io.spindle.core.engine.Decision.RequestCheckpoint;
import io.spindle.core.engine.EngineEvent.AppFinished;
import io.spindle.core.engine.EngineEvent.AppSubmitted;
import io.spindle.core.engine.EngineEvent.ContainerFinished;
import io.spindle.core.engine.EngineEvent.ContainerRecovered;
import io.spindle.core.engine.EngineEvent.Demand;
import io.spindle.core.engine.EngineEvent.NodeAdded;
import io.spindle.core.model.AppId;
import io.spindle.core.model.NodeId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.LongUnaryOperator;

/**
 * An engine that never fails over (the reference), and from the first {@link #failover} on the standby that took
 * over from it, built from scratch as a new leader would be: nodes, applications and running containers recovered
 * under new allocation ids, the durable state restored, the asks sent again. Both get the same events on the same
 * clock; every cycle their decisions must be the same, allocation ids renamed, and so must their durable states.
 *
 * <p>Allowed differences, in the first cycle after a failover only: the standby issues again the notices in force
 * and the kills under way. Wait decisions, which only tell people why a request waits, may be announced again by
 * the standby (it has told nobody anything yet) but every one the reference announces it announces too.
 *
 * <p>It plays the driver's part in naming containers: a container has a name while the driver knows it runs, as
 * the YARN adapter forgets a container that ended.
 */
final class FailoverTwin {

  final ManualClock clock;
  final Engine reference;
  private final Function<Clock, Engine> factory;
  private Engine standby;
  private final Map<NodeId, NodeAdded> nodes = new LinkedHashMap<>();
  private final Map<AppId, AppSubmitted> apps = new LinkedHashMap<>();
  private final Map<String, PlacementSpec> specs = new HashMap<>();
  /** Each GPU's last health report, which its node sends a new leader again. */
  private final Map<String, EngineEvent.GpuHealthReported> health = new LinkedHashMap<>();
  /** Running containers as the driver knows them, by the reference's allocation id, in start order. */
  final Map<Long, Allocate> running = new LinkedHashMap<>();
  private final Map<Long, Long> toStandby = new HashMap<>();
  private final Map<Long, Long> toReference = new HashMap<>();
  private long nextRecoveredId = -1;
  private List<Demand> asks = List.of();
  private boolean firstCycleAfterFailover;
  private int failovers;
  private CycleResult lastStandbyCycle;

  FailoverTwin(ManualClock clock, Function<Clock, Engine> factory) {
    this.clock = clock;
    this.factory = factory;
    this.reference = factory.apply(clock);
  }

  Engine standby() {
    return standby;
  }

  /** What the standby would save now, its containers named as the driver names them. */
  DurableState standbyState() {
    return standby.durableState(this::standbyName);
  }

  /** The standby's own decisions of the last cycle, its allocation ids unmapped. */
  CycleResult lastStandbyCycle() {
    return lastStandbyCycle;
  }

  int failovers() {
    return failovers;
  }

  /** One cycle of both engines (the reference only, before a failover); returns the reference's decisions. */
  CycleResult cycle(List<? extends EngineEvent> events) {
    for (EngineEvent e : events) {
      if (e instanceof NodeAdded n) {
        nodes.put(n.node().id(), n);
      } else if (e instanceof AppSubmitted a) {
        apps.put(a.appId(), a);
      } else if (e instanceof AppFinished f) {
        apps.remove(f.appId());
        running.values().removeIf(a -> a.appId().equals(f.appId()));
      } else if (e instanceof Demand d) {
        specs.put(d.appId() + "/" + d.requestKey(), d.spec());
      } else if (e instanceof ContainerFinished f) {
        running.remove(f.allocationId());
      } else if (e instanceof EngineEvent.GpuHealthReported h) {
        health.put(h.nodeId() + "/" + h.gpuIndex(), h);
      } else if (!(e instanceof EngineEvent.CheckpointAnswered || e instanceof EngineEvent.CheckpointReported
          || e instanceof EngineEvent.NodeCordonChanged || e instanceof EngineEvent.GpuCordonChanged)) {
        // A cordon reaches the standby by the durable state.
        throw new IllegalArgumentException("the twin does not replay " + e);
      }
    }
    CycleResult r = reference.cycle(events);
    for (Allocate a : r.allocations()) {
      running.put(a.allocationId(), a);
    }
    if (standby != null) {
      List<EngineEvent> mapped = new ArrayList<>(firstCycleAfterFailover ? asks : List.of());
      if (firstCycleAfterFailover) {
        mapped.addAll(health.values()); // The nodes report their GPUs' health to the new leader.
      }
      for (EngineEvent e : events) {
        mapped.add(e instanceof ContainerFinished f ? new ContainerFinished(require(toStandby, f.allocationId())) : e);
      }
      CycleResult s = standby.cycle(mapped);
      lastStandbyCycle = s;
      compare(r, s);
      firstCycleAfterFailover = false;
      assertThat(standby.durableState(this::standbyName)).as("durable state at %d ms", clock.nowMillis())
          .isEqualTo(reference.durableState(this::referenceName));
    }
    return r;
  }

  CycleResult cycle(EngineEvent... events) {
    return cycle(List.of(events));
  }

  /**
   * The engine in charge (the latest standby, or the reference) fails: a new one is built from scratch at the
   * current time from what YARN recovers and the durable state the old one last exported.
   */
  RestoreReport failover() {
    Engine old = standby == null ? reference : standby;
    DurableState saved = old.durableState(standby == null ? this::referenceName : this::standbyName);
    asks = old.outstandingDemands();
    Engine next = factory.apply(clock);
    List<EngineEvent> recovery = new ArrayList<>(nodes.values());
    recovery.addAll(apps.values());
    Map<Long, Long> ids = new HashMap<>();
    for (Allocate a : running.values()) {
      long id = nextRecoveredId--;
      ids.put(a.allocationId(), id);
      PlacementSpec spec = specs.get(a.appId() + "/" + a.requestKey());
      recovery.add(new ContainerRecovered(id, a.appId(), a.requestKey(), a.nodeId(), a.shape(),
          spec == null || spec.preemptible()));
    }
    CycleResult recovered = next.cycle(recovery);
    assertThat(recovered.decisions()).as("nothing is decided on recovery alone").isEmpty();
    RestoreReport report = next.restore(saved, name -> ids.get(Long.parseLong(name.substring(1))));
    toStandby.clear();
    toReference.clear();
    ids.forEach((ref, mine) -> {
      toStandby.put(ref, mine);
      toReference.put(mine, ref);
    });
    standby = next;
    firstCycleAfterFailover = true;
    failovers++;
    return report;
  }

  /** The standby's allocation id of a container the reference knows by {@code referenceId}. */
  long standbyId(long referenceId) {
    return require(toStandby, referenceId);
  }

  String referenceName(long id) {
    return running.containsKey(id) ? "c" + id : null;
  }

  private String standbyName(long id) {
    Long ref = toReference.get(id);
    return ref == null ? null : referenceName(ref);
  }

  private void compare(CycleResult r, CycleResult s) {
    List<Allocate> mine = s.allocations();
    assertThat(mine).as("allocations at %d ms", clock.nowMillis()).hasSameSizeAs(r.allocations());
    for (int i = 0; i < mine.size(); i++) {
      Allocate a = r.allocations().get(i);
      Allocate b = mine.get(i);
      assertThat(List.of(b.appId(), b.requestKey(), b.nodeId(), b.shape(), b.charge()))
          .as("allocation %d at %d ms", i, clock.nowMillis())
          .isEqualTo(List.of(a.appId(), a.requestKey(), a.nodeId(), a.shape(), a.charge()));
      toStandby.put(a.allocationId(), b.allocationId());
      toReference.put(b.allocationId(), a.allocationId());
    }
    List<Decision> expected = new ArrayList<>();
    List<Decision.Wait> expectedWaits = new ArrayList<>();
    for (Decision d : r.decisions()) {
      if (d instanceof Decision.Wait w) {
        expectedWaits.add(w);
      } else {
        expected.add(renamed(d, id -> toStandby.containsKey(id) ? id : Long.MIN_VALUE));
      }
    }
    List<Decision> actual = new ArrayList<>();
    List<Decision.Wait> waits = new ArrayList<>();
    for (Decision d : s.decisions()) {
      if (d instanceof Decision.Wait w) {
        waits.add(w);
      } else {
        actual.add(renamed(d, id -> toReference.getOrDefault(id, Long.MIN_VALUE)));
      }
    }
    if (firstCycleAfterFailover) {
      dropReissues(expected, actual);
    }
    assertThat(actual).as("decisions at %d ms", clock.nowMillis()).isEqualTo(expected);
    assertThat(waits).as("wait reasons at %d ms", clock.nowMillis()).containsAll(expectedWaits);
  }

  /** Takes out of {@code actual} the last issue of each notice or kill it has more of than {@code expected}. */
  private static void dropReissues(List<Decision> expected, List<Decision> actual) {
    for (Class<? extends Decision> type : List.of(RequestCheckpoint.class, Preempt.class)) {
      Map<Long, Integer> extra = new HashMap<>();
      actual.stream().filter(type::isInstance).forEach(d -> extra.merge(noticeId(d), 1, Integer::sum));
      expected.stream().filter(type::isInstance).forEach(d -> extra.merge(noticeId(d), -1, Integer::sum));
      for (int i = actual.size() - 1; i >= 0; i--) {
        Decision d = actual.get(i);
        if (type.isInstance(d) && extra.getOrDefault(noticeId(d), 0) > 0) {
          extra.merge(noticeId(d), -1, Integer::sum);
          actual.remove(i);
        }
      }
    }
  }

  private static long noticeId(Decision d) {
    return d instanceof RequestCheckpoint n ? n.noticeId() : ((Preempt) d).noticeId();
  }

  /** The decision with allocation ids mapped; ids mapped to {@code Long.MIN_VALUE} (unknown to the other) left out. */
  private static Decision renamed(Decision d, LongUnaryOperator id) {
    if (d instanceof Allocate a) {
      return new Allocate(id.applyAsLong(a.allocationId()), a.appId(), a.requestKey(), a.nodeId(), a.shape(),
          List.of(), a.charge());
    } else if (d instanceof RequestCheckpoint n) {
      return new RequestCheckpoint(n.noticeId(), n.appId(), n.requestKey(), ids(n.allocationIds(), id),
          n.deadlineMillis(), n.extensionsGranted(), n.maxExtensions(), n.maxExtensionMillis(), n.refusal(),
          n.forAppId(), n.forRequestKey(), n.reason());
    } else if (d instanceof CancelCheckpoint c) {
      return new CancelCheckpoint(c.noticeId(), c.appId(), ids(c.allocationIds(), id), c.reason());
    } else if (d instanceof Preempt p) {
      return new Preempt(p.noticeId(), p.appId(), p.requestKey(), ids(p.allocationIds(), id), p.checkpointLocation(),
          p.reason());
    }
    return d;
  }

  private static List<Long> ids(List<Long> ids, LongUnaryOperator map) {
    List<Long> out = new ArrayList<>();
    for (long i : ids) {
      long m = map.applyAsLong(i);
      if (m != Long.MIN_VALUE) {
        out.add(m);
      }
    }
    return out;
  }

  private static long require(Map<Long, Long> map, long id) {
    Long m = map.get(id);
    if (m == null) {
      throw new AssertionError("allocation " + id + " has no counterpart");
    }
    return m;
  }
}
