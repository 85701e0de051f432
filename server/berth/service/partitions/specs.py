"""What a partition is, as stored and as the operator writes it: a gang partition's
:class:`~berth.service.partitions.gang.GangSpec` or a backfilling one's :class:`BackfillSpec`
(its nodes, policy and options), and the name of the default partition.

Plain data, read by the engine, the store's restore and the API's schemas alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from berth.service.partitions.gang import GangSpec

#: The partition of every job that names none, and of every node no partition names.
DEFAULT_PARTITION = "default"


@dataclass(slots=True)
class BackfillSpec:
    """A backfilling partition: its nodes and policy."""

    name: str
    nodes: list[str]
    policy: str
    options: dict[str, object] = field(default_factory=dict)
    drained: bool = False

    def as_dict(self) -> dict[str, object]:
        return {"name": self.name, "nodes": list(self.nodes), "policy": self.policy,
                "options": dict(self.options), "drained": self.drained}  # fmt: skip


def spec_from_dict(row: Mapping[str, object]) -> GangSpec | BackfillSpec:
    """A stored partition: gang or backfilling, by its policy."""
    if row.get("policy", "gang") == "gang":
        return GangSpec.from_dict(row)
    nodes, options = row.get("nodes") or [], row.get("options") or {}
    assert isinstance(nodes, list)
    assert isinstance(options, dict)
    return BackfillSpec(str(row["name"]), [str(n) for n in nodes], str(row["policy"]),
                        dict(options), bool(row.get("drained", False)))  # fmt: skip
