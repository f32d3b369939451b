"""`RewardClient(url)`: grading through a `taskmint serve-reward` service, with retries.

Standard library only, so it installs with the plain consumer. Every call carries a
`request_id` (made here unless given) that stays the same across its retries: a retried request
returns the result the service stored for it, never a second grading. Retried: 429 and 503
(after the `Retry-After` the service sent), 502 and 504 (a deadline the service gave up on; the
grading goes on there and its result is returned to the retry), and connection failures (a
service restarting). A 4xx other than 429 is the request's fault and raises
`RewardRequestError` at once. A service that stays unavailable past `timeout` seconds raises
`RewardServiceError`: never a made-up reward.

`taskmint.verify(task, patch)` grades through this client when `TASKMINT_REWARD_URL` is set
(the bearer token, if any, in `TASKMINT_REWARD_TOKEN`), so a training loop moves from local to
remote grading with one setting.
"""

from __future__ import annotations

import http.client
import io
import json
import os
import random
import tarfile
import time
import urllib.parse
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from taskmint.errors import TaskmintError
from taskmint.records import Reward, TestResult

__all__ = [
    "RewardClient",
    "RewardRequestError",
    "RewardServiceError",
    "reward_from_json",
]

URL_ENV = "TASKMINT_REWARD_URL"
TOKEN_ENV = "TASKMINT_REWARD_TOKEN"

_RETRIED = {429, 502, 503, 504}


class RewardServiceError(TaskmintError):
    """The service could not give a reward (unavailable, or it failed to grade) in time."""


