"""One rule for every per-item failure: which errors are infrastructure (worth a retry), how an
error is described, and what a candidate whose step raised becomes."""

from __future__ import annotations

from taskmint.errors import EnvironmentBuildError, SandboxError
from taskmint.records import Verdict

try:  # the model endpoint's errors, when the `calibrate` extra is installed
    import openai
except ImportError:  # pragma: no cover - taskmint without the calibrate extra
    openai = None  # type: ignore[assignment]

__all__ = ["INFRA_RETRIES", "describe_error", "failure_verdict", "is_infrastructure_error"]

# Retries of a step that failed on infrastructure (a sandbox, a download, an endpoint).
INFRA_RETRIES = 2


def is_infrastructure_error(exc: BaseException) -> bool:
    """Whether `exc` is the machinery failing (worth a retry), not the work's own result."""
    if isinstance(exc, SandboxError | EnvironmentBuildError | ConnectionError | TimeoutError):
        return True
    if openai is not None:  # the model endpoint: 5xx, connection failures and timeouts (not 4xx)
        if isinstance(exc, openai.APIConnectionError | openai.APITimeoutError):
            return True
        if isinstance(exc, openai.APIStatusError):
            return exc.status_code >= 500
    # the cause chain: an infrastructure error wrapped in another exception
    cause = exc.__cause__ or exc.__context__
    return cause is not None and cause is not exc and is_infrastructure_error(cause)


def describe_error(exc: BaseException) -> str:
    """`Type: message` of an exception (and of the infrastructure error it wraps, if any)."""
    text = f"{type(exc).__name__}: {exc}".strip().rstrip(":")
    cause = exc.__cause__
    if cause is not None and cause is not exc and str(cause) not in text:
        text += f" (from {type(cause).__name__}: {cause})"
    return text[:2000]


def failure_verdict(candidate_id: str, exc: BaseException) -> Verdict:
    """What a candidate whose step raised becomes: one rule for every per-item failure.

    Infrastructure (after its retries) is `sandbox_error`; anything else is `internal_error`,
    a taskmint bug on this one candidate. Either way the real type and message are the reason,
    the batch goes on, and nothing is stored for it, so a rerun tries it again.
    """
    if is_infrastructure_error(exc):
        return Verdict(
            candidate_id=candidate_id,
            status="sandbox_error",
            reason=f"infrastructure error after retries: {describe_error(exc)}",
        )
    return Verdict(
        candidate_id=candidate_id,
        status="internal_error",
        reason=f"taskmint failed on this candidate: {describe_error(exc)}",
    )
