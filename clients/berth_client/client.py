"""``BerthClient``: a thin, typed wrapper over Berth's ``/v1`` API.

It speaks HTTP/1.1 over one kept-alive connection with the standard library alone
(``http.client``), so the ``berth`` client commands start in tens of milliseconds and a
node can run the client without third-party packages. Errors come back as
:class:`BerthError` carrying the API's ``code``, ``message`` and ``field``; a daemon that
cannot be reached raises ``OSError`` (or ``http.client.HTTPException`` for a broken
answer).
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlencode, urlsplit

from berth_client.errors import BerthError

__all__ = ["BerthClient", "BerthError"]

#: Items asked for per page when a command reads a whole list.
PAGE = 10_000


class BerthClient:
    """``url`` may list several daemons, comma-separated (high availability): a daemon
    that cannot be reached is skipped for the next, and a standby's redirect to the
    leader is followed. Without a ``token``, the login node's ``berth authd`` gives one
    for whoever runs this process (:mod:`berth_client.login`), renewed when it expires."""

    def __init__(self, url: str, token: str | None, timeout: float = 30.0) -> None:
        self._urls = [u.strip() for u in url.split(",") if u.strip()]
        if not self._urls:
            raise ValueError(f"expected an http:// or https:// URL, got {url!r}")
        self._timeout = timeout
        self._connect(self._urls[0])
        self._headers = {"Accept": "application/json"}
        #: Whether the token comes from authd (renewed once when the daemon says expired).
        self._from_authd = not token
        if not token:
            from berth_client.login import login_token

            token = login_token()
        if token:
            self._headers["Authorization"] = f"Bearer {token}"

    def _connect(self, url: str) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"expected an http:// or https:// URL, got {url!r}")
        connection = (
            http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        )
        self._http = connection(parts.hostname, parts.port, timeout=self._timeout)
        self._prefix = parts.path.rstrip("/")
        self.url = url

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> BerthClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _send(
        self, method: str, target: str, body: bytes | None, sent: dict[str, str]
    ) -> http.client.HTTPResponse:
        try:
            self._http.request(method, target, body=body, headers=sent)
            return self._http.getresponse()
        except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
            # The daemon closed a kept-alive connection: one fresh try.
            self._http.close()
            self._http.request(method, target, body=body, headers=sent)
            return self._http.getresponse()

    def _call(
        self,
        method: str,
        path: str,
        json_body: Any = None,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> Any:
        query = f"?{urlencode(params, doseq=True)}" if params else ""  # (lists: repeated)
        sent = dict(self._headers, **(headers or {}))
        body = None
        if json_body is not None:
            body = json.dumps(json_body).encode()
            sent["Content-Type"] = "application/json"
        renewed = False
        # Each daemon once, plus a few redirects from standbys to the leader (and one
        # renewal of an authd token).
        for attempt in range(len(self._urls) + 4):
            try:
                response = self._send(method, self._prefix + path + query, body, sent)
            except OSError:
                if attempt + 1 >= len(self._urls):
                    raise
                self._http.close()
                self._connect(self._urls[(self._urls.index(self.url) + 1) % len(self._urls)]
                              if self.url in self._urls else self._urls[0])  # fmt: skip
                continue
            raw = response.read()
            location = response.getheader("Location")
            if response.status in (307, 308) and location:
                parts = urlsplit(location)
                self._http.close()
                self._connect(f"{parts.scheme}://{parts.netloc}")
                continue
            if response.status >= 400:
                try:
                    error = json.loads(raw)["error"]
                except (ValueError, KeyError, TypeError):
                    text = raw.decode(errors="replace")
                    raise BerthError(response.status, "error", text, None) from None
                if response.status == 401 and self._from_authd and not renewed:
                    renewed = True  # expired (or revoked) since it was cached: once afresh
                    from berth_client.login import login_token

                    fresh = login_token(renew=True)
                    if fresh:
                        self._headers["Authorization"] = sent["Authorization"] = f"Bearer {fresh}"
                        continue
                raise BerthError(
                    response.status, error["code"], error["message"], error.get("field")
                )
            return json.loads(raw) if raw else None  # 204 No Content has no body
        raise BerthError(503, "unavailable", f"no daemon of {', '.join(self._urls)} leads", None)

    # ------------------------------------------------------------------ jobs
    def submit(
        self,
        resources: dict[str, int] | None,
        time_limit: int,
        name: str = "job",
        deadline: int | None = None,
        priority: float | None = None,
        command: str | None = None,
        emulated_runtime: int | None = None,
        idempotency_key: str | None = None,
        slots: dict[str, Any] | None = None,
        nodes: dict[str, Any] | None = None,
        test_only: bool = False,
        **launch: Any,
    ) -> dict[str, Any]:
        """Submit a job with ``resources`` (totals), or ``slots`` (``{"count": 8,
        "per_slot": {...}}``) and optionally ``nodes`` (``{"count": 2, "exclusive":
        False}``). ``launch`` takes ``chdir``, ``output``, ``error``, ``requeue``,
        ``partition``, ``account``, ``script``, ``argv``, ``array``, ``dependency``,
        ``begin_time``, ``kill_on_invalid_dep`` and ``hold``. ``test_only``: submit nothing,
        answer the decision and start the job would get now (the what-if)."""
        body: dict[str, Any] = {"name": name, "time_limit": time_limit}
        optional = {
            "resources": resources,
            "slots": slots,
            "nodes": nodes,
            "deadline": deadline,
            "priority": priority,
            "command": command,
            "emulated_runtime": emulated_runtime,
            **launch,
        }
        body.update({key: value for key, value in optional.items() if value is not None})
        if test_only:
            asked: dict[str, Any] = self._call("POST", "/v1/jobs/what-if", json_body=body)
            return asked
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
        result: dict[str, Any] = self._call("POST", "/v1/jobs", json_body=body, headers=headers)
        return result

    def issue_token(
        self,
        user: str,
        role: str = "user",
        expires_in: int = 30 * 86400,
        account: str | None = None,
    ) -> dict[str, Any]:
        """Issue a signed token for ``user`` (operators); ``token`` is in the answer once."""
        body = {"user": user, "role": role, "expires_in": expires_in, "account": account}
        result: dict[str, Any] = self._call("POST", "/v1/admin/tokens", json_body=body)
        return result

    def tokens(self) -> dict[str, Any]:
        """The issued tokens not yet expired (operators)."""
        result: dict[str, Any] = self._call("GET", "/v1/admin/tokens")
        return result

    def revoke_token(self, token_id: str) -> dict[str, Any]:
        """Revoke an issued token (operators)."""
        result: dict[str, Any] = self._call("POST", f"/v1/admin/tokens/{token_id}/revoke")
        return result

    def short_token(self, expires_in: int = 900) -> dict[str, Any]:
        """A short-lived token for the caller (the dashboard's sign-in link)."""
        result: dict[str, Any] = self._call(
            "POST", "/v1/auth/token", json_body={"expires_in": expires_in}
        )
        return result

    def node_token(self, name: str) -> dict[str, Any]:
        """Issue node ``name``'s agent token (operators)."""
        body = {"name": name}
        result: dict[str, Any] = self._call("POST", "/v1/admin/node-tokens", json_body=body)
        return result

    def agents(self) -> dict[str, Any]:
        """Each node's agent and the launch delays (operators)."""
        return self._every("/v1/agents", "agents", "total")

    def what_if(self, resources: dict[str, int], time_limit: int, **extra: Any) -> dict[str, Any]:
        """The decision and start a job would get now: :meth:`submit` with ``test_only``."""
        return self.submit(resources, time_limit, test_only=True, **extra)

    def jobs(
        self,
        state: str | Sequence[str] | None = None,
        user: str | None = None,
        limit: int = 100,
        offset: int = 0,
        account: str | None = None,
        partition: str | None = None,
    ) -> dict[str, Any]:
        given = {"state": state, "user": user, "account": account, "partition": partition}
        params = {"limit": limit, "offset": offset} | _present(given)
        result: dict[str, Any] = self._call("GET", "/v1/jobs", params=params)
        return result

    def now(self) -> int:
        """The cluster's time (an emulating daemon's clock may run faster than the
        wall's), from one job's page; a daemon older than ``now`` on that page answers
        it on its plan's first page."""
        page: dict[str, Any] = self._call("GET", "/v1/jobs", params={"limit": 1})
        if "now" in page:
            return int(page["now"])
        plan: dict[str, Any] = self._call("GET", "/v1/schedule", params={"limit": 1})
        return int(plan["now"])

    def history(
        self,
        state: str | Sequence[str] | None = None,
        user: str | None = None,
        before: int | None = None,
        limit: int = 100,
        account: str | None = None,
        partition: str | None = None,
    ) -> dict[str, Any]:
        """Stored jobs, newest first, finished ones included; ``next_before`` pages on."""
        given = {"state": state, "user": user, "account": account, "before": before,
                 "partition": partition}  # fmt: skip
        params = {"limit": limit} | _present(given)
        result: dict[str, Any] = self._call("GET", "/v1/jobs/history", params=params)
        return result

    def usage(
        self,
        since: int,
        until: int | None = None,
        by: str = "user",
        account: str | None = None,
    ) -> dict[str, Any]:
        """Per user or per account (``by``): jobs that ended in ``[since, until)`` and
        resource-seconds; only ``account``'s jobs if given."""
        params = {"since": since, "by": by} | _present({"until": until, "account": account})
        return self._every("/v1/usage", f"{by}s", f"{by}_total", params)

    def job(self, job_id: int) -> dict[str, Any]:
        result: dict[str, Any] = self._call("GET", f"/v1/jobs/{job_id}")
        return result

    def start(self, job_id: int) -> dict[str, Any]:
        result: dict[str, Any] = self._call("GET", f"/v1/jobs/{job_id}/start")
        return result

    def hold(self, job_id: int, reason: str | None = None) -> dict[str, Any]:
        """Hold a pending job (scontrol hold): its user's own hold, or an operator's."""
        body = {"reason": reason} if reason else None
        result: dict[str, Any] = self._call("POST", f"/v1/jobs/{job_id}/hold", json_body=body)
        return result

    def release(self, job_id: int) -> dict[str, Any]:
        """Release a held job (scontrol release): admitted again, at the back."""
        result: dict[str, Any] = self._call("POST", f"/v1/jobs/{job_id}/release")
        return result

    def cancel(self, job_id: int) -> dict[str, Any]:
        result: dict[str, Any] = self._call("DELETE", f"/v1/jobs/{job_id}")
        return result

    def cancel_matching(
        self,
        state: Sequence[str] | None = None,
        user: str | None = None,
        account: str | None = None,
        name: str | None = None,
        partition: str | None = None,
    ) -> list[dict[str, Any]]:
        """Cancel every job not ended that the filters select (at least one)."""
        given = {"state": state, "user": user, "account": account, "name": name,
                 "partition": partition}  # fmt: skip
        result: list[dict[str, Any]] = self._call("DELETE", "/v1/jobs", params=_present(given))
        return result

    def cancel_array(self, array_id: int) -> list[dict[str, Any]]:
        """Cancel every task of job array ``array_id`` that has not ended."""
        result: list[dict[str, Any]] = self._call("DELETE", f"/v1/jobs/{array_id}/array")
        return result

    # ------------------------------------------------------------------ system
    def whoami(self) -> dict[str, Any]:
        """Whom the token speaks for: ``user``, ``role``, ``account``, ``expires_at``."""
        result: dict[str, Any] = self._call("GET", "/v1/whoami")
        return result

    def schedule(self) -> dict[str, Any]:
        return self._every("/v1/schedule", "planned", "planned_total")

    def cluster(self) -> dict[str, Any]:
        return self._every("/v1/cluster", "nodes", "node_total")

    def partitions(self) -> dict[str, Any]:
        return self._every("/v1/partitions", "partitions", "total")

    def _every(
        self, path: str, key: str, total: str, params: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """A paged list whole: the first answer with ``key`` holding every page's items."""
        first: dict[str, Any] = self._call("GET", path, params={**(params or {}), "limit": PAGE})
        items: list[Any] = list(first[key])
        while len(items) < first.get(total, 0):
            page = {**(params or {}), "limit": PAGE, "offset": len(items)}
            more: list[Any] = self._call("GET", path, params=page)[key]
            if not more:
                break
            items.extend(more)
        first[key] = items
        return first

    def matrix(self, name: str) -> dict[str, Any]:
        """A gang partition's matrix: rows x processors with the job in each cell."""
        result: dict[str, Any] = self._call("GET", f"/v1/partitions/{name}/matrix")
        return result

    def admin(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        """An operator call, e.g. ``admin("POST", "nodes/node001/drain", {"reason": "..."})``."""
        return self._call(method, f"/v1/admin/{path}", json_body=body)


def _present(params: dict[str, Any]) -> dict[str, Any]:
    """The query parameters that were given (not ``None``)."""
    return {key: value for key, value in params.items() if value is not None}
