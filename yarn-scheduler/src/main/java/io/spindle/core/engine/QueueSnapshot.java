package io.spindle.core.engine;

import io.spindle.core.model.ResourceVector;

/** A queue as of the end of the last cycle: its limits, fair share, usage and outstanding demand. */
public record QueueSnapshot(String path, ResourceVector guarantee, ResourceVector maximum,
    ResourceVector fairShare, ResourceVector usage, ResourceVector pending) {}
