"""Daemon settings (pydantic-settings): flags > ``BERTH_*`` environment > TOML file >
defaults. With no configuration at all the daemon runs an embedded SQLite file and an
emulated cluster of 16 nodes of ``cpus=32,mem_gb=128`` under conservative backfilling.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from berth.api.principals import Principal, parse_tokens
from berth.core.shapes import parse_node_groups
from berth.service.model import NodeRecord


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="BERTH_", extra="forbid")

    data_dir: Path = Field(
        Path("berth-data"), description="database file (SQLite) and generated tokens"
    )
    database_url: str | None = Field(
        None, description="SQLAlchemy URL; default: SQLite in data_dir"
    )
    host: str = "127.0.0.1"
    port: int = Field(8080, ge=0, le=65535)
    policy: str = "conservative"
    #: Any values: the policy's constructor checks each, naming it (a pydantic union
    #: would give one line per type it tried).
    policy_options: dict[str, object] = Field(default_factory=dict)
    nodes: str = Field(
        "16x cpus=32,mem_gb=128", description="'COUNTx NAME=AMOUNT,...' groups separated by ';'"
    )
    backend: Literal["emulated", "agents"] = Field(
        "emulated", description="emulated nodes, or nodes run by node agents (berth agent)"
    )
    agent_timeout: float = Field(60.0, gt=0, description="a silent agent's node goes down after")
    agent_grace: float = Field(
        300.0, ge=0, description="after a daemon start, seconds before silence counts"
    )
    fence_seconds: float = Field(
        1800.0, gt=0, description="an agent cut off this long cancels its jobs"
    )
    kill_grace: float = Field(30.0, ge=0, le=3600, description="SIGTERM to SIGKILL, seconds")
    sync_wait: float = Field(10.0, gt=0, le=300, description="longest an agent's sync is held")
    time_scale: float = Field(
        1.0, gt=0, le=1_000_000, description="emulated cluster seconds per wall second"
    )
    tokens: str = Field("", description="TOKEN:USER:ROLE entries separated by commas")
    tokens_file: Path | None = None
    token_key: Path | None = Field(
        None,
        description="this daemon's private key for the tokens it issues (Ed25519 PEM; "
        "default: data_dir/token-key.pem, made at first start)",
    )
    trust_keys: str = Field(
        "", description="public keys of login nodes' berth authd, PEM files separated by commas"
    )
    reconcile_seconds: float = Field(30.0, gt=0)
    ha: bool = Field(
        False, description="high availability: several daemons on one PostgreSQL, one leads"
    )
    lease_seconds: float = Field(
        6.0, ge=1, le=300, description="HA: the leader's lease; a standby takes over after it"
    )
    advertise_url: str | None = Field(
        None, description="HA: the URL standbys send clients to (default http://host:port)"
    )
    event_retention_days: float = Field(
        7.0, gt=0, description="events older than this are pruned (hourly)"
    )
    max_body_bytes: int = Field(
        1 << 20, ge=1024, le=1 << 30, description="largest request body read (413 above)"
    )
    submit_rate: float = Field(
        100.0, ge=0, description="submits a second per user token (429 above); 0: no limit"
    )
    submit_burst: int = Field(1000, ge=1, le=1_000_000, description="submits at once above it")
    sqlite_synchronous: Literal["FULL", "NORMAL"] = "FULL"
    log_level: Literal["critical", "error", "warning", "info", "debug"] = "info"
    log_format: Literal["text", "json"] = Field(
        "text", description="the log's lines: readable text, or one JSON object each"
    )
    access_log: bool = Field(False, description="log every HTTP request (uvicorn's access log)")
    stall_report_ms: float = Field(
        0.0, ge=0, description="log what held the event loop when a turn waited longer; 0: off"
    )

    @field_validator("nodes")
    @classmethod
    def _nodes_parse(cls, value: str) -> str:
        parse_nodes(value)
        return value

    @field_validator("tokens")
    @classmethod
    def _tokens_parse(cls, value: str) -> str:
        parse_tokens(value)  # (a mistyped entry is answered before the web stack loads)
        return value

    @model_validator(mode="after")
    def _ha_needs_postgresql(self) -> Settings:
        if self.ha and not self.url().startswith("postgresql"):
            raise ValueError(
                "high availability needs PostgreSQL (--database-url postgresql://...): "
                "SQLite is the single-node default"
            )
        return self

    @model_validator(mode="after")
    def _agents_run_real_time(self) -> Settings:
        if self.backend == "agents":
            if self.time_scale != 1:
                raise ValueError("node agents run real processes: --time-scale must stay 1")
            if self.fence_seconds <= self.agent_timeout:
                raise ValueError(
                    "fence_seconds must exceed agent_timeout: an agent must not give up "
                    "its jobs before the daemon declares its node down"
                )
        return self

    def default_nodes(self) -> list[NodeRecord]:
        """The nodes of a fresh store: the emulated cluster, or none (agents bring theirs)."""
        return parse_nodes(self.nodes) if self.backend == "emulated" else []

    def configured_tokens(self) -> dict[str, Principal]:
        """The static tokens of ``tokens`` and ``tokens_file`` (digest -> principal);
        ``ValueError`` naming the file for one that cannot be read or holds a bad
        entry."""
        table = parse_tokens(self.tokens)
        if self.tokens_file is not None:
            where = f"tokens_file (BERTH_TOKENS_FILE, TOML tokens_file) {self.tokens_file}"
            try:
                text = self.tokens_file.read_text()
            except (OSError, UnicodeDecodeError) as error:
                reason = getattr(error, "strerror", None) or error
                raise ValueError(f"{where}: cannot read it: {reason}") from None
            try:
                table.update(parse_tokens(text))
            except ValueError as error:
                raise ValueError(f"{where}: {error}") from None
        return table

    def url(self) -> str:
        return self.database_url or f"sqlite:///{self.data_dir / 'berth.db'}"


def parse_nodes(spec: str) -> list[NodeRecord]:
    """``16x cpus=32,mem_gb=128; 2x cpus=32,gpus=4`` -> node001 ... node018."""
    return [NodeRecord(name, amounts) for name, amounts in parse_node_groups(spec).items()]


def load_settings(config: Path | None = None, **flags: Any) -> Settings:
    """Settings from ``flags`` (``None`` values ignored), the environment and ``config``.

    Raises ``ValueError`` with one line per problem, each naming the setting as a flag,
    an environment variable and a TOML key, and what it accepts (never pydantic's dump).
    """
    import tomllib

    from pydantic import ValidationError

    if config is not None and not config.is_file():
        raise ValueError(f"config file {config} does not exist")
    try:
        return _load(config, flags)
    except ValidationError as error:
        raise ValueError(settings_problems(error)) from None
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"config file {config}: {error}") from None


def settings_problems(error: Any) -> str:
    """A pydantic ``ValidationError`` of :class:`Settings` as one line per problem."""
    lines = [_problem_line(problem) for problem in error.errors(include_url=False)]
    return "\n".join(dict.fromkeys(lines))


def _problem_line(problem: Any) -> str:
    where = ".".join(str(part) for part in problem.get("loc", ()))
    kind = problem.get("type", "")
    context = problem.get("ctx") or {}
    given = problem.get("input")
    if kind == "extra_forbidden":
        known = ", ".join(sorted(Settings.model_fields))
        return f"unknown setting {where!r} (TOML key or BERTH_ variable); known: {known}"
    message = str(problem.get("msg", "invalid"))
    if kind == "value_error":
        message = str(context.get("error", message.removeprefix("Value error, ")))
    elif kind in _LIMITS:
        key, reads = _LIMITS[kind]
        message = f"must be {reads} {context.get(key)}"
    elif kind == "literal_error":
        message = f"must be {context.get('expected', 'one of the listed values')}"
    else:
        message = message[0].lower() + message[1:]
    if not where:
        return message
    name = where.split(".")[0]
    flag = _FLAGS.get(name, f"--{name.replace('_', '-')}")
    option = (
        f"{flag} (BERTH_{name.upper()}, TOML {name})" if flag else f"{name} (BERTH_{name.upper()})"
    )
    shown = (
        "" if kind in ("missing", "value_error") or isinstance(given, dict) else f", got {given!r}"
    )
    return f"{option}: {message}{shown}"


#: Settings whose flag is not ``--`` and their name ("": no flag, only TOML and the
#: environment).
_FLAGS = {
    "fence_seconds": "--fence",
    "backend": "--agents/--emulate",
    "reconcile_seconds": "",
    "sqlite_synchronous": "",
    "policy_options": "--policy-option",
    "tokens_file": "",
}

#: pydantic's bound errors: the context key of the bound, and how it reads.
_LIMITS = {
    "greater_than": ("gt", ">"),
    "greater_than_equal": ("ge", ">="),
    "less_than": ("lt", "<"),
    "less_than_equal": ("le", "<="),
}


def _load(config: Path | None, flags: dict[str, Any]) -> Settings:

    class _Layered(Settings):
        @classmethod
        def settings_customise_sources(
            cls,
            settings_cls: type[BaseSettings],
            init_settings: PydanticBaseSettingsSource,
            env_settings: PydanticBaseSettingsSource,
            dotenv_settings: PydanticBaseSettingsSource,
            file_secret_settings: PydanticBaseSettingsSource,
        ) -> tuple[PydanticBaseSettingsSource, ...]:
            del dotenv_settings, file_secret_settings  # no .env files, no secrets dir
            sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
            if config is not None:
                sources.append(TomlConfigSettingsSource(settings_cls, toml_file=config))
            return tuple(sources)

    return _Layered(**{k: v for k, v in flags.items() if v is not None})
