"""The dry-run emulator: replays workloads through the core on a virtual clock.

It reads traces (Standard Workload Format, JSONL), drives a policy with events in the
normative order, emulates nodes that finish jobs at their real runtime (or kill them at
their estimate), and reports the standard metrics. It never imports the runtime shell.
"""
