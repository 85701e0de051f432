"""Settings: layering of flags, environment and TOML; node specs; the example config."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

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
    with pytest.raises(ValidationError, match="time_scale"):
        load_settings(data_dir=tmp_path, time_scale=0)
    with pytest.raises(ValueError, match="does not exist"):
        load_settings(tmp_path / "missing.toml")
