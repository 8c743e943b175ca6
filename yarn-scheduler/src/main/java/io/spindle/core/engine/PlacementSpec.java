package io.spindle.core.engine;

/**
 * How a request's containers are placed.
 *
 * @param gang all {@code count} containers start together, in one cycle, or none does
 * @param topologyLevel the level the gang should stay within ({@code rack}, {@code node}, a topology level name),
 *     or {@code null} for none
 * @param required {@code true}: never span above {@code topologyLevel} (wait instead); {@code false}: prefer the
 *     lowest level that holds the gang and fall back up the tree
 * @param maxRuntimeMillis the run time the application declares for each container, or 0 if it declares none; a
 *     container that declares one may run on nodes held for a gang if it ends before the gang is due to start
 * @param preemptible whether the containers may be taken back for other work; {@code false} for an application's
 *     master, whose loss ends the whole application (and with it all its other work)
 * @param restartOnMemberLoss for gangs: when a member is lost to the cluster (its node left, it expired unlaunched),
 *     the surviving members are stopped and the gang is re-queued whole, as tightly coupled jobs (MPI, NCCL) need;
 *     {@code false} for gangs that replace lost members themselves (Spark executors). Ignored for single containers.
 * @param elasticity for gangs: the minimum it starts with and the step it grows by; {@link Elasticity#RIGID} for a
 *     gang that starts whole
 */
public record PlacementSpec(boolean gang, String topologyLevel, boolean required, long maxRuntimeMillis,
    boolean preemptible, boolean restartOnMemberLoss, Elasticity elasticity) {

  /** Independent containers, no topology wish, no declared run time. */
  public static final PlacementSpec SINGLE = new PlacementSpec(false, null, false, 0);

  /** An application master's container: placed like {@link #SINGLE}, never a preemption victim. */
  public static final PlacementSpec APPLICATION_MASTER = new PlacementSpec(false, null, false, 0, false, false);

  public PlacementSpec {
    elasticity = elasticity == null ? Elasticity.RIGID : elasticity;
    if (elasticity.elastic() && !gang) {
      throw new IllegalArgumentException("only a gang can be elastic");
    }
    if (maxRuntimeMillis < 0) {
      throw new IllegalArgumentException("maxRuntimeMillis must not be negative: " + maxRuntimeMillis);
    }
    if (required && (topologyLevel == null || topologyLevel.isBlank())) {
      throw new IllegalArgumentException("a required topology constraint needs a level");
    }
  }

  /** A rigid gang, or independent containers. */
  public PlacementSpec(boolean gang, String topologyLevel, boolean required, long maxRuntimeMillis,
      boolean preemptible, boolean restartOnMemberLoss) {
    this(gang, topologyLevel, required, maxRuntimeMillis, preemptible, restartOnMemberLoss, Elasticity.RIGID);
  }

  /** A gang restarts whole when it loses a member. */
  public PlacementSpec(boolean gang, String topologyLevel, boolean required, long maxRuntimeMillis,
      boolean preemptible) {
    this(gang, topologyLevel, required, maxRuntimeMillis, preemptible, gang);
  }

  /** A preemptible request; a gang restarts whole when it loses a member. */
  public PlacementSpec(boolean gang, String topologyLevel, boolean required, long maxRuntimeMillis) {
    this(gang, topologyLevel, required, maxRuntimeMillis, true);
  }

  public static PlacementSpec gang(String level, boolean required) {
    return new PlacementSpec(true, level, required, 0);
  }

  public PlacementSpec withMaxRuntimeMillis(long millis) {
    return new PlacementSpec(gang, topologyLevel, required, millis, preemptible, restartOnMemberLoss, elasticity);
  }

  public PlacementSpec withRestartOnMemberLoss(boolean restart) {
    return new PlacementSpec(gang, topologyLevel, required, maxRuntimeMillis, preemptible, restart, elasticity);
  }

  public PlacementSpec withElasticity(Elasticity e) {
    return new PlacementSpec(gang, topologyLevel, required, maxRuntimeMillis, preemptible, restartOnMemberLoss, e);
  }

  /** Whether this is a gang that may run with fewer members than it asks for. */
  public boolean elastic() {
    return elasticity.elastic();
  }
}
