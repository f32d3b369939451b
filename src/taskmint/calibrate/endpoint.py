"""The endpoint client and its fault handling: chat completions from any OpenAI-compatible
endpoint, through the `openai` client (the extra `taskmint[calibrate]`).

This is the one module of `taskmint.calibrate` that imports `openai`; without it installed,
importing works and `make_client` raises a `TaskmintError` saying what to install.

`ChatSession.complete` asks for one completion within the attempt's wall-time budget. Failures
of the endpoint (unreachable, timeouts, 429 and 5xx after the retries, a refused request, an
answer that is not JSON or no chat completion) raise `EndpointFailure` with a reason naming the
endpoint; `infra=True` marks the ones that say nothing about the model. Only what retrying can
mend is retried: 5xx, 429, timeouts, broken connections and garbled answers, not 401 or 404. A
request's `request_timeout` bounds the whole request, however slowly its answer's bytes come.
"""

from __future__ import annotations

import importlib
import json
import random
import re
import threading
import time
import weakref
from collections.abc import Iterator, Mapping
from functools import cache
from types import ModuleType
from typing import Any

from taskmint.calibrate.models import ModelConfig
from taskmint.calibrate.results import StopReason
from taskmint.errors import TaskmintError

try:
    import openai
    from openai import OpenAI
    from openai.types.chat import ChatCompletion, ChatCompletionMessage
except ImportError as exc:  # the optional extra is not installed: fail on use, not on import
    _OPENAI_MISSING: ImportError | None = exc
else:
    _OPENAI_MISSING = None

__all__ = ["OPENAI_MISSING", "ChatSession", "EndpointFailure", "make_client"]

OPENAI_MISSING = "model calibration needs the openai client: pip install 'taskmint[calibrate]'"


def _require_openai() -> None:
    """Raise the `TaskmintError` that says how to install the client, when it is missing."""
    if _OPENAI_MISSING is not None:
        raise TaskmintError(OPENAI_MISSING) from _OPENAI_MISSING


@cache
def _httpx() -> ModuleType:
    """The HTTP library the installed `openai` is built on (httpx, or httpx2 in newer ones)."""
    base = next(c for c in openai.DefaultHttpxClient.__mro__ if c.__name__ == "Client")
    return importlib.import_module(base.__module__.split(".", 1)[0])


class _WholeRequestTimeout:
    """Event hooks that make a request's timeout bound the whole request.

    httpx applies a timeout to each read, so an answer dripped a few bytes at a time never
    times out. The request hook notes when each request starts; the response hook (headers in,
    body not yet read) wraps the body so that reading past the request's timeout raises the
    library's `ReadTimeout`, which the client reports as a timeout.
    """

    def __init__(self) -> None:
        self._started: weakref.WeakKeyDictionary[Any, float] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def on_request(self, request: Any) -> None:
        with self._lock:
            self._started[request] = time.monotonic()

    def on_response(self, response: Any) -> None:
        request = response.request
        with self._lock:
            started = self._started.pop(request, None)
        timeouts = request.extensions.get("timeout") or {}
        limit = timeouts.get("read")
        if started is None or not limit:
            return
        response.stream = _deadline_stream(response.stream, request, started + limit, limit)


def _deadline_stream(stream: Any, request: Any, deadline: float, limit: float) -> Any:
    httpx = _httpx()

    class DeadlineStream(httpx.SyncByteStream):  # type: ignore[name-defined]
        def __iter__(self) -> Iterator[bytes]:
            for chunk in stream:
                if time.monotonic() > deadline:
                    raise httpx.ReadTimeout(
                        f"no complete answer within {limit:g} s", request=request
                    )
                yield chunk

        def close(self) -> None:
            stream.close()

    return DeadlineStream()


def make_client(model: ModelConfig, api_key: str) -> OpenAI:
    """An `OpenAI` client for `model`'s endpoint; retries are ours (`ChatSession.complete`).

    `model.budget.request_timeout` bounds each request as a whole (see `_WholeRequestTimeout`).
    """
    _require_openai()
    hooks = _WholeRequestTimeout()
    return OpenAI(
        base_url=model.base_url,
        api_key=api_key,
        timeout=model.budget.request_timeout,
        max_retries=0,
        http_client=openai.DefaultHttpxClient(
            timeout=model.budget.request_timeout,
            event_hooks={"request": [hooks.on_request], "response": [hooks.on_response]},
        ),
    )


