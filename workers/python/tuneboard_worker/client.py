"""The HTTP worker protocol (the server's /v1/workers/* routes), with retries that are safe to repeat.

Every call is retried on connection errors and 5xx answers with backoff. Repeating a call is harmless by
design: events carry a per-job sequence number (the server skips what it already stored), a checkpoint upload
overwrites the same key, and a resent complete/fail whose first answer was lost answers as the first did.
A 409 means this worker no longer holds the job (cancelled, recovered, finished): `LeaseLost`.
"""

from __future__ import annotations

import time
from typing import Any, Callable

import httpx


class ProtocolError(Exception):
    def __init__(self, method: str, path: str, status: int, text: str):
        super().__init__(f"{method} {path} answered {status}: {text[:500]}")
        self.status = status
        self.text = text
        self.call = f"{method} {path}"


class LeaseLost(ProtocolError):
    """The server says this worker no longer holds the job."""


class WorkerClient:
    def __init__(
        self,
        base_url: str,
        token: str,
        worker_id: str,
        *,
        retries: int = 6,
        timeout: float = 600.0,
        call_timeout: float = 60.0,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.worker_id = worker_id
        self.retries = retries
        # The small JSON calls (claim, heartbeat, events, fail) wait this long for an answer, not `timeout`
        # (sized for checkpoint uploads and large inputs): a server that accepts connections but does not answer
        # would otherwise hold a heartbeat, or the training loop's next event, for 600 s per try, 70 minutes with
        # the retries, far past the job's lease.
        self._short = httpx.Timeout(call_timeout, connect=10.0)
        self._call_timeout = call_timeout
        # Calls about a job keep retrying for this long (the runner sets the job's lease): until the lease runs
        # out the server still holds the job, so a server restart or a network blip shorter than that must not
        # fail a job that would have carried on. After it, the server has failed the job itself.
        self.job_retry_seconds = 0.0
        # Likewise a Tinker request's result and files (docs/tinker.md §3.3), for the lease of its training client:
        # past it the server has failed the client. The runner sets it from the server's lease.
        self.tinker_retry_seconds = 60.0
        self._sleep = sleep
        self._clock = clock
        self._http = httpx.Client(
            base_url=base_url.rstrip("/"),
            headers={"authorization": f"Bearer {token}"},
            timeout=httpx.Timeout(timeout, connect=10.0),
            transport=transport,
        )
        self._sent: dict[str, int] = {}

    def close(self) -> None:
        self._http.close()

    def _request(self, method: str, path: str, *, retry_for: float = 0.0, **kwargs: Any) -> httpx.Response:
        """retry_for: keep retrying (connection errors, 5xx) for at least this many seconds, past `retries`."""
        started = self._clock()
        attempt = 0
        while True:
            give_up = attempt >= self.retries and self._clock() - started >= retry_for
            try:
                res = self._http.request(method, path, **kwargs)
            except httpx.TransportError:
                if give_up:
                    raise
                self._sleep(min(8.0, 0.25 * 2**attempt))
                attempt += 1
                continue
            if res.status_code < 500:
                if res.status_code == 409:
                    raise LeaseLost(method, path, res.status_code, res.text)
                if res.status_code >= 400:
                    raise ProtocolError(method, path, res.status_code, res.text)
                return res
            if give_up:
                raise ProtocolError(method, path, res.status_code, res.text)
            self._sleep(min(8.0, 0.25 * 2**attempt))
            attempt += 1

    # --- the protocol ---------------------------------------------------------------------------------------

    def claim(
        self,
        kinds: list[str],
        capabilities: dict[str, Any],
        info: dict[str, Any] | None = None,
        model_ids: list[str] | None = None,
        wait_seconds: float = 0.0,
    ) -> dict[str, Any] | None:
        """The next job, or None. wait_seconds > 0: a long poll, the server holds the answer until a job can be
        claimed (at most 25 s); an older server ignores it and answers at once."""
        body: dict[str, Any] = {"worker_id": self.worker_id, "kinds": kinds, "capabilities": capabilities}
        if info:
            body["info"] = info
        if model_ids:
            body["model_ids"] = model_ids
        timeout = self._short
        if wait_seconds > 0:
            body["wait_seconds"] = wait_seconds
            # The answer may take wait_seconds, so the read timeout runs from there.
            timeout = httpx.Timeout(wait_seconds + self._call_timeout, connect=10.0)
        return self._request("POST", "/v1/workers/claim", json=body, timeout=timeout).json()["job"]

    def sign_off(self) -> bool:
        """Leaving cleanly: the server drops this worker from its registry at once, so a queued job only it could train
        says no worker is connected. One short try, never raises: a worker that could not sign off (the server is
        down) ages out of the registry as before. True when the server removed it."""
        try:
            res = self._http.post("/v1/workers/sign-off", json={"worker_id": self.worker_id}, timeout=2.0)
            return res.status_code == 200 and bool(res.json().get("signed_off"))
        except (httpx.HTTPError, ValueError):
            return False

    def heartbeat(self, job_id: str, info: dict[str, Any] | None = None) -> bool:
        """True when the job was cancelled (or taken away): stop at the next step."""
        body: dict[str, Any] = {"worker_id": self.worker_id}
        if info:
            body["info"] = info
        return bool(self._request("POST", f"/v1/workers/jobs/{job_id}/heartbeat", json=body, timeout=self._short).json()["cancelled"])

    def append_events(self, job_id: str, events: list[dict[str, Any]]) -> None:
        seq = self._sent.get(job_id, 0)
        body = {"worker_id": self.worker_id, "events": events, "seq": seq}
        self._request("POST", f"/v1/workers/jobs/{job_id}/events", json=body, retry_for=self.job_retry_seconds, timeout=self._short)
        self._sent[job_id] = seq + len(events)

    def job_input(self, job_id: str) -> dict[str, Any]:
        params = {"worker_id": self.worker_id}
        return self._request("GET", f"/v1/workers/jobs/{job_id}/input", params=params, retry_for=self.job_retry_seconds).json()

    def base_weights(self, job_id: str, file: str | None = None) -> bytes | None:
        """The checkpoint to train from (adapter weights, or with file=adapter_config.json its config); None: the base."""
        params = {"worker_id": self.worker_id, **({"file": file} if file else {})}
        res = self._request("GET", f"/v1/workers/jobs/{job_id}/weights", params=params, retry_for=self.job_retry_seconds)
        return None if res.status_code == 204 else res.content

    def upload(self, job_id: str, file: str, data: bytes) -> str:
        res = self._request(
            "PUT",
            f"/v1/workers/jobs/{job_id}/checkpoint",
            params={"worker_id": self.worker_id, "file": file},
            content=data,
            headers={"content-type": "application/octet-stream"},
            retry_for=self.job_retry_seconds,
        )
        return res.json()["artifact_key"]

    def complete(self, job_id: str, artifact_key: str, metrics: dict[str, float] | None = None) -> int:
        body: dict[str, Any] = {"worker_id": self.worker_id, "artifact_key": artifact_key}
        if metrics:
            body["metrics"] = metrics
        step = self._request("POST", f"/v1/workers/jobs/{job_id}/complete", json=body, retry_for=self.job_retry_seconds).json()["step"]
        self._sent.pop(job_id, None)
        return int(step)

    def fail(self, job_id: str, message: str) -> None:
        body = {"worker_id": self.worker_id, "error_message": message[:20000]}
        self._request("POST", f"/v1/workers/jobs/{job_id}/fail", json=body, retry_for=self.job_retry_seconds, timeout=self._short)
        self._sent.pop(job_id, None)

    # --- Tinker training clients (docs/tinker.md §3.2–3.3) ------------------------------------------------------

    def tinker_poll(
        self,
        capabilities: dict[str, Any],
        info: dict[str, Any] | None,
        held: list[str],
        accept_new: bool,
        wait_ms: int,
        kinds: list[str] | None = None,
    ) -> dict[str, Any]:
        """`{"requests": [...], "drop": [...]}`: the server answers as soon as it has something, else after wait_ms."""
        body: dict[str, Any] = {
            "worker_id": self.worker_id,
            "capabilities": capabilities,
            "info": info or {},
            "held": held,
            "accept_new": accept_new,
            "wait_ms": wait_ms,
        }
        if kinds:
            body["kinds"] = kinds
        # A long poll: its answer may take wait_ms, so the read timeout runs from there.
        timeout = httpx.Timeout(wait_ms / 1000 + self._call_timeout, connect=10.0)
        return self._request("POST", "/v1/workers/tinker/poll", json=body, timeout=timeout).json()

    def tinker_heartbeat(self, held: list[str]) -> list[str]:
        """Liveness while a long request runs (a poll would hand out requests); answers the ids to drop."""
        body = {"worker_id": self.worker_id, "held": held}
        res = self._request("POST", "/v1/workers/tinker/heartbeat", json=body, timeout=self._short)
        return list(res.json().get("drop") or [])

    def tinker_result(self, request_id: str, result: dict[str, Any] | None = None, error: dict[str, str] | None = None) -> None:
        """Posts a request's answer: its result, or an error {"message", "category"}. A resend is harmless."""
        if (result is None) == (error is None):
            raise ValueError("tinker_result takes a result or an error")
        body: dict[str, Any] = {"worker_id": self.worker_id, **({"result": result} if error is None else {"error": error})}
        path = f"/v1/workers/tinker/requests/{request_id}/result"
        self._request("POST", path, json=body, retry_for=self.tinker_retry_seconds, timeout=self._short)

    def tinker_put_file(self, request_id: str, file: str, data: bytes) -> None:
        self._request(
            "PUT",
            f"/v1/workers/tinker/requests/{request_id}/files/{file}",
            params={"worker_id": self.worker_id},
            content=data,
            headers={"content-type": "application/octet-stream"},
            retry_for=self.tinker_retry_seconds,
        )

    def tinker_get_file(self, request_id: str, file: str) -> bytes:
        path = f"/v1/workers/tinker/requests/{request_id}/files/{file}"
        return self._request("GET", path, params={"worker_id": self.worker_id}, retry_for=self.tinker_retry_seconds).content
