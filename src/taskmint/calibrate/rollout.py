"""The attempt loop: one model's attempt at one task, graded.

`run_attempt` writes the task's policy view (what a policy being trained sees: the broken tree,
no hidden tests, no answer), gives the model the problem statement (plus the first `hint_level`
graded hints) and the tools of `calibrate.tools`, and loops over chat completions
(`endpoint.ChatSession`) with tool calls until the model submits, gives up, or a budget (turns,
tokens, wall time) runs out. The workspace's diff against the policy view is then graded by
`taskmint.verify.grade_patch` - the same reward a trainer gets - whatever way the loop ended.

Every outcome is an `Attempt` value: an endpoint that fails (`endpoint.EndpointFailure`) ends
the attempt as an infrastructure error (`infra_error=True`, not graded), which the sequential
estimate does not count as a failure of the model.
"""

from __future__ import annotations

import json
import random
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from taskmint.calibrate.endpoint import ChatSession, EndpointFailure
from taskmint.calibrate.models import ModelConfig
from taskmint.calibrate.results import Attempt, StopReason
from taskmint.calibrate.tools import SandboxTests, Toolbox, workspace_diff
from taskmint.config import Limits, VerifyConfig
from taskmint.records import Environment, SeedApp, Task
from taskmint.sandbox.base import Sandbox
from taskmint.scratch import make_scratch, make_staging
from taskmint.verify import grade_patch, policy_view

if TYPE_CHECKING:
    from openai import OpenAI

__all__ = ["NUDGE", "SYSTEM_PROMPT", "prompt_for", "run_attempt"]

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


def prompt_for(task: Task, hint_level: int = 0) -> str:
    """The first user message: the problem statement and the first `hint_level` hints."""
    parts = [task.problem_statement.strip()]
    hints = task.hints[:hint_level]
    if hints:
        parts.append("## Hints\n\n" + "\n\n".join(f"{i}. {h}" for i, h in enumerate(hints, 1)))
    parts.append(f"The visible tests run with: `{task.test_command}` (use the run_tests tool).")
    return "\n\n".join(parts)


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
    """Let `model` attempt `task` once and grade its diff with `grade_patch`; never raises for
    the model's or the endpoint's behaviour.

    `attempt_index` varies the sampling seed (when the model has one) and the retry jitter, so
    repeated attempts are independent samples yet reproducible. `verify_config` is the run's
    `[verify]` config: the attempt is graded as a trainer's rollout would be.
    """
    started = time.monotonic()
    budget = model.budget
    loop = ChatSession(model, client, started + budget.wall_seconds, random.Random(attempt_index))
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
            except EndpointFailure as exc:
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
        graded = grade_patch(
            task,
            patch,
            seed=seed,
            env=env,
            sandbox=sandbox,
            limits=limits,
            config=verify_config or VerifyConfig(),
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
