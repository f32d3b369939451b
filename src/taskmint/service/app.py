"""The reward service's HTTP API (Starlette under uvicorn).

Routes:
- `POST /verify` `{instance_id, patch, request_id?, deadline?, dataset_version?}` -> 200 and
  the graded result (the `Reward`'s fields, `request_id`, `dataset_version`, `attempts`,
  `queue_time`, `grading_time`, `cached`); 429 + `Retry-After` when the queue is full; 503 +
  `Retry-After` when the sandbox failed on every attempt or the service is stopping; 504 when
  the request's deadline passed (a retry with the same `request_id` gets the result once it is
  graded).
- `POST /verify/batch` `{items: [...], deadline?}` -> 200 `{results: [...]}`, one per item in
  order (a refused item carries its `status` "rejected", `code` and `error`); 429 when the
  queue has no room for the batch.
- `GET /tasks/{id}?hints=K` -> the policy's view (statement with up to K hints, language, test
  command, visible failing tests); `GET /tasks/{id}/workspace` -> the broken tree as a tar.
- `GET /healthz` (open even with a token) -> 200 when ready, 503 while warming up or stopping.
- `GET /metrics` -> Prometheus text.

Bad requests get a 4xx and a JSON `{"status": "rejected", "error": ...}`: 400 (not JSON, not
UTF-8), 401 (token), 404 (unknown task, version or route), 405, 409 (a request id reused for
another request), 413 (patch or body too large, batch too long), 415 (not JSON), 422 (a field
missing, of the wrong type, unknown, a binary patch, a bad deadline or request id).
"""

from __future__ import annotations

import asyncio
import hmac
import json
import re
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from taskmint.service.grading import Conflict, Draining, Overloaded, RewardService
from taskmint.service.registry import Loaded, UnknownTask

__all__ = ["create_app"]

_REQUEST_ID = re.compile(r"[A-Za-z0-9._:\-]{1,128}")
_FIELDS = {"instance_id", "patch", "request_id", "deadline", "dataset_version"}
_BINARY = re.compile(r"^(GIT binary patch|Binary files .* differ)$", re.MULTILINE)


class Refused(Exception):
    """A bad request: its HTTP status and message."""

    def __init__(self, code: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.headers = headers or {}


def _rejected(code: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"status": "rejected", "error": message}, code, headers=headers)


