#!/bin/sh
# A stand-in for nvidia-smi in tests: prints the recorded output that matches its arguments and appends every
# `mig` invocation to <fixture-dir>/mig.log, so a test can assert the exact command sequence.
#
# Usage: fake-nvidia-smi.sh <fixture-dir> <nvidia-smi arguments...>
#   <fixture-dir>/query.xml  for `-q -x`        <fixture-dir>/list.txt  for `-L`
#   <fixture-dir>/topo.txt   for `topo -m`      <fixture-dir>/lgi.txt   for `mig -lgi`
#   <fixture-dir>/nvlink-s.txt for `nvlink -s`
#   <name>.exit              exit code to return after printing <name> (default 0)
#   mig-fails                if present, a `mig` command containing its first line fails with exit code 1
# After the first `mig ... -cgi` (instance creation) the fake serves <fixture-dir>/after-reconfigure/<name> when that
# file exists: the node as it looks once the layout was applied.
dir=$1
shift
state=$dir
if [ -f "$dir/reconfigured" ] && [ -d "$dir/after-reconfigure" ]; then
  state=$dir/after-reconfigure
fi

print() {
  file=$state/$1
  [ -f "$file" ] || file=$dir/$1
  if [ ! -f "$file" ]; then
    echo "fake nvidia-smi: no fixture $1 in $dir" >&2
    exit 9
  fi
  cat "$file"
  if [ -f "$file.exit" ]; then
    exit "$(cat "$file.exit")"
  fi
  exit 0
}

case "$*" in
  "-q -x") print query.xml ;;
  "-L") print list.txt ;;
  "topo -m") print topo.txt ;;
  "nvlink -s") print nvlink-s.txt ;;
  "mig -lgi") print lgi.txt ;;
  mig\ *)
    echo "$*" >> "$dir/mig.log"
    if [ -f "$dir/mig-fails" ]; then
      pattern=$(head -n 1 "$dir/mig-fails")
      case "$*" in
        *"$pattern"*)
          echo "Unable to create a GPU instance on GPU  0 using profile 5: Insufficient Resources" >&2
          exit 1
          ;;
      esac
    fi
    case "$*" in
      *-cgi*)
        touch "$dir/reconfigured"
        echo "Successfully created GPU instance on GPU  0"
        ;;
      *) echo "Successfully destroyed instances on GPU  0" ;;
    esac
    ;;
  *)
    echo "fake nvidia-smi: unexpected arguments: $*" >&2
    exit 2
    ;;
esac
