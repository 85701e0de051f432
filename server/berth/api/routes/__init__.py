"""Routers: ``jobs`` (users), ``admin`` (operators), ``system`` (plan, cluster, events,
health, metrics)."""