async def _read_json(request: Request, limit: int) -> Any:
    ctype = request.headers.get("content-type", "application/json").split(";")[0].strip()
    if ctype not in ("application/json", ""):
        raise Refused(415, f"send JSON (Content-Type: application/json), not {ctype!r}")
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > limit:
        raise Refused(413, f"the body has {length} bytes; the limit is {limit}")
    data = bytearray()
    async for chunk in request.stream():
        data += chunk
        if len(data) > limit:
            raise Refused(413, f"the body is over the limit of {limit} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Refused(400, f"the body is not UTF-8: {exc}") from None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise Refused(400, f"the body is not JSON: {exc}") from None


class _Item:
    """One validated verify request."""

    def __init__(self, service: RewardService, body: Any, default_deadline: float) -> None:
        config = service.config
        if not isinstance(body, dict):
            raise Refused(422, "the request must be a JSON object")
        unknown = sorted(set(body) - _FIELDS)
        if unknown:
            raise Refused(422, f"unknown field(s) {unknown}; the fields are {sorted(_FIELDS)}")
        instance_id = body.get("instance_id")
        if not isinstance(instance_id, str) or not instance_id:
            raise Refused(422, "instance_id must be a non-empty string")
        patch = body.get("patch")
        if not isinstance(patch, str):
            raise Refused(422, "patch must be a string (a unified diff; empty for none)")
        try:
            size = len(patch.encode("utf-8"))
        except UnicodeEncodeError:
            raise Refused(422, "the patch is not valid UTF-8 text (a lone surrogate)") from None
        if size > config.max_patch_bytes:
            raise Refused(413, f"the patch has {size} bytes; the limit is {config.max_patch_bytes}")
        if "\x00" in patch or _BINARY.search(patch):
            raise Refused(422, "binary patches are not graded: send a text diff")
        request_id = body.get("request_id")
        if request_id is None:
            request_id = f"anon-{uuid.uuid4().hex}"
        elif not isinstance(request_id, str) or not _REQUEST_ID.fullmatch(request_id):
            raise Refused(422, "request_id must be 1 to 128 of [A-Za-z0-9._:-]")
        deadline = body.get("deadline", default_deadline)
        if (
            isinstance(deadline, bool)
            or not isinstance(deadline, int | float)
            or not 0 < deadline <= config.max_deadline
        ):
            limit = config.max_deadline
            raise Refused(422, f"deadline must be a number of seconds in (0, {limit:g}]")
        version = body.get("dataset_version")
        if version is not None and not isinstance(version, str):
            raise Refused(422, "dataset_version must be a string")
        try:
            self.loaded: Loaded = service.registry.get(instance_id, version)
        except UnknownTask as exc:
            raise Refused(404, str(exc)) from None
        self.patch = patch
        self.request_id = request_id
        self.deadline = float(deadline)


def create_app(
    service: RewardService,
    *,
    token: str | None = None,
    on_startup: Callable[[], None] | None = None,
) -> Starlette:
    """The app over `service`. With `token`, every route but `/healthz` needs
    `Authorization: Bearer <token>`."""
    config = service.config
    metrics = service.metrics
    # JSON may spell a byte of the patch in up to 6 (\u0001); the patch's own limit is
    # checked once decoded. A batch's body is bounded as a whole, not per item.
    body_limit = 6 * config.max_patch_bytes + 65536
    batch_limit = max(body_limit, 32 << 20)

    async def wait(item: _Item, start: float) -> tuple[int, dict[str, Any], dict[str, str]]:
        try:
            job, stored = service.submit(
                item.loaded, item.patch, item.request_id, start + item.deadline
            )
        except Overloaded as exc:
            headers = {"Retry-After": str(exc.retry_after)}
            return 429, {"status": "overloaded", "error": str(exc)}, headers
        except Draining as exc:
            return (
                503,
                {"status": "error", "error": str(exc), "retryable": True},
                {"Retry-After": "5"},
            )
        except Conflict as exc:
            return 409, {"status": "rejected", "error": str(exc)}, {}
        if stored is not None:
            return 200, stored, {}
        assert job is not None
        left = start + item.deadline - time.monotonic()
        try:
            status, result = await asyncio.wait_for(
                asyncio.shield(asyncio.wrap_future(job.future)), timeout=max(left, 0.001)
            )
        except TimeoutError:
            return (
                504,
                {
                    "status": "error",
                    "error": f"the deadline of {item.deadline:g} s passed; the grading goes on, "
                    "and a retry with the same request_id gets its result",
                    "retryable": True,
                    "request_id": item.request_id,
                },
                {"Retry-After": "1"},
            )
        headers = {"Retry-After": "1"} if status in (500, 503, 504) else {}
        return status, result, headers

    async def verify(request: Request) -> Response:
        start = time.monotonic()
        item = _Item(service, await _read_json(request, body_limit), config.deadline)
        status, result, headers = await wait(item, start)
        return JSONResponse(result, status, headers=headers)

    async def verify_batch(request: Request) -> Response:
        start = time.monotonic()
        body = await _read_json(request, batch_limit)
        if not isinstance(body, dict) or not isinstance(body.get("items"), list):
            raise Refused(422, 'the request must be {"items": [...], "deadline"?: seconds}')
        if set(body) - {"items", "deadline"}:
            raise Refused(422, f"unknown field(s) {sorted(set(body) - {'items', 'deadline'})}")
        items = body["items"]
        if not items:
            raise Refused(422, "items is empty")
        if len(items) > config.max_batch:
            raise Refused(413, f"{len(items)} items; the limit is {config.max_batch}")
        default = body.get("deadline", config.deadline)
        slots: list[_Item | dict[str, Any]] = []
        for raw in items:
            try:
                if isinstance(raw, dict) and "deadline" not in raw:
                    raw = {**raw, "deadline": default}
                slots.append(_Item(service, raw, config.deadline))
            except Refused as exc:
                slots.append({"status": "rejected", "code": exc.code, "error": exc.message})
        todo = [s for s in slots if isinstance(s, _Item)]
        room = service.room()
        if len(todo) > room:
            retry = {"Retry-After": str(service.retry_after())}
            return _rejected(
                429, f"the queue has room for {max(room, 0)} of {len(todo)} items", retry
            )
        answers = await asyncio.gather(*(wait(s, start) for s in todo))
        found = iter(answers)
        results = []
        for slot in slots:
            if isinstance(slot, _Item):
                status, result, _ = next(found)
                results.append({**result, "code": status})
            else:
                results.append(slot)
        return JSONResponse({"results": results})

    async def task_view(request: Request) -> Response:
        loaded = _task_of(request)
        hints = request.query_params.get("hints", "0")
        if not hints.isdigit():
            raise Refused(422, "hints must be a whole number")
        task = loaded.task
        level = min(int(hints), len(task.hints))
        hidden = set(task.hidden_tests)
        return JSONResponse(
            {
                "instance_id": task.instance_id,
                "dataset_version": loaded.version,
                "seed": task.seed,
                "language": task.language,
                "problem_statement": task.problem_statement,
                "hints": list(task.hints[:level]),
                "hints_available": len(task.hints),
                "test_command": task.test_command,
                "failing_tests": [t for t in task.FAIL_TO_PASS if t not in hidden],
                "files": list(task.files),
                "workspace": f"/tasks/{task.instance_id}/workspace",
            }
        )

    async def task_workspace(request: Request) -> Response:
        loaded = _task_of(request)
        data = await asyncio.to_thread(service.registry.workspace_tar, loaded.task)
        name = loaded.task.instance_id.replace('"', "")
        return Response(
            data,
            media_type="application/x-tar",
            headers={"Content-Disposition": f'attachment; filename="{name}.tar"'},
        )

    def _task_of(request: Request) -> Loaded:
        version = request.query_params.get("dataset_version")
        try:
            return service.registry.get(request.path_params["instance_id"], version)
        except UnknownTask as exc:
            raise Refused(404, str(exc)) from None

    async def healthz(request: Request) -> Response:
        state = service.state()
        ok = state["ready"] and not state["draining"]
        return JSONResponse({"status": "ok" if ok else "unavailable", **state}, 200 if ok else 503)

    async def metrics_text(request: Request) -> Response:
        return PlainTextResponse(
            metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8"
        )

    def guarded(
        route: str, handler: Callable[[Request], Awaitable[Response]], open_: bool = False
    ) -> Callable[[Request], Awaitable[Response]]:
        async def run(request: Request) -> Response:
            start = time.monotonic()
            try:
                if token and not open_:
                    given = request.headers.get("authorization", "")
                    if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
                        raise Refused(
                            401, "a bearer token is required", {"WWW-Authenticate": "Bearer"}
                        )
                response = await handler(request)
            except Refused as exc:
                response = _rejected(exc.code, exc.message, exc.headers)
            metrics.inc(
                "taskmint_reward_requests_total", route=route, code=str(response.status_code)
            )
            elapsed = time.monotonic() - start
            metrics.observe("taskmint_reward_request_seconds", elapsed, route=route)
            return response

        return run

    async def not_found(request: Request, exc: Exception) -> Response:
        code = getattr(exc, "status_code", 404)
        message = "no such route" if code == 404 else "method not allowed for this route"
        return _rejected(code, f"{message}: {request.method} {request.url.path}")

    routes = [
        Route("/verify", guarded("verify", verify), methods=["POST"]),
        Route("/verify/batch", guarded("verify_batch", verify_batch), methods=["POST"]),
        Route("/tasks/{instance_id}", guarded("task", task_view), methods=["GET"]),
        Route(
            "/tasks/{instance_id}/workspace",
            guarded("workspace", task_workspace),
            methods=["GET"],
        ),
        Route("/healthz", guarded("healthz", healthz, open_=True), methods=["GET"]),
        Route("/metrics", guarded("metrics", metrics_text), methods=["GET"]),
    ]

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if on_startup is not None:
            on_startup()
        yield
        await asyncio.to_thread(service.close)

    return Starlette(
        routes=routes,
        exception_handlers={404: not_found, 405: not_found},
        lifespan=lifespan,
    )
