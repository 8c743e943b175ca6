package io.spindle.nm;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** An in-memory nvidia-smi: answers each argument list with a prepared result, records every call. */
public final class ScriptedNvidiaSmi implements NvidiaSmi {

  private final Map<List<String>, Result> answers = new HashMap<>();
  private final List<List<String>> calls = new ArrayList<>();

  /** Answers like the given fixture folder (query.xml, list.txt, topo.txt and lgi.txt where present). */
  public static ScriptedNvidiaSmi like(String fixture) {
    ScriptedNvidiaSmi smi = new ScriptedNvidiaSmi();
    smi.answer(GpuDiscovery.QUERY, FakeNvidiaSmi.fixture(fixture + "/query.xml"));
    smi.answer(GpuDiscovery.LIST, FakeNvidiaSmi.fixture(fixture + "/list.txt"));
    smi.answer(GpuDiscovery.TOPOLOGY, FakeNvidiaSmi.fixture(fixture + "/topo.txt"));
    if (FakeNvidiaSmi.class.getResource("/nvidia-smi/" + fixture + "/lgi.txt") != null) {
      smi.answer(GpuDiscovery.GPU_INSTANCES, FakeNvidiaSmi.fixture(fixture + "/lgi.txt"));
    }
    return smi;
  }

  public ScriptedNvidiaSmi answer(List<String> args, String stdout) {
    return answer(args, new Result(0, stdout, ""));
  }

  public ScriptedNvidiaSmi answer(List<String> args, Result result) {
    answers.put(List.copyOf(args), result);
    return this;
  }

  public List<List<String>> calls() {
    return List.copyOf(calls);
  }

  @Override
  public Result run(List<String> args) {
    calls.add(List.copyOf(args));
    Result r = answers.get(args);
    return r != null ? r : new Result(2, "", "no scripted answer for " + args);
  }
}
