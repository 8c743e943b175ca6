package io.spindle.metrics;

import io.prometheus.client.Collector;
import io.prometheus.client.dropwizard.samplebuilder.DefaultSampleBuilder;
import io.prometheus.client.dropwizard.samplebuilder.SampleBuilder;
import java.util.ArrayList;
import java.util.List;

/**
 * Turns the variable part of Spindle's Dropwizard names into Prometheus labels. Queue paths and MIG profile names
 * contain dots themselves ({@code root.a}, {@code 1g.10gb}), so the label is always the rest of the name after a
 * fixed prefix; a glob mapping ({@code CustomMappingSampleBuilder}) would split them apart.
 *
 * <ul>
 *   <li>{@code spindle.decisions.<type>} → {@code spindle_decisions{type}}</li>
 *   <li>{@code spindle.checkpoint.outcomes.<outcome>} → {@code spindle_checkpoint_outcomes{outcome}}</li>
 *   <li>{@code spindle.mig.free.<profile>} → {@code spindle_mig_free_instances{profile}}</li>
 *   <li>{@code spindle.queue.<figure>.<resource>.<path>} → {@code spindle_queue_<figure>_<resource>{queue}}</li>
 * </ul>
 * Anything else keeps the bridge's default name (dots to underscores).
 */
final class PrometheusNames implements SampleBuilder {

  static final String DECISIONS = "spindle.decisions.";
  static final String CHECKPOINT_OUTCOMES = "spindle.checkpoint.outcomes.";
  static final String MIG_FREE = "spindle.mig.free.";
  static final String QUEUE = "spindle.queue.";

  private final SampleBuilder fallback = new DefaultSampleBuilder();

  @Override
  public Collector.MetricFamilySamples.Sample createSample(String dropwizardName, String nameSuffix,
      List<String> labelNames, List<String> labelValues, double value) {
    if (dropwizardName.startsWith(DECISIONS)) {
      return sample("spindle_decisions", nameSuffix, labelNames, labelValues, "type",
          dropwizardName.substring(DECISIONS.length()), value);
    }
    if (dropwizardName.startsWith(CHECKPOINT_OUTCOMES)) {
      return sample("spindle_checkpoint_outcomes", nameSuffix, labelNames, labelValues, "outcome",
          dropwizardName.substring(CHECKPOINT_OUTCOMES.length()), value);
    }
    if (dropwizardName.startsWith(MIG_FREE)) {
      return sample("spindle_mig_free_instances", nameSuffix, labelNames, labelValues, "profile",
          dropwizardName.substring(MIG_FREE.length()), value);
    }
    if (dropwizardName.startsWith(QUEUE)) {
      String[] parts = dropwizardName.substring(QUEUE.length()).split("\\.", 3);
      if (parts.length == 3) {
        return sample("spindle_queue_" + parts[0] + "_" + parts[1], nameSuffix, labelNames, labelValues, "queue",
            parts[2], value);
      }
    }
    return fallback.createSample(dropwizardName, nameSuffix, labelNames, labelValues, value);
  }

  private static Collector.MetricFamilySamples.Sample sample(String name, String nameSuffix, List<String> labelNames,
      List<String> labelValues, String label, String labelValue, double value) {
    List<String> names = new ArrayList<>(labelNames == null ? List.of() : labelNames);
    List<String> values = new ArrayList<>(labelValues == null ? List.of() : labelValues);
    names.add(label);
    values.add(labelValue);
    return new Collector.MetricFamilySamples.Sample(name + (nameSuffix == null ? "" : nameSuffix), names, values,
        value);
  }
}
