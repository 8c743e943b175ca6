package io.spindle.core.placement;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * An ordered set of all entries (nodes, shared GPUs) and, once entries of a second GPU model register, one ordered set
 * per model. With one model the per-model set would repeat the set of all (less entries without a model, which a
 * model's lookup skips) at the price of a second ordered-set update on every start and end, so until then a model's
 * lookups use the set of all.
 */
final class PerModelIndex<T, S extends Collection<T>> {

  private final Supplier<S> newSet;
  /** An entry's GPU model name, {@code null} for none (a CPU-only node). */
  private final Function<T, String> modelOf;
  private final S all;
  private final Map<String, S> byModel = new HashMap<>();
  /** Registered entries per model name. */
  private final Map<String, Integer> registered = new HashMap<>();
  private boolean perModel;

  PerModelIndex(Supplier<S> newSet, Function<T, String> modelOf) {
    this.newSet = newSet;
    this.modelOf = modelOf;
    this.all = newSet.get();
  }

  /** {@code count} entries of the model registered (before they are first added). */
  void registered(String model, int count) {
    if (model == null || count == 0) {
      return;
    }
    registered.merge(model, count, Integer::sum);
    if (registered.size() > 1 && !perModel) {
      perModel = true;
      for (T indexed : all) {
        String m = modelOf.apply(indexed);
        if (m != null) {
          byModel.computeIfAbsent(m, k -> newSet.get()).add(indexed);
        }
      }
    }
  }

  /** {@code count} entries of the model left (after they were removed). */
  void unregistered(String model, int count) {
    if (model != null && count > 0) {
      registered.computeIfPresent(model, (k, v) -> v <= count ? null : v - count);
    }
  }

  void add(T entry) {
    all.add(entry);
    String m = modelOf.apply(entry);
    if (perModel && m != null) {
      byModel.computeIfAbsent(m, k -> newSet.get()).add(entry);
    }
  }

  void remove(T entry) {
    all.remove(entry);
    String m = modelOf.apply(entry);
    if (perModel && m != null) {
      byModel.get(m).remove(entry);
    }
  }

  S all() {
    return all;
  }

  /** Where to search for entries of one GPU model, {@code null} if none registered. */
  S ofModel(String model) {
    if (perModel) {
      return byModel.get(model);
    }
    return registered.containsKey(model) ? all : null;
  }
}
