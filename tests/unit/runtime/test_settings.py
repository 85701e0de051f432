"""Settings: layering of flags, environment and TOML; node specs; the example config."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from berth.runtime.settings import load_settings, parse_nodes

ROOT = Path(__file__).resolve().parents[3]


def test_the_example_config_loads() -> None:
    settings = load_settings(ROOT / "deploy" / "berth.example.toml")
    assert settings.policy_options == {"selection": "bb"}
    assert len(parse_nodes(settings.nodes)) == 36
    assert settings.url().startswith("postgresql://")


def test_flags_beat_environment_beat_toml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "berth.toml"
    config.write_text('port = 9000\npolicy = "easy"\nhost = "0.0.0.0"\n')
    monkeypatch.setenv("BERTH_PORT", "9100")
    settings = load_settings(config, policy="qops")
    assert (settings.port, settings.policy, settings.host) == (9100, "qops", "0.0.0.0")


def test_defaults_need_no_configuration(tmp_path: Path) -> None:
    settings = load_settings(data_dir=tmp_path)
    assert settings.url() == f"sqlite:///{tmp_path / 'berth.db'}"
    assert [n.name for n in parse_nodes(settings.nodes)][-1] == "node016"


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("x cpus=4", "must start with 'COUNTx'"),
        ("2x cpus=0", "POSITIVE_INTEGER"),
        ("", "at least one node"),
    ],
)
def test_bad_node_specs_name_the_problem(spec: str, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        parse_nodes(spec)


def test_bad_settings_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="time_scale"):
        load_settings(data_dir=tmp_path, time_scale=0)
    with pytest.raises(ValueError, match="does not exist"):
        load_settings(tmp_path / "missing.toml")


@pytest.mark.parametrize(
    ("toml", "flags", "line"),
    [
        ("", {"port": 99999}, "--port (BERTH_PORT, TOML port): must be <= 65535, got 99999"),
        ("", {"time_scale": 0}, "--time-scale (BERTH_TIME_SCALE, TOML time_scale): must be > 0"),
        ("polcy = 'easy'\n", {}, "unknown setting 'polcy' (TOML key or BERTH_ variable)"),
        ("port = 'x'\n", {}, "--port (BERTH_PORT, TOML port): input should be a valid integer"),
        ("reconcile_seconds = 0\n", {}, "reconcile_seconds (BERTH_RECONCILE_SECONDS): must be > 0"),
        ("port = \n", {}, "berth.toml: Invalid value (at line 1, column 8)"),
        ("", {"nodes": "3y"}, "--nodes (BERTH_NODES, TOML nodes): node group '3y' must start"),
        (
            "",
            {"tokens": "abc"},
            "--tokens (BERTH_TOKENS, TOML tokens): token entries are TOKEN:USER[:ROLE], got 'abc'",
        ),
    ],
)
def test_a_bad_setting_is_one_line_naming_the_option(
    tmp_path: Path, toml: str, flags: dict[str, object], line: str
) -> None:
    """Never pydantic's dump: one line per problem, naming the flag, the environment
    variable and the TOML key, and what is accepted."""
    config = tmp_path / "berth.toml"
    config.write_text(toml)
    with pytest.raises(ValueError, match=re.escape(line)) as raised:
        load_settings(config, data_dir=tmp_path, **flags)
    message = str(raised.value)
    assert line in message
    assert "\n" not in message
    assert "pydantic" not in message
    assert "validation error" not in message


def test_the_configured_tokens_name_the_file_they_could_not_use(tmp_path: Path) -> None:
    """What ``berth serve`` checks before its web stack loads: an unreadable tokens file
    or a bad entry in it is one line naming the setting and the file."""
    tokens = tmp_path / "tokens"
    settings = load_settings(data_dir=tmp_path, tokens="t0:carol", tokens_file=tokens)
    where = f"tokens_file (BERTH_TOKENS_FILE, TOML tokens_file) {tokens}: "
    with pytest.raises(ValueError, match=re.escape(where + "cannot read it: No such file")):
        settings.configured_tokens()
    tokens.write_text("t1:alice:user\nt2:bob:root\n")
    with pytest.raises(ValueError, match=re.escape(where + "role must be one of")):
        settings.configured_tokens()
    tokens.write_text("t1:alice:user\nt2:bob:operator\n")
    users = sorted((p.user, p.role.value) for p in settings.configured_tokens().values())
    assert users == [("alice", "user"), ("bob", "operator"), ("carol", "user")]


@pytest.mark.parametrize(
    ("flags", "fragment"),
    [
        ({"time_scale": 60}, "--time-scale must stay 1"),
        ({"agent_timeout": 60, "fence_seconds": 30}, "fence_seconds must exceed"),
    ],
)
def test_agents_settings_that_cannot_work_are_refused(
    tmp_path: Path, flags: dict[str, Any], fragment: str
) -> None:
    with pytest.raises(ValueError, match=fragment):
        load_settings(data_dir=tmp_path, backend="agents", **flags)


@pytest.mark.parametrize("policy", ["fcfs", "easy", "conservative", "qops", "msb", "mrt", "slack"])
def test_agents_run_every_policy_on_their_nodes(tmp_path: Path, policy: str) -> None:
    assert load_settings(data_dir=tmp_path, backend="agents", policy=policy).policy == policy
    balanced = load_settings(
        data_dir=tmp_path, backend="agents", policy="easy", policy_options={"selection": "bb"}
    )
    assert balanced.policy_options == {"selection": "bb"}


def test_agents_start_with_no_nodes_of_their_own(tmp_path: Path) -> None:
    assert load_settings(data_dir=tmp_path, backend="agents").default_nodes() == []
    assert len(load_settings(data_dir=tmp_path).default_nodes()) == 16


def test_the_agent_unit_runs_a_valid_agent_command() -> None:
    """Checked statically (no systemd here): the command parses, and stopping the agent
    leaves the jobs' shepherds alone."""
    import argparse

    from berth.agent.cli import add_arguments

    unit = (ROOT / "deploy" / "berth-agent.service").read_text()
    exec_start = next(line for line in unit.splitlines() if line.startswith("ExecStart="))
    argv = exec_start.removeprefix("ExecStart=").split()
    assert argv[0].endswith("/berth-agent")  # the lean agent's command
    parser = argparse.ArgumentParser(exit_on_error=False)
    add_arguments(parser)
    args = parser.parse_args(argv[1:])
    assert args.token_file == Path("/etc/berth/agent.token")
    lines = unit.splitlines()
    assert "KillMode=process" in lines
    assert "Delegate=yes" in lines  # its cgroup v2 subtree, for confining jobs
    assert not any(line.startswith(("ProtectKernelTunables", "ProtectControlGroups"))
                   for line in lines)  # fmt: skip


