"""Command handlers: one function per typed command, working through the engine's parts.

Jobs (submit, cancel, hold, release, priority: :mod:`~berth.service.handlers.
job_commands`), arrays (:mod:`~berth.service.handlers.arrays`), nodes
(:mod:`~berth.service.handlers.node_commands`), the node agents' protocol
(:mod:`~berth.service.handlers.agents`), partitions
(:mod:`~berth.service.handlers.partition_commands`) and the policy change
(:mod:`~berth.service.handlers.policy_commands`). Each takes the engine and the time and
leaves its changes in the engine's outbox; :mod:`berth.service.commands` routes the
typed commands to them. No I/O.
"""
