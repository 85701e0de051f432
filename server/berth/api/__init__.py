"""The REST API under ``/v1`` (FastAPI): schemas, auth, error envelope and routes.

A thin shell: every change goes through the service coordinator; reads come from the
engine's records. ``create_app`` is the factory; ``berth.runtime`` wires it.
"""