def test_policy_option_flags_become_the_policy_options(tmp_path: Path) -> None:
    """``--policy-option NAME=VALUE`` (repeatable): numbers read as numbers, words kept as
    text, each key winning over the TOML's (the others kept)."""
    import argparse

    from berth.runtime.serve import add_commands

    parser = argparse.ArgumentParser()
    add_commands(parser.add_subparsers())
    config = tmp_path / "berth.toml"
    config.write_text('[policy_options]\nselection = "bl"\nk_factor = 7\n')
    flags = ["--policy-option", "k_factor=3", "--policy-option", "heuristic=llf"]
    flags += ["--policy-option", "relaxation=2.5", "--policy-option", "heuristic=edf"]
    args = parser.parse_args(
        ["serve", "--config", str(config), "--data-dir", str(tmp_path), *flags]
    )
    from berth.runtime.serve import _settings

    options = _settings(args).policy_options
    assert options == {"selection": "bl", "k_factor": 3, "heuristic": "edf", "relaxation": 2.5}
    assert isinstance(options["k_factor"], int)
    bare = parser.parse_args(["serve", "--config", str(config), "--data-dir", str(tmp_path)])
    assert _settings(bare).policy_options == {"selection": "bl", "k_factor": 7}


@pytest.mark.parametrize("text", ["selection", "=bb", " =3"])
def test_a_policy_option_without_a_key_and_value_is_refused(text: str) -> None:
    import argparse

    from berth.runtime.serve import policy_option_arg

    with pytest.raises(argparse.ArgumentTypeError, match="expected NAME=VALUE"):
        policy_option_arg(text)
