#!/usr/bin/env bash
# Hadoop topology script (net.topology.script.file.name) for Spindle: prints the rack path of each host name or
# IP address it is given, one per argument, in order, separated by spaces, as Hadoop's ScriptBasedMapping expects.
# Spindle reads the paths' segments as its topology levels (yarn.scheduler.spindle.topology.levels, e.g.
# spine,rack for /spine1/rack3), so every path must have the same number of segments.
#
# The table: SPINDLE_TOPOLOGY_TABLE, else topology.table beside this script. One "<host-or-ip> <rack-path>" per
# line; '#' starts a comment; blank lines are ignored. List a node under the name its NodeManager registers with
# (its NodeId host, usually the canonical host name) and, to be safe, its IP address too. This is the format of
# Hadoop's TableMapping (net.topology.table.file.name), so one table serves both.
#
#   # conf/topology.table
#   gpu-a01.example.com  /spine1/rack1
#   10.1.1.11            /spine1/rack1
#   gpu-b01.example.com  /spine1/rack2
#
# A host not in the table gets the path of the table's "*" line if it has one; otherwise /default-rack, with a
# /default segment in front for each further level of the table's deepest path (/default/default-rack for a
# two-level table), because HDFS refuses a topology whose paths differ in depth. No table: /default-rack for all.
# Needs bash 4.
set -u
table="${SPINDLE_TOPOLOGY_TABLE:-$(dirname "$0")/topology.table}"
declare -A rack
depth=1
if [[ -r "$table" ]]; then
  while read -r host path _; do
    [[ -z "$host" || "$host" == \#* || -z "${path:-}" ]] && continue
    rack["$host"]="$path"
    slashes="${path//[^\/]/}"
    (( ${#slashes} > depth )) && depth=${#slashes}
  done < "$table"
fi
default="${rack["*"]:-}"
if [[ -z "$default" ]]; then
  default="/default-rack"
  for (( i = 1; i < depth; i++ )); do default="/default$default"; done
fi
out=()
for host in "$@"; do
  out+=("${rack[$host]:-$default}")
done
echo "${out[*]}"
