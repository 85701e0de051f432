"""The command table: every command a group registers is listed with its group and help,
and a parser built for one group parses that group's commands as the whole parser does."""

from __future__ import annotations

import argparse

import pytest

from berth.runtime.commands import COMMANDS, GROUPS, groups_named
from berth.runtime.main import build_parser


def _subparsers(parser: argparse.ArgumentParser) -> argparse._SubParsersAction:  # type: ignore[type-arg]
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))


def test_the_table_lists_exactly_the_commands_the_groups_register() -> None:
    whole = _subparsers(build_parser())
    assert set(whole.choices) == set(COMMANDS)
    for group in GROUPS:
        alone = _subparsers(build_parser({group}))
        with_arguments = {name for name, p in alone.choices.items() if p.get_default("run")}
        assert with_arguments == {n for n, (g, _) in COMMANDS.items() if g == group}, group


def test_every_command_is_listed_with_its_help_whichever_group_is_built() -> None:
    for groups in (None, set(), {"client"}, {"emulate"}):
        listed = {a.dest: a.help for a in _subparsers(build_parser(groups))._choices_actions}
        assert listed == {name: text for name, (_, text) in COMMANDS.items()}, groups


@pytest.mark.parametrize(
    "argv",
    [
        ["queue", "--url", "http://h:1", "--state", "RUNNING"],
        ["cancel", "3", "4", "--array"],
        ["emulate", "w.swf", "--policy", "qops", "--k-factor", "3"],
        ["serve", "--port", "9000", "--agents"],
        ["db", "upgrade"],
        ["agent", "--url", "http://h:1", "--name", "n1"],
    ],
)
def test_a_parser_for_the_named_group_parses_as_the_whole_one(argv: list[str]) -> None:
    assert len(groups_named(argv)) == 1
    alone = vars(build_parser(groups_named(argv)).parse_args(argv))
    whole = vars(build_parser().parse_args(argv))
    assert alone == whole


def test_no_group_is_named_by_options_or_an_unknown_word() -> None:
    assert groups_named(["--help"]) == set()
    assert groups_named(["nosuch", "queue"]) == set()
    assert groups_named(["-h", "show", "3"]) == {"client"}
