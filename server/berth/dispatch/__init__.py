"""Node backends: where the engine's start, kill, suspend and resume decisions go.

``EmulatedNodes`` runs jobs in-process on the cluster clock. Real node agents (over
HTTP) implement the same :class:`berth.service.ports.NodeBackend` port.
"""