class EndpointFailure(Exception):
    """The endpoint could not give a completion (after retries)."""

    def __init__(self, stop: StopReason, reason: str, *, infra: bool) -> None:
        super().__init__(reason)
        self.stop: StopReason = stop
        self.reason = reason
        self.infra = infra


class _BadAnswer(Exception):
    """The endpoint answered 200 with something that is no chat completion (worth a retry)."""


def _cause(exc: BaseException) -> str:
    """`Type: message` of the innermost cause of `exc` (what actually went wrong)."""
    seen = exc
    while seen.__cause__ is not None and seen.__cause__ is not seen:
        seen = seen.__cause__
    text = str(seen).strip() or repr(seen)
    return f"{type(seen).__name__}: {text}"


def _snippet(text: str, limit: int = 100) -> str:
    """A readable glimpse of a body: an HTML page's title, else its start."""
    title = re.search(r"<title[^>]*>(.*?)</title>", text, re.IGNORECASE | re.DOTALL)
    if title:
        return f"an HTML page titled {' '.join(title.group(1).split())[:limit]!r}"
    flat = " ".join(text.split())
    return repr(flat[:limit] + ("..." if len(flat) > limit else "")) if flat else "empty"


def _body(response: Any) -> str:
    """'content-type, N bytes: glimpse' of an HTTP response's body."""
    try:
        data = response.content
        kind = response.headers.get("content-type", "no content-type").split(";")[0].strip()
    except Exception:  # the body could not be read: say so rather than fail again
        return "an unreadable body"
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else str(data)
    return f"{kind}, {len(data)} bytes: {_snippet(text)}"


def _status_detail(exc: openai.APIStatusError) -> str:
    """The error message of a 4xx/5xx answer: its JSON `message`, else a glimpse of the body."""
    body = exc.body
    if isinstance(body, Mapping):
        message = body.get("message")
        if isinstance(message, str) and message:
            return message
    return _body(exc.response)


def _completion_problem(parsed: object) -> str | None:
    """Why a parsed answer is no usable chat completion, or None when it is one.

    The client builds its models without validating them, so whatever JSON came back is here.
    """
    if isinstance(parsed, str):
        return "a body that is not JSON"
    if not isinstance(parsed, ChatCompletion):
        return f"JSON that is not a chat completion (a {type(parsed).__name__})"
    choices = getattr(parsed, "choices", None)
    if not isinstance(choices, list) or not choices:
        return "JSON that is not a chat completion: no choices"
    message = getattr(choices[0], "message", None)
    if not isinstance(message, ChatCompletionMessage):
        return "JSON that is not a chat completion: choice 0 has no message"
    calls = getattr(message, "tool_calls", None)
    if calls is not None and not isinstance(calls, list):
        return "JSON that is not a chat completion: the message's tool_calls is not a list"
    return None


