package io.spindle.core.engine;

/**
 * The engine's only source of time. Injected so that the simulator can run on virtual time and every decision can
 * be replayed: the engine never reads the wall clock itself.
 */
@FunctionalInterface
public interface Clock {

  long nowMillis();
}
