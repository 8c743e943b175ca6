# Sourced by the engine-only tools (spindle-sim, bench-engine, bench-openb): compiles the reactor modules they need in
# place (nothing is installed into ~/.m2) and sets sim_classpath. test-compile, not compile: yarn-scheduler depends on
# client's test-jar, which a fresh checkout can resolve from the reactor only once test classes exist.
# Usage: build_sim_classpath ROOT SKIP   (SKIP=1 reuses an earlier build when there is one)
build_sim_classpath() {
  local root="$1" skip="${2:-}" cp_file="$1/src-test/target/sim.classpath" log
  if [[ "$skip" != 1 || ! -f "$cp_file" ]]; then
    if ! log=$(cd "$root" && mvn -B -q ${SPINDLE_MAVEN_OPTS:-} -pl src-test -am test-compile \
        dependency:build-classpath -Dmdep.outputFile=target/sim.classpath -Dmdep.includeScope=runtime 2>&1); then
      printf '%s\n' "$log" >&2
      echo "$(basename "$0"): build failed (the Maven output is above)" >&2
      exit 1
    fi
  fi
  sim_classpath="$root/src-test/target/classes:$(cat "$cp_file")"
}