def _count(value: object) -> int:
    """A token count as reported, or 0 if it is not one."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _is_timeout(exc: BaseException) -> bool:
    return isinstance(exc, TimeoutError) or "Timeout" in type(exc).__name__


_TRANSPORT_MODULES = frozenset({"httpx", "httpx2", "httpcore", "httpcore2", "h11", "anyio", "ssl"})


def _is_transport(exc: BaseException) -> bool:
    """An error of the connection (raised below the openai client and not wrapped by it)."""
    return isinstance(exc, OSError) or type(exc).__module__.split(".")[0] in _TRANSPORT_MODULES


def _retry_after(exc: openai.APIStatusError) -> float | None:
    value = exc.response.headers.get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _is_context_error(exc: openai.APIStatusError) -> bool:
    text = str(exc).lower()
    return "context" in text and ("length" in text or "too long" in text or "maximum" in text)


class ChatSession:
    """One attempt's conversation with the endpoint: completions asked for within the
    attempt's deadline (`complete`), and what they cost (tokens, retries, the model id)."""

    def __init__(self, model: ModelConfig, client: OpenAI, deadline: float, rng: random.Random):
        self.model = model
        self.client = client
        self.deadline = deadline
        self.rng = rng
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.retries = 0
        self.model_id = ""

    def complete(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], seed: int | None
    ) -> ChatCompletion:
        """One chat completion, retried while retrying can help (see the module docstring);
        `EndpointFailure` when none comes within the retries and the deadline."""
        budget = self.model.budget
        params: dict[str, Any] = {
            "model": self.model.model,
            "messages": messages,
            "tools": tools,
            "tool_choice": "auto",
            "temperature": self.model.temperature,
            self.model.max_tokens_param: self.model.max_completion_tokens,
        }
        if self.model.top_p is not None:
            params["top_p"] = self.model.top_p
        if seed is not None:
            params["seed"] = seed
        url = self.model.base_url
        for attempt in range(budget.max_retries + 1):
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                raise EndpointFailure("wall_time", "the wall-time budget ran out", infra=False)
            wait: float | None = None
            timeout = min(budget.request_timeout, remaining)
            try:
                response = self._request(params, timeout)
            except _BadAnswer as exc:  # garbled, perhaps by a proxy: worth another try
                last = str(exc)
            except openai.APITimeoutError as exc:
                last = f"the request to {url} timed out after {timeout:g} s ({_cause(exc)})"
            except openai.APIConnectionError as exc:
                last = f"the connection to {url} failed: {_cause(exc)}"
            except (openai.RateLimitError, openai.InternalServerError) as exc:
                last = f"HTTP {exc.status_code} from {url}: {_status_detail(exc)}"
                wait = _retry_after(exc)
            except openai.APIStatusError as exc:
                if _is_context_error(exc):
                    raise EndpointFailure(
                        "context_exhausted",
                        f"the conversation outgrew the context: {exc}",
                        infra=False,
                    ) from exc
                # 4xx other than 429: a configuration problem; retrying cannot help
                raise EndpointFailure(
                    "api_error",
                    f"HTTP {exc.status_code} from {url}: {_status_detail(exc)}; check "
                    "the model's base_url, model name and API key",
                    infra=True,
                ) from exc
            except Exception as exc:  # what escaped the client: classify it, never raise it
                what = f"{type(exc).__name__}: {exc}"
                if _is_timeout(exc):
                    last = f"the request to {url} timed out after {timeout:g} s ({what})"
                elif _is_transport(exc):
                    last = f"the connection to {url} failed: {what}"
                elif isinstance(exc, ValueError):  # JSON or validation errors
                    last = f"the endpoint {url} answered with no chat completion: {what}"
                else:
                    raise EndpointFailure(
                        "api_error",
                        f"the openai client failed on the answer of {url}: {what}",
                        infra=True,
                    ) from exc
            else:
                usage = getattr(response, "usage", None)
                self.prompt_tokens += _count(getattr(usage, "prompt_tokens", 0))
                self.completion_tokens += _count(getattr(usage, "completion_tokens", 0))
                reported = getattr(response, "model", None)
                self.model_id = self.model_id or (reported if isinstance(reported, str) else "")
                return response
            if attempt == budget.max_retries:
                break
            self.retries += 1
            delay = min(budget.backoff_max, budget.backoff_base * 2**attempt)
            delay *= 0.5 + self.rng.random() / 2  # jitter: concurrent attempts do not align
            if wait is not None:
                delay = min(budget.backoff_max, max(delay, wait))
            if time.monotonic() + delay >= self.deadline:
                raise EndpointFailure("api_error", f"{last}; no time left to retry", infra=True)
            time.sleep(delay)
        raise EndpointFailure(
            "api_error", f"{last} (after {budget.max_retries} retries)", infra=True
        )

    def _request(self, params: dict[str, Any], timeout: float) -> ChatCompletion:
        """One request; `_BadAnswer` when the endpoint answered 200 with no chat completion."""
        url = self.model.base_url
        raw = self.client.chat.completions.with_raw_response.create(**params, timeout=timeout)
        http = raw.http_response
        problem: str | None
        try:
            parsed: object = raw.parse()
        except json.JSONDecodeError as exc:
            problem = f"a body that is not JSON: {type(exc).__name__}: {exc}"
        except (ValueError, openai.APIResponseValidationError) as exc:
            problem = f"JSON that is not a chat completion: {type(exc).__name__}: {exc}"
        else:
            problem = _completion_problem(parsed)
            if problem is None:
                assert isinstance(parsed, ChatCompletion)
                return parsed
        raise _BadAnswer(
            f"the endpoint {url} answered HTTP {raw.status_code} with {problem} ({_body(http)})"
        )
