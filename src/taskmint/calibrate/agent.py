"""The agent harness: one model's attempt at one task, through the `openai` client.

`run_attempt` writes the task's policy view (what a policy being trained sees: the broken tree,
no hidden tests, no answer), gives the model the problem statement (plus the first `hint_level`
graded hints) and the tools of `calibrate.tools`, and loops over chat completions with tool
calls until the model submits, gives up, or a budget (turns, tokens, wall time) runs out. The
workspace's diff against the policy view is then graded by `taskmint.verify.verify` - the same
reward a trainer gets - whatever way the loop ended.

Every outcome is an `Attempt` value. Failures of the endpoint (unreachable, timeouts, 429 and
5xx after the retries, a refused request, an answer that is not JSON or no chat completion) are
attempts with `infra_error=True` and a reason naming the endpoint, which the sequential estimate
does not count as a failure of the model. Only what retrying can mend is retried: 5xx, 429,
timeouts, broken connections and garbled answers, not 401 or 404. A request's `request_timeout`
bounds the whole request, however slowly its answer's bytes come. In `calibrate_models`, an
attempt that raises anyway is recorded as an infrastructure error too: one attempt (or model)
never takes the others' results with it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import importlib
import json
import random
import re
import shutil
import threading
import time
import traceback
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any, Literal, Protocol

import openai
from openai import OpenAI
from openai.types.chat import ChatCompletion, ChatCompletionMessage

from taskmint.calibrate.bands import is_retired
from taskmint.calibrate.models import CalibrationConfig, ModelConfig, resolve_api_key
from taskmint.calibrate.sequential import SequentialPolicy, run_sequential
from taskmint.calibrate.tools import SandboxTests, Toolbox, workspace_diff
from taskmint.config import Limits, VerifyConfig
from taskmint.records import Calibration, Environment, SeedApp, Task
from taskmint.sandbox.base import Sandbox
from taskmint.scratch import make_scratch, make_staging
from taskmint.verify import policy_view, verify

__all__ = [
    "Attempt",
    "AttemptStore",
    "StopReason",
    "TaskCalibration",
    "attempt_key",
    "calibrate_models",
    "make_client",
    "prompt_for",
    "row_name",
    "run_attempt",
]

StopReason = Literal[
    "submitted",  # the model called submit
    "gave_up",  # the model stopped calling tools
    "max_turns",
    "max_tokens",
    "wall_time",
    "context_exhausted",  # the endpoint refused a conversation longer than its context
    "api_error",  # the endpoint failed (infrastructure; the attempt does not count)
]

SYSTEM_PROMPT = """\
You are a software engineer working in a repository checked out at its root. A feature of the
project has been removed and you must restore it. Work only through the tools: list_files,
read_file and search to explore; edit_file (exact search-and-replace) or apply_patch (a unified
diff) to change files; run_tests to run the project's visible tests in a sandbox; submit when
you are done. Change only source files: tests and test configuration are restored before
grading. Hidden tests check the same behaviour, so implement it properly rather than for the
visible tests alone. There is no network access. Call exactly one tool per step when unsure.
"""

NUDGE = (
    "Continue by calling one of the tools. When the feature is restored, call submit; "
    "replying without a tool call again ends the attempt."
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Attempt:
    """One model's attempt at one task, graded."""

    task_id: str
    model: str  # the configured name
    model_id: str  # the model id the endpoint reported ("" if it never answered)
    hint_level: int
    reward: float
    stop: StopReason
    reason: str
    infra_error: bool = False
    turns: int = 0
    tool_calls: int = 0
    tool_errors: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    wall_time: float = 0.0
    retries: int = 0
    patch: str = ""

    @property
    def solved(self) -> bool:
        """Whether the verifier gave full reward."""
        return self.reward >= 1.0

    @property
    def tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens


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
    """An `OpenAI` client for `model`'s endpoint; retries are ours (see `run_attempt`).

    `model.budget.request_timeout` bounds each request as a whole (see `_WholeRequestTimeout`).
    """
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


def prompt_for(task: Task, hint_level: int = 0) -> str:
    """The first user message: the problem statement and the first `hint_level` hints."""
    parts = [task.problem_statement.strip()]
    hints = task.hints[:hint_level]
    if hints:
        parts.append("## Hints\n\n" + "\n\n".join(f"{i}. {h}" for i, h in enumerate(hints, 1)))
    parts.append(f"The visible tests run with: `{task.test_command}` (use the run_tests tool).")
    return "\n\n".join(parts)


class _EndpointFailure(Exception):
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


