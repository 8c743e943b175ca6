#!/usr/bin/env python3
"""Prints a simulator report.json as the Markdown table docs/benchmarks.md uses for the ordering benchmarks.

Usage: scripts/lib/sim-table.py REPORT.json [REPORT.json ...]
Each policy's inputs (which run times it sees) are read from its name: 'runtimes' declares them (exact, or what
--declared-runtime gave), 'shortest' or 'learned' without 'runtimes' learns them, anything else sees none.
"""
import json
import sys


def inputs(policy, declared):
    if policy.startswith('spindle+') or policy == 'spindle' or '+runtimes' in policy:
        return 'true durations' if declared == 'exact' else declared + ' declared'
    if '+shortest' in policy or '+learned' in policy:
        return 'learned'
    return 'none'


def main():
    print('| policy | run times seen | JCT mean / p50 / p99 (s) | queue mean / p99 / max (s) | jobs preempted | '
          'GPU-h lost to preemption |')
    print('|---|---|---|---|---|---|')
    for path in sys.argv[1:]:
        report = json.load(open(path))
        declared = report.get('options', {}).get('declaredRuntime', 'exact')
        for run in report['runs']:
            j, q, p = run['jctSeconds'], run['queueDelaySeconds'], run['preemption']
            print('| %s | %s | %s / %s / %s | %s / %s / %s | %s | %.1f |' % (
                run['policy'], inputs(run['policy'], declared), f"{j['mean']:,.0f}", f"{j['p50']:,.0f}",
                f"{j['p99']:,.0f}", f"{q['mean']:,.0f}", f"{q['p99']:,.0f}", f"{q['max']:,.0f}",
                f"{p['jobsPreempted']:,}", p['wastedGpuHours']))


if __name__ == '__main__':
    main()
