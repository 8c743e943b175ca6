package io.spindle.core.engine;

import io.spindle.core.model.GpuHealth;
import io.spindle.core.model.NodeId;
import io.spindle.core.placement.GpuService;

/**
 * One GPU that is not simply healthy and in service, for the status API, the GPU map and metrics.
 *
 * @param health what its node last reported, with the evidence
 * @param service why it takes less than any work, or {@code null} when it takes any
 * @param recentFailures failures within the quarantine window
 * @param quarantinedUntilMillis when its quarantine ends; {@code 0}: not quarantined
 */
public record GpuFaultView(NodeId nodeId, int gpuIndex, GpuHealth health, GpuService service, int recentFailures,
    long quarantinedUntilMillis) {}
