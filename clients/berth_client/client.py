"""``BerthClient``: a thin, typed wrapper over Berth's ``/v1`` API (httpx).

Errors come back as :class:`BerthError` carrying the API's ``code``, ``message`` and
``field``. The transport is injectable (``httpx.MockTransport``, ``ASGITransport``).
"""

from __future__ import annotations

from typing import Any

import httpx


class BerthError(Exception):
    def __init__(self, status: int, code: str, message: str, field: str | None) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.field = field


class BerthClient:
    def __init__(
        self,
        url: str,
        token: str | None,
        transport: httpx.BaseTransport | None = None,
        timeout: float = 30.0,
    ) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.Client(
            base_url=url, headers=headers, transport=transport, timeout=timeout
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> BerthClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self._http.request(method, path, **kwargs)
        if response.status_code >= 400:
            try:
                error = response.json()["error"]
            except (ValueError, KeyError, TypeError):
                raise BerthError(response.status_code, "error", response.text, None) from None
            raise BerthError(
                response.status_code, error["code"], error["message"], error.get("field")
            )
        return response.json()

    # ------------------------------------------------------------------ jobs
    def submit(
        self,
        resources: dict[str, int],
        time_limit: int,
        name: str = "job",
        deadline: int | None = None,
        priority: float | None = None,
        command: str | None = None,
        emulated_runtime: int | None = None,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"name": name, "resources": resources, "time_limit": time_limit}
        optional = {
            "deadline": deadline,
            "priority": priority,
            "command": command,
            "emulated_runtime": emulated_runtime,
        }
        body.update({key: value for key, value in optional.items() if value is not None})
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
        result: dict[str, Any] = self._call("POST", "/v1/jobs", json=body, headers=headers)
        return result

    def what_if(self, resources: dict[str, int], time_limit: int, **extra: Any) -> dict[str, Any]:
        body = {"resources": resources, "time_limit": time_limit, **extra}
        result: dict[str, Any] = self._call("POST", "/v1/jobs/what-if", json=body)
        return result

    def jobs(
        self, state: str | None = None, user: str | None = None, limit: int = 100, offset: int = 0
    ) -> dict[str, Any]:
        params: dict[str, Any] = {"limit": limit, "offset": offset}
        if state:
            params["state"] = state
        if user:
            params["user"] = user
        result: dict[str, Any] = self._call("GET", "/v1/jobs", params=params)
        return result

    def job(self, job_id: int) -> dict[str, Any]:
        result: dict[str, Any] = self._call("GET", f"/v1/jobs/{job_id}")
        return result

    def start(self, job_id: int) -> dict[str, Any]:
        result: dict[str, Any] = self._call("GET", f"/v1/jobs/{job_id}/start")
        return result

    def cancel(self, job_id: int) -> dict[str, Any]:
        result: dict[str, Any] = self._call("DELETE", f"/v1/jobs/{job_id}")
        return result

    # ------------------------------------------------------------------ system
    def schedule(self) -> dict[str, Any]:
        result: dict[str, Any] = self._call("GET", "/v1/schedule")
        return result

    def cluster(self) -> dict[str, Any]:
        result: dict[str, Any] = self._call("GET", "/v1/cluster")
        return result

    def admin(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        """An operator call, e.g. ``admin("POST", "nodes/node001/drain", {"reason": "..."})``."""
        return self._call(method, f"/v1/admin/{path}", json=body)
