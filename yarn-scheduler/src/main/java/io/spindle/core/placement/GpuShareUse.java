package io.spindle.core.placement;

/**
 * What is taken of one GPU in a sharing mode, for status pages and the GPU map.
 *
 * @param usedMilli compute held by its shares, in thousandths
 * @param usedMemoryMb GPU memory held by its shares
 * @param shares how many containers share it
 * @param takenWhole a whole-GPU container holds it
 */
public record GpuShareUse(int usedMilli, long usedMemoryMb, int shares, boolean takenWhole) {}
