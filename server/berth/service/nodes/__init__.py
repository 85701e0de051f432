"""Nodes in the engine: their records and what the engine tells them.

Owns the cluster of node records and the placement of pool jobs on nodes
(:mod:`~berth.service.nodes.cluster`), and the intents (start, kill, suspend, resume)
that the shell sends to the node backend once the state that causes them is committed
(:mod:`~berth.service.nodes.intents`). The node commands (add, drain, down, resize)
are handlers (:mod:`berth.service.handlers.node_commands`). No I/O.
"""
