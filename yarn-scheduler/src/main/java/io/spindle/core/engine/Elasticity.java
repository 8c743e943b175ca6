package io.spindle.core.engine;

/**
 * How far a gang may shrink and in which groups it grows. A rigid gang ({@link #RIGID}) starts whole and is
 * preempted whole. An elastic gang starts as soon as {@code min} members fit (atomically, as a rigid gang of
 * {@code min}), grows towards what its application asks in groups of {@code step} while capacity is idle, and gives
 * its members above {@code min} back, a group at a time, through a resize notice before it can be preempted whole
 * (docs/architecture.md, "Elastic gangs").
 *
 * @param min the fewest members the gang runs with; 0 for a rigid gang
 * @param step members above {@code min} come and go in groups of this many (e.g. the GPUs of one node)
 */
public record Elasticity(int min, int step) {

  public static final Elasticity RIGID = new Elasticity(0, 1);

  public Elasticity {
    if (min < 0) {
      throw new IllegalArgumentException("an elastic gang's minimum must be at least 1, not " + min);
    }
    if (step < 1) {
      throw new IllegalArgumentException("an elastic gang's grow step must be at least 1, not " + step);
    }
  }

  public static Elasticity of(int min, int step) {
    if (min < 1) {
      throw new IllegalArgumentException("an elastic gang's minimum must be at least 1, not " + min);
    }
    return new Elasticity(min, step);
  }

  public boolean elastic() {
    return min > 0;
  }

  /** The members a gang asking {@code asked} starts with: all of a rigid one, at most {@code min} of an elastic one. */
  int startingMembers(int asked) {
    return elastic() ? Math.min(min, asked) : asked;
  }
}