class _Loop:
    """The state of one attempt's conversation."""

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
                raise _EndpointFailure("wall_time", "the wall-time budget ran out", infra=False)
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
                    raise _EndpointFailure(
                        "context_exhausted",
                        f"the conversation outgrew the context: {exc}",
                        infra=False,
                    ) from exc
                # 4xx other than 429: a configuration problem; retrying cannot help
                raise _EndpointFailure(
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
                    raise _EndpointFailure(
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
                raise _EndpointFailure("api_error", f"{last}; no time left to retry", infra=True)
            time.sleep(delay)
        raise _EndpointFailure(
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


def run_attempt(
    task: Task,
    *,
    seed: SeedApp,
    env: Environment,
    sandbox: Sandbox,
    limits: Limits,
    model: ModelConfig,
    client: OpenAI,
    hint_level: int = 0,
    attempt_index: int = 0,
    workdir: Path | None = None,
    verify_config: VerifyConfig | None = None,
) -> Attempt:
    """Let `model` attempt `task` once and grade its diff with `verify`; never raises for the
    model's or the endpoint's behaviour.

    `attempt_index` varies the sampling seed (when the model has one) and the retry jitter, so
    repeated attempts are independent samples yet reproducible. `verify_config` is the run's
    `[verify]` config: the attempt is graded as a trainer's rollout would be.
    """
    started = time.monotonic()
    budget = model.budget
    loop = _Loop(model, client, started + budget.wall_seconds, random.Random(attempt_index))
    tmp = (
        make_staging("taskmint-attempt-", workdir)
        if workdir is not None
        else make_scratch("taskmint-attempt-")
    )
    turns = tool_calls = tool_errors = 0
    stop: StopReason = "max_turns"
    reason = ""
    infra = False
    try:
        view = policy_view(task, seed, tmp / "view")
        ws = tmp / "ws"
        shutil.copytree(view, ws, symlinks=True)
        visible = tuple(dict.fromkeys((*task.FAIL_TO_PASS, *task.PASS_TO_PASS)))
        tests = SandboxTests(
            manifest=seed.manifest, env=env, sandbox=sandbox, limits=limits, visible=visible
        )
        box = Toolbox(ws, tests=tests, max_output=budget.max_tool_output)
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": prompt_for(task, hint_level)},
        ]
        silent = 0
        sample_seed = None if model.seed is None else model.seed + attempt_index
        while True:
            if turns >= budget.max_turns:
                stop, reason = "max_turns", f"no submission within {budget.max_turns} turns"
                break
            if loop.prompt_tokens + loop.completion_tokens >= budget.max_tokens:
                stop, reason = "max_tokens", f"the token budget ({budget.max_tokens}) ran out"
                break
            try:
                response = loop.complete(messages, box.specs, sample_seed)
            except _EndpointFailure as exc:
                stop, reason, infra = exc.stop, exc.reason, exc.infra
                break
            turns += 1
            msg = response.choices[0].message  # `complete` checked there is one
            calls = list(msg.tool_calls or [])
            entry: dict[str, Any] = {"role": "assistant", "content": _text(msg.content)}
            if calls:
                entry["tool_calls"] = [_wire_call(c, i) for i, c in enumerate(calls)]
            messages.append(entry)
            if not calls:
                silent += 1
                if silent >= 2:
                    stop, reason = "gave_up", "the model stopped calling tools"
                    break
                messages.append({"role": "user", "content": NUDGE})
                continue
            silent = 0
            submitted = False
            for sent in entry["tool_calls"]:
                tool_calls += 1
                fn = sent["function"]
                if submitted:
                    outcome_text, is_error = "error: ignored, the attempt was submitted", True
                else:
                    outcome = box.call(fn["name"], fn["arguments"])
                    outcome_text, is_error = outcome.content, outcome.error
                    submitted = outcome.submitted
                tool_errors += int(is_error)
                messages.append(
                    {"role": "tool", "tool_call_id": sent["id"], "content": outcome_text}
                )
            if submitted:
                stop, reason = "submitted", "submitted"
                break
            if time.monotonic() >= loop.deadline:
                stop, reason = "wall_time", "the wall-time budget ran out"
                break
        patch = workspace_diff(view, ws)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    reward = 0.0
    if infra:
        pass  # an attempt the endpoint broke is not graded: it says nothing about the model
    elif not patch:
        reason = f"{reason}; no changes were made"
    else:
        graded = verify(
            task,
            patch,
            seed=seed,
            env=env,
            sandbox=sandbox,
            limits=limits,
            config=verify_config,
        )
        reward, reason = graded.reward, f"{reason}; {graded.reason}"
    return Attempt(
        task_id=task.instance_id,
        model=model.name,
        model_id=loop.model_id,
        hint_level=hint_level,
        reward=reward,
        stop=stop,
        reason=reason,
        infra_error=infra,
        turns=turns,
        tool_calls=tool_calls,
        tool_errors=tool_errors,
        prompt_tokens=loop.prompt_tokens,
        completion_tokens=loop.completion_tokens,
        cost=round(model.cost(loop.prompt_tokens, loop.completion_tokens), 6),
        wall_time=round(time.monotonic() - started, 3),
        retries=loop.retries,
        patch=patch,
    )


def _text(content: object) -> str:
    """An assistant message's content as text (None, or odd types some endpoints send)."""
    if content is None or isinstance(content, str):
        return content or ""
    return json.dumps(content, default=str)


def _wire_call(call: object, index: int) -> dict[str, Any]:
    """A tool call as it goes back into the conversation, whatever fields the endpoint left
    out (a call without a name reaches the toolbox as an unknown tool, the model's error)."""
    fn = getattr(call, "function", None)
    name = getattr(fn, "name", None)
    arguments = getattr(fn, "arguments", None)
    if arguments is not None and not isinstance(arguments, str):
        arguments = json.dumps(arguments, default=str)  # some endpoints send an object
    ident = getattr(call, "id", None)
    return {
        "id": ident if isinstance(ident, str) and ident else f"call_{index}",
        "type": "function",
        "function": {"name": name if isinstance(name, str) else "", "arguments": arguments or ""},
    }


class AttemptStore(Protocol):
    """Where finished attempts are kept across runs (`flows.resume.ResultStore` is one)."""

    def get(self, key: str) -> tuple[bool, Any]: ...

    def put(self, key: str, value: Any) -> None: ...


def attempt_key(
    task: Task, model: ModelConfig, hint_level: int, index: int, verify_config: VerifyConfig | None
) -> str:
    """The store key of one attempt: what it saw (the task's text and code), who made it (the
    model's whole configuration), with which hints, which sample, graded how."""
    blob = json.dumps(
        [
            "attempt",
            task.instance_id,
            task.problem_statement,
            list(task.hints),
            task.breaking_patch,
            task.patch,
            repr(model),
            hint_level,
            index,
            repr(verify_config),
        ],
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(blob.encode("utf-8", "surrogateescape")).hexdigest()


def _failed_attempt(key: tuple[str, str, int], exc: Exception) -> Attempt:
    """The record of an attempt that raised: an infrastructure error saying what and where."""
    where = ""
    frames = traceback.extract_tb(exc.__traceback__)
    if frames:
        last = frames[-1]
        where = f" (at {Path(last.filename).name}:{last.lineno} in {last.name})"
    return Attempt(
        task_id=key[0],
        model=key[1],
        model_id="",
        hint_level=key[2],
        reward=0.0,
        stop="api_error",
        reason=f"the attempt failed: {type(exc).__name__}: {exc}{where}",
        infra_error=True,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskCalibration:
    """Everything calibration learned about one task across the configured models.

    `calibrations` holds one row per (model, hint level): the model's name for no hint,
    `name@hintK` with the first K hints. `min_hint_level` is, per model, the smallest
    configured hint level at which it solved the task at least once (None: never).
    `attempts` holds every attempt made, infrastructure errors included, in the order made.
    """

    instance_id: str
    calibrations: tuple[Calibration, ...]
    bands: tuple[tuple[str, str], ...]  # (model, band) without hints
    min_hint_level: tuple[tuple[str, int | None], ...]
    retired: bool
    model_ids: tuple[tuple[str, str], ...] = ()  # (model, id the endpoint reported)
    wall_time: float = 0.0
    errors: tuple[str, ...] = ()
    attempts: tuple[Attempt, ...] = ()


def row_name(model: str, hint_level: int) -> str:
    """The `Calibration.model` of a (model, hint level) row."""
    return model if hint_level == 0 else f"{model}@hint{hint_level}"


def calibrate_models(
    tasks: Sequence[Task],
    *,
    config: CalibrationConfig,
    seed_for: Callable[[Task], SeedApp],
    env_for: Callable[[Task], Environment],
    sandbox: Sandbox,
    limits: Limits,
    environ: Mapping[str, str],
    today: str | None = None,
    workdir: Path | None = None,
    policy: SequentialPolicy | None = None,
    verify_config: VerifyConfig | None = None,
    store: AttemptStore | None = None,
) -> list[TaskCalibration]:
    """Calibrate every task against every configured model (and hint level) sequentially.

    Attempts of one model run `model.concurrency` at a time. A missing API key raises
    `MissingApiKeyError` before any attempt; everything after that is a value: an attempt that
    raises is an infrastructure error of its own key, and a key with `max_infra_errors` of them
    in a row stops with an error in `TaskCalibration.errors` while the other keys go on.
    `verify_config` is how attempts are graded (the run's `[verify]` config). With a `store`,
    each graded attempt is kept as it finishes and a rerun takes it from there (`attempt_key`)
    instead of asking the model again: a calibration stopped part way loses no finished
    attempt. Infrastructure errors are not kept: a rerun tries those again.
    """
    date = today or dt.date.today().isoformat()
    policy = policy or SequentialPolicy.from_config(config)
    keys = [
        (t.instance_id, m.name, h) for t in tasks for m in config.models for h in config.hint_levels
    ]
    by_id = {t.instance_id: t for t in tasks}
    clients = {m.name: make_client(m, resolve_api_key(m, environ)) for m in config.models}
    spent: dict[tuple[str, str, int], list[Attempt]] = {k: [] for k in keys}

    def one(key: tuple[str, str, int], index: int) -> Attempt:
        task = by_id[key[0]]
        stored = None
        if store is not None:
            stored = attempt_key(task, config.model(key[1]), key[2], index, verify_config)
            found, value = store.get(stored)
            if found and isinstance(value, Attempt):
                return value
        try:
            attempt = run_attempt(
                task,
                seed=seed_for(task),
                env=env_for(task),
                sandbox=sandbox,
                limits=limits,
                model=config.model(key[1]),
                client=clients[key[1]],
                hint_level=key[2],
                attempt_index=index,
                workdir=workdir,
                verify_config=verify_config,
            )
        except Exception as exc:  # never lose the other attempts' results to one attempt
            return _failed_attempt(key, exc)
        if store is not None and stored is not None and not attempt.infra_error:
            store.put(stored, attempt)
        return attempt

    def sample(batch: list[tuple[str, str, int]]) -> list[bool | None]:
        results: dict[tuple[str, str, int], Attempt] = {}
        for model in config.models:
            mine = [k for k in batch if k[1] == model.name]
            with ThreadPoolExecutor(max_workers=model.concurrency) as pool:
                futures = {k: pool.submit(one, k, len(spent[k])) for k in mine}
                results.update({k: f.result() for k, f in futures.items()})
        out: list[bool | None] = []
        for k in batch:
            spent[k].append(results[k])
            out.append(None if results[k].infra_error else results[k].solved)
        return out

    try:
        # a (model, hint level) is a group; the keys of one task share its difficulty
        estimates = run_sequential(
            keys, sample, policy, group=lambda k: (k[1], k[2]), task=lambda k: k[0]
        )
    finally:
        for client in clients.values():
            client.close()
    out = []
    for task in tasks:
        rows, bands, ladder, ids, errors = [], [], [], {}, []
        for m in config.models:
            solved_at: int | None = None
            for h in config.hint_levels:
                key = (task.instance_id, m.name, h)
                est, attempts = estimates[key], spent[key]
                graded = [a for a in attempts if not a.infra_error]
                for a in graded:
                    if a.model_id:
                        ids[m.name] = a.model_id
                if est.error:
                    last = attempts[-1].reason if attempts else ""
                    errors.append(f"{row_name(m.name, h)}: {est.error}: {last}")
                if est.attempts == 0:
                    continue
                rows.append(
                    Calibration(
                        model=row_name(m.name, h),
                        attempts=est.attempts,
                        solves=est.solves,
                        rate=est.rate,
                        interval_low=est.interval_low,
                        interval_high=est.interval_high,
                        date=date,
                        tokens=sum(a.tokens for a in attempts),
                        cost=round(sum(a.cost for a in attempts), 6),
                    )
                )
                if h == 0 and est.band is not None:
                    bands.append((m.name, est.band))
                if est.solves and (solved_at is None or h < solved_at):
                    solved_at = h
            ladder.append((m.name, solved_at))
        made = tuple(
            a
            for m in config.models
            for h in config.hint_levels
            for a in spent[(task.instance_id, m.name, h)]
        )
        out.append(
            TaskCalibration(
                instance_id=task.instance_id,
                calibrations=tuple(rows),
                bands=tuple(bands),
                min_hint_level=tuple(ladder),
                retired=is_retired(
                    rows, [m.name for m in config.models], retire_at=config.retire_at
                ),
                model_ids=tuple(sorted(ids.items())),
                wall_time=round(sum(a.wall_time for a in made), 3),
                errors=tuple(errors),
                attempts=made,
            )
        )
    return out
