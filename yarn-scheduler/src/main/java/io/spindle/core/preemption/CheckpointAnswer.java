package io.spindle.core.preemption;

/** How an application answers a checkpoint notice. */
public enum CheckpointAnswer {
  /** The checkpoint is written: reclaim now. */
  DONE,
  /** More time is needed; granted while the victim's queue allows extensions, refused after. */
  EXTEND
}
