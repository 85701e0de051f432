"""Partitions: named sets of nodes, each with its own policy, gang partitions included.

Owns what a partition is (:mod:`~berth.service.partitions.specs`), the partitions the
engine has and what it looks up about them (:mod:`~berth.service.partitions.registry`),
and a gang partition's time-slot matrix in time (:mod:`~berth.service.partitions.gang`).
The operator commands on partitions are handlers
(:mod:`berth.service.handlers.partition_commands`). No I/O.
"""
