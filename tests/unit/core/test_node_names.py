"""Numbered nodes' names sort in number order, however many there are: the same names
from ``--nodes`` (the daemon and the emulator) and a JSONL workload's node groups."""

from __future__ import annotations

from pathlib import Path

import pytest

from berth.core.shapes import node_names, parse_node_groups
from berth.emulate.traces import read_workload
from berth.runtime.options import node_cluster, node_group


@pytest.mark.parametrize(
    ("count", "first", "last"),
    [(1, "node001", "node001"), (999, "node001", "node999"), (1000, "node0001", "node1000"),
     (4096, "node0001", "node4096"), (10_000, "node00001", "node10000")],
)  # fmt: skip
def test_names_have_the_digits_the_count_needs_and_sort_in_number_order(
    count: int, first: str, last: str
) -> None:
    names = node_names(count)
    assert (len(names), names[0], names[-1]) == (count, first, last)
    assert sorted(names) == names
    assert len(set(names)) == count


def test_node_groups_are_named_over_all_their_nodes() -> None:
    nodes = parse_node_groups("600x cpus=1; 500x cpus=2,gpus=1")
    assert list(nodes)[:2] == ["node0001", "node0002"]
    assert sorted(nodes) == list(nodes)
    assert (nodes["node0600"], nodes["node0601"]) == ({"cpus": 1}, {"cpus": 2, "gpus": 1})
    groups = [node_group("600x cpus=1"), node_group("500x cpus=2,gpus=1")]
    assert node_cluster(groups) == nodes  # (berth serve --nodes, group by group)
    assert list(parse_node_groups("16x cpus=32")) == [f"node{i:03d}" for i in range(1, 17)]


def test_a_workloads_numbered_nodes_count_its_named_ones(tmp_path: Path) -> None:
    path = tmp_path / "nodes.jsonl"
    path.write_text(
        '{"nodes": [{"name": "login", "resources": {"cpus": 2}}, '
        '{"count": 999, "resources": {"cpus": 4}}]}\n'
        '{"id": 1, "submit": 0, "runtime": 5, "estimate": 9, "resources": {"cpus": 3}}\n'
    )
    nodes = read_workload(path).nodes
    assert nodes is not None
    assert list(nodes)[:3] == ["login", "node0002", "node0003"]
    assert list(nodes)[-1] == "node1000"
    assert len(nodes) == 1000
