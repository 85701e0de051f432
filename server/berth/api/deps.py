"""Dependencies as ``Annotated`` aliases: the daemon context, the caller, operators only.

Every dependency is ``async def`` though none awaits anything: FastAPI runs a plain
``def`` dependency in a worker thread, and those thread hops (one per dependency, five
or so per request) cost more CPU than the rest of a submission's route."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, TypeVar

from fastapi import Depends, Path, Query, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from berth.api.auth import Tokens
from berth.api.limits import Limits, SubmitRate
from berth.api.principals import Principal, Role
from berth.api.what_if_turns import Turns
from berth.service.coordinator import Coordinator
from berth.service.engine import Engine
from berth.service.handlers.agents import AgentNodes
from berth.service.model import RequestError
from berth.service.queries.answers import WHAT_IF_FORECASTS

if TYPE_CHECKING:
    from berth.api.waiters import Waiters

#: The largest number a job id, an event id or a time may be (the store's BIGINT).
MAX_NUMBER = (1 << 63) - 1
JobId = Annotated[int, Path(ge=1, le=MAX_NUMBER, description="the job's number")]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Page:
    """One page of a list: ``limit`` items from ``offset`` (``?limit=&offset=``)."""

    limit: int
    offset: int

    def of(self, items: Sequence[T]) -> list[T]:
        return list(items[self.offset : self.offset + self.limit])


async def _page(
    limit: Annotated[int, Query(ge=1, le=10_000, description="items per page")] = 1000,
    offset: Annotated[int, Query(ge=0, le=MAX_NUMBER, description="items skipped")] = 0,
) -> Page:
    return Page(limit, offset)


PageDep = Annotated[Page, Depends(_page)]

#: ``(engine, policy, options, now) -> dry-run report``, wired by the runtime (it runs
#: the emulator, which the API layer may not import).
DryRun = Callable[[Engine, str, dict[str, object], int], Awaitable[dict[str, object]]]


@dataclass(slots=True)
class Daemon:
    """What the routes need: the single writer (and its engine), tokens, the dry run."""

    coordinator: Coordinator
    tokens: Tokens
    dry_run: DryRun | None = None
    #: The node agents, when the daemon runs them (``serve --agents``).
    agents: AgentNodes | None = None
    waiters: Waiters | None = None
    limits: Limits = field(default_factory=Limits)
    #: The event loop's late turns so far and its worst lateness (seconds), if watched.
    loop_lag: Callable[[], tuple[int, float]] | None = None
    #: Each user token's submit bucket (from ``limits``).
    submits: SubmitRate = field(init=False)
    #: The turns what-ifs' forecasts take (:mod:`berth.api.what_if_turns`).
    what_if_turns: Turns = field(init=False)

    def __post_init__(self) -> None:
        self.submits = SubmitRate(self.limits.submit_rate, self.limits.submit_burst)
        self.what_if_turns = Turns(WHAT_IF_FORECASTS)

    @property
    def engine(self) -> Engine:
        return self.coordinator.engine

    def now(self) -> int:
        return self.coordinator.clock.now()

    def end_long_requests(self) -> None:
        """The daemon stops: answer the agents' held syncs and end every event stream
        now, and hold no sync from here on (the web server waits for open requests)."""
        if self.waiters is not None:
            self.waiters.release_all()
        self.coordinator.events.close()


def daemon_of(request: Request) -> Daemon:
    daemon: Daemon = request.app.state.daemon
    return daemon


async def _daemon(request: Request) -> Daemon:
    return daemon_of(request)


DaemonDep = Annotated[Daemon, Depends(_daemon)]

_bearer = HTTPBearer(auto_error=False, description="a token from the daemon's token table")


#: The caller's ``Authorization: Bearer`` credentials (also the OpenAPI security scheme).
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]


def caller(request: Request) -> Principal:
    """Whoever the ``Authorization: Bearer`` token belongs to; 401 without a known one.
    Read from the header itself: the ``Credentials`` dependency is there for the
    OpenAPI security scheme, and would turn a wrong scheme into a missing token."""
    return daemon_of(request).tokens.resolve(request.headers.get("authorization"))


#: Methods that change nothing: all a viewer's token may use.
READS = frozenset({"GET", "HEAD", "OPTIONS"})


def person(request: Request) -> Principal:
    """The calling person (user, coordinator, viewer or operator); 403 for a node's
    token, and for a viewer's on anything but a read."""
    principal = caller(request)
    if principal.role is Role.NODE:
        raise RequestError("forbidden", "a node token may only call /v1/agents")
    if principal.role is Role.VIEWER and request.method not in READS:
        raise RequestError("forbidden", f"{principal.user!r} has a viewer token: it only reads")
    return principal


# Each of these resolves the token itself instead of depending on the one before: every
# level of dependencies costs FastAPI a solving step per request.
async def _principal(request: Request, _: Credentials) -> Principal:
    return caller(request)


NodeOrAnyone = Annotated[Principal, Depends(_principal)]


async def _person(request: Request, _: Credentials) -> Principal:
    return person(request)


PrincipalDep = Annotated[Principal, Depends(_person)]


async def _operator(request: Request, _: Credentials) -> Principal:
    principal = person(request)  # a node token, a viewer's write, are refused first
    if not principal.sees_everything:  # a viewer may read what operators read
        raise RequestError("forbidden", f"user {principal.user!r} is not an operator")
    return principal


OperatorDep = Annotated[Principal, Depends(_operator)]