class RewardRequestError(TaskmintError):
    """The service refused the request (a 4xx): retrying the same request cannot help."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.message = message


def reward_from_json(data: Mapping[str, Any]) -> Reward:
    """The `Reward` a service's graded result describes (the inverse of the service's JSON)."""
    return Reward(
        reward=float(data["reward"]),
        reason=str(data["reason"]),
        outcomes=tuple(
            TestResult(
                test_id=o["test_id"],
                outcome=o["outcome"],
                duration=float(o.get("duration", 0.0)),
                message=o.get("message"),
            )
            for o in data.get("outcomes", ())
        ),
        passed=int(data.get("passed", 0)),
        expected=int(data.get("expected", 0)),
        tampered=bool(data.get("tampered", False)),
        rejected_paths=tuple(data.get("rejected_paths", ())),
        wall_time=float(data.get("wall_time", 0.0)),
        findings=tuple(data.get("findings", ())),
        error=str(data.get("error", "")),
        signal=int(data.get("signal", 0)),
    )


class RewardClient:
    """A client of one reward service. Thread-safe: each call opens its own connection."""

    def __init__(
        self,
        url: str | None = None,
        *,
        token: str | None = None,
        timeout: float = 900.0,
        connect_timeout: float = 10.0,
        max_retry_after: float = 30.0,
    ) -> None:
        url = url or os.environ.get(URL_ENV, "")
        if not url:
            raise ValueError(f"give the service's URL (or set {URL_ENV})")
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {url!r}")
        self.url = url.rstrip("/")
        self._parts = parts
        self.token = token if token is not None else os.environ.get(TOKEN_ENV) or None
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.max_retry_after = max_retry_after
        self.retries = 0  # requests sent again (any cause), for the caller's figures

    # -- grading ------------------------------------------------------------------------------

    def verify(
        self,
        instance_id: str,
        patch: str,
        *,
        request_id: str | None = None,
        deadline: float | None = None,
    ) -> Reward:
        """The reward for `patch` on task `instance_id`, graded by the service."""
        return reward_from_json(
            self.verify_json(instance_id, patch, request_id=request_id, deadline=deadline)
        )

    def verify_json(
        self,
        instance_id: str,
        patch: str,
        *,
        request_id: str | None = None,
        deadline: float | None = None,
        dataset_version: str | None = None,
    ) -> dict[str, Any]:
        """The service's whole answer (the reward's fields, `request_id`, `dataset_version`,
        `attempts`, `cached`, `queue_time`, ...)."""
        body: dict[str, Any] = {
            "instance_id": instance_id,
            "patch": patch,
            "request_id": request_id or uuid.uuid4().hex,
        }
        if deadline is not None:
            body["deadline"] = deadline
        if dataset_version is not None:
            body["dataset_version"] = dataset_version
        return self._json("POST", "/verify", body)

    def verify_batch(
        self, items: Iterable[tuple[str, str]], *, deadline: float | None = None
    ) -> list[dict[str, Any]]:
        """One answer per (instance_id, patch), in order. An item the service refused comes
        back with `status` "rejected" and its `error`; the others are graded results."""
        body: dict[str, Any] = {
            "items": [
                {"instance_id": i, "patch": p, "request_id": uuid.uuid4().hex} for i, p in items
            ]
        }
        if deadline is not None:
            body["deadline"] = deadline
        return list(self._json("POST", "/verify/batch", body)["results"])

    # -- the rest of the API ------------------------------------------------------------------

    def task(self, instance_id: str, hints: int = 0) -> dict[str, Any]:
        """The policy's view of a task: statement (with up to `hints` hints) and metadata."""
        query = urllib.parse.urlencode({"hints": hints})
        return self._json("GET", f"/tasks/{urllib.parse.quote(instance_id)}?{query}")

    def workspace(self, instance_id: str, dest: str | os.PathLike[str]) -> Path:
        """Unpack the task's workspace (the broken tree) into the empty folder `dest`."""
        dest = Path(dest)
        if dest.exists() and any(dest.iterdir()):
            raise FileExistsError(f"{dest} is not empty; give an empty or new folder")
        status, _, data = self._request(
            "GET", f"/tasks/{urllib.parse.quote(instance_id)}/workspace"
        )
        self._raise_for(status, data)
        dest.mkdir(parents=True, exist_ok=True)
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
            tar.extractall(dest, filter="data")
        return dest

    def health(self) -> dict[str, Any]:
        """`/healthz`: ready or not, the loaded versions, in-flight and queued requests."""
        status, _, data = self._once("GET", "/healthz", None)
        return {"http_status": status, **json.loads(data)}

    def metrics(self) -> str:
        """`/metrics` (Prometheus text)."""
        status, _, data = self._request("GET", "/metrics")
        self._raise_for(status, data)
        return data.decode()

    # -- transport ----------------------------------------------------------------------------

    def _json(self, method: str, path: str, body: Any = None) -> dict[str, Any]:
        payload = None if body is None else json.dumps(body).encode()
        status, _, data = self._request(method, path, payload)
        self._raise_for(status, data)
        result: dict[str, Any] = json.loads(data)
        return result

    @staticmethod
    def _raise_for(status: int, data: bytes) -> None:
        if status == 200:
            return
        try:
            message = str(json.loads(data).get("error", ""))
        except (ValueError, AttributeError):
            message = data[:500].decode("utf-8", "replace")
        if 400 <= status < 500 and status not in _RETRIED:
            raise RewardRequestError(status, message)
        raise RewardServiceError(f"the reward service answered {status}: {message}")

    def _request(
        self, method: str, path: str, payload: bytes | None = None
    ) -> tuple[int, dict[str, str], bytes]:
        """Send until an answer that is not worth retrying, or until `timeout` runs out."""
        end = time.monotonic() + self.timeout
        attempt = 0
        while True:
            attempt += 1
            wait: float
            try:
                status, headers, data = self._once(method, path, payload)
            except (OSError, http.client.HTTPException) as exc:
                status, headers, data = 0, {}, str(exc).encode()
                wait = min(0.2 * 2 ** min(attempt, 6), 10.0)
            else:
                if status not in _RETRIED:
                    return status, headers, data
                wait = _retry_after(headers.get("retry-after"), attempt)
            wait = min(wait, self.max_retry_after) * (1 + 0.2 * random.random())
            if time.monotonic() + wait > end:
                if status:
                    return status, headers, data
                raise RewardServiceError(
                    f"the reward service at {self.url} could not be reached for "
                    f"{self.timeout:g} s: {data.decode('utf-8', 'replace')}"
                )
            self.retries += 1
            time.sleep(wait)

    def _once(
        self, method: str, path: str, payload: bytes | None
    ) -> tuple[int, dict[str, str], bytes]:
        parts = self._parts
        cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        conn = cls(parts.hostname or "", parts.port, timeout=self.connect_timeout)
        headers = {"Accept": "application/json"}
        if payload is not None:
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        try:
            conn.connect()
            assert conn.sock is not None
            conn.sock.settimeout(self.timeout)  # a grading may take the seed's whole timeout
            conn.request(method, parts.path.rstrip("/") + path, body=payload, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
            return resp.status, {k.lower(): v for k, v in resp.getheaders()}, data
        except TimeoutError as exc:
            raise OSError(f"no answer in {self.timeout:g} s") from exc
        finally:
            conn.close()


def _retry_after(value: str | None, attempt: int) -> float:
    try:
        return max(0.0, float(value)) if value else min(0.5 * attempt, 5.0)
    except ValueError:
        return min(0.5 * attempt, 5.0)
