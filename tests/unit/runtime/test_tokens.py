"""Tokens are kept as digests: configured ones hashed when read, ``sha256:`` entries as
given, node tokens from the engine's table; roles decide what a token may call."""

from __future__ import annotations

from pathlib import Path

import pytest

from berth.api.auth import Tokens
from berth.api.principals import Principal, Role, digest, new_token, parse_tokens
from berth.service.model import RequestError


def test_configured_tokens_are_kept_only_as_digests() -> None:
    table = parse_tokens(f"secret:alice:user,sha256:{digest('other')}:ops:operator")
    assert "secret" not in table
    assert table[digest("secret")] == Principal("alice", Role.USER)
    tokens = Tokens(table)
    assert tokens.resolve("Bearer other") == Principal("ops", Role.OPERATOR)
    with pytest.raises(RequestError):
        tokens.resolve(f"Bearer {digest('secret')}")  # the digest is not a token


def test_node_tokens_come_from_the_live_table() -> None:
    node_tokens: dict[str, str] = {}
    tokens = Tokens({}, node_tokens)
    with pytest.raises(RequestError):
        tokens.resolve("Bearer n1-token")
    node_tokens[digest("n1-token")] = "n1"  # issued after start-up
    assert tokens.resolve("Bearer n1-token") == Principal("n1", Role.NODE)


@pytest.mark.parametrize(
    ("bad", "fragment"),
    [("sha256:abc:u:user", "64 lowercase hex"), ("t:u:root", "role must be"), (":u", "TOKEN:USER")],
)
def test_bad_token_entries_are_refused(bad: str, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        parse_tokens(bad)


def test_a_token_given_without_its_user_is_not_shown_whole() -> None:
    """The entry is then the secret itself, and the error reaches the service's log."""
    secret = new_token("user")
    with pytest.raises(ValueError, match="TOKEN:USER") as refused:
        parse_tokens(f"t1:alice,{secret}")
    message = str(refused.value)
    assert secret not in message
    assert message.endswith(f"got 'berth-... ({len(secret)} characters)'")


def test_new_tokens_say_what_they_are_and_never_look_like_an_option() -> None:
    tokens = {new_token("node") for _ in range(200)}
    assert len(tokens) == 200
    assert all(t.startswith("berth-node-") and len(t) == len("berth-node-") + 43 for t in tokens)


def test_a_data_dir_with_plain_tokens_is_moved_to_digests(tmp_path: Path) -> None:
    from berth.runtime.bootstrap import load_tokens
    from berth.runtime.settings import load_settings

    (tmp_path / "tokens").write_text("old-op:admin:operator\nold-user:demo:user\n")
    tokens, _ = load_tokens(load_settings(data_dir=tmp_path), {})
    stored = (tmp_path / "tokens").read_text()
    assert "old-op" not in stored
    assert stored.count("sha256:") == 2
    assert tokens.resolve("Bearer old-op") == Principal("admin", Role.OPERATOR)
    assert tokens.token_for(Role.USER) == "old-user"  # the local copy, for the demo
    assert (tmp_path / "credentials").stat().st_mode & 0o777 == 0o600


def test_configured_node_tokens_speak_for_their_node() -> None:
    tokens = Tokens(parse_tokens("n7-secret:node007:node"))
    assert tokens.resolve("Bearer n7-secret") == Principal("node007", Role.NODE)
