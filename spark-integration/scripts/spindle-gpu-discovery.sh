#!/usr/bin/env bash
# Spark GPU discovery script for executors that Spindle schedules on YARN
# (spark.executor.resource.gpu.discoveryScript). Prints Spark's resource JSON, e.g.
#   {"name":"gpu","addresses":["GPU-5a1c...","GPU-77e0..."]}
# with the GPUs or MIG instances the NodeManager gave this container, read from, in order:
#   NVIDIA_VISIBLE_DEVICES  GPU or MIG UUIDs (or indices): what Spindle's NodeManager device plugin, and YARN's
#                           nvidia runtime, give Docker containers. "all" falls through to nvidia-smi.
#   CUDA_VISIBLE_DEVICES    the same, where a launcher sets it instead.
#   SPINDLE_GPU_ADDRESSES   comma-separated addresses set by hand (spark.executorEnv.SPINDLE_GPU_ADDRESSES), for
#                           clusters whose containers are told nothing, e.g. scripts/spindle-local's fake GPUs.
#   nvidia-smi              whole GPUs this container can open (the default runtime isolates whole GPUs by cgroup
#                           but does not name them). MIG instances cannot be found this way: use the Docker runtime.
# A share of a GPU (nvidia.com/gpu-milli) is one GPU, listed the same way; Spark knows it under a resource name of
# its own (not gpu, which Spark maps to whole GPUs): SPINDLE_GPU_RESOURCE=<name> prints that name instead of gpu.
# SPINDLE_GPU_ADDRESS_FORMAT=ordinal prints 0..n-1 instead (CUDA numbers the visible devices from 0; for libraries
# that want an ordinal). On a bad environment it prints {"name":"gpu","addresses":[],"error":"..."}, says the same
# on stderr and exits 1, so the executor fails at start with the reason in its log.
set -uo pipefail

RESOURCE=${SPINDLE_GPU_RESOURCE:-gpu}

fail() {
  local msg
  msg=$(printf '%s' "$1" | tr '\000-\037' ' ')
  msg=${msg//\\/\\\\}
  msg=${msg//\"/\\\"}
  printf '{"name":"%s","addresses":[],"error":"%s"}\n' "$RESOURCE" "$msg"
  echo "spindle-gpu-discovery: $1" >&2
  exit 1
}

# Splits a comma-separated device list into ADDRESSES (trimmed, duplicates dropped); $1 names the source.
take_list() {
  local source=$1 value=$2 item
  local -A seen=()
  ADDRESSES=()
  IFS=',' read -r -a items <<< "$value"
  for item in "${items[@]}"; do
    item=${item//[[:space:]]/}
    [[ -z $item ]] && continue
    if [[ ! $item =~ ^[A-Za-z0-9][A-Za-z0-9._:/-]*$ ]]; then
      fail "$source names a device '$item' that is not a GPU index or UUID"
    fi
    if [[ -z ${seen[$item]:-} ]]; then
      seen[$item]=1
      ADDRESSES+=("$item")
    fi
  done
  if (( ${#ADDRESSES[@]} == 0 )); then
    fail "$source is set but names no device ('$value')"
  fi
  SOURCE=$source
}

if [[ ! $RESOURCE =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ ]]; then
  RESOURCE=gpu
  fail "SPINDLE_GPU_RESOURCE='${SPINDLE_GPU_RESOURCE}' is not a Spark resource name (letters, digits, . _ -)"
fi

ADDRESSES=()
SOURCE=
nvd=${NVIDIA_VISIBLE_DEVICES-}
if [[ -n ${NVIDIA_VISIBLE_DEVICES+x} && $nvd != all ]]; then
  case $nvd in
    ''|none|void|NoDevFiles)
      fail "NVIDIA_VISIBLE_DEVICES='$nvd': the container was given no GPU (did the executor ask for yarn.io/gpu or the MIG resource? spark.executor.resource.gpu.amount, spark.yarn.resourceGpuDeviceName)" ;;
    *) take_list NVIDIA_VISIBLE_DEVICES "$nvd" ;;
  esac
elif [[ -n ${CUDA_VISIBLE_DEVICES+x} ]]; then
  if [[ -z $CUDA_VISIBLE_DEVICES || $CUDA_VISIBLE_DEVICES == -1 || $CUDA_VISIBLE_DEVICES == NoDevFiles ]]; then
    fail "CUDA_VISIBLE_DEVICES='$CUDA_VISIBLE_DEVICES': the container was given no GPU"
  fi
  take_list CUDA_VISIBLE_DEVICES "$CUDA_VISIBLE_DEVICES"
elif [[ -n ${SPINDLE_GPU_ADDRESSES+x} ]]; then
  take_list SPINDLE_GPU_ADDRESSES "$SPINDLE_GPU_ADDRESSES"
elif command -v nvidia-smi > /dev/null 2>&1; then
  # Rows of GPUs this container may open; GPUs it may not are reported as errors and left out.
  out=$(nvidia-smi --query-gpu=index,uuid,mig.mode.current --format=csv,noheader 2>&1)
  rc=$?
  while IFS=',' read -r index uuid mig; do
    index=${index//[[:space:]]/}
    uuid=${uuid//[[:space:]]/}
    mig=${mig//[[:space:]]/}
    [[ $index =~ ^[0-9]+$ && $uuid =~ ^GPU-[A-Za-z0-9-]+$ ]] || continue
    if [[ $mig == Enabled ]]; then
      continue # MIG instances of this GPU are not whole GPUs, and nothing says which one is ours
    fi
    ADDRESSES+=("$uuid")
  done <<< "$out"
  if (( ${#ADDRESSES[@]} == 0 )); then
    detail=$(head -c 300 <<< "$out" | tr '\n' ' ')
    fail "nvidia-smi (exit $rc) lists no whole GPU this container can use, and NVIDIA_VISIBLE_DEVICES, CUDA_VISIBLE_DEVICES and SPINDLE_GPU_ADDRESSES are unset: $detail"
  fi
  SOURCE=nvidia-smi
else
  fail "no GPU found: NVIDIA_VISIBLE_DEVICES, CUDA_VISIBLE_DEVICES and SPINDLE_GPU_ADDRESSES are unset and nvidia-smi is not on the PATH (does the NodeManager run Spindle's GPU plugin? for MIG, the Docker runtime)"
fi

format=${SPINDLE_GPU_ADDRESS_FORMAT:-uuid}
case $format in
  uuid) ;;
  ordinal)
    n=${#ADDRESSES[@]}
    ADDRESSES=()
    for (( i = 0; i < n; i++ )); do ADDRESSES+=("$i"); done ;;
  *) fail "SPINDLE_GPU_ADDRESS_FORMAT='$format': use uuid (default) or ordinal" ;;
esac

json=
for a in "${ADDRESSES[@]}"; do
  json+="${json:+,}\"$a\""
done
printf '{"name":"%s","addresses":[%s]}\n' "$RESOURCE" "$json"
echo "spindle-gpu-discovery: ${#ADDRESSES[@]} device(s) from $SOURCE" >&2
