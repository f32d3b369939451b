"""Alerts: a Slack-compatible JSON message posted to a webhook when a run fails or when its
rate of infrastructure errors passes a threshold.

The message is `{"text": ..., "blocks": [...]}`, which Slack's incoming webhooks accept and
which Mattermost, Rocket.Chat and most chat bridges accept too (they read `text`). Posting
never raises: a webhook that is down must not turn a finished run into a failed one; the
outcome comes back as a value and the caller logs it.
"""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass

from taskmint.config import PipelineConfig

__all__ = [
    "AlertConfig",
    "AlertOutcome",
    "alert_failure",
    "alert_infra_rate",
    "infra_error_rate",
    "post_alert",
    "should_alert",
]

log = logging.getLogger("taskmint.pipeline")


@dataclass(frozen=True, slots=True, kw_only=True)
class AlertConfig:
    """Where to post and when; no URL means alerts are off."""

    webhook_url: str | None = None
    # alert when infrastructure errors / attempted work items passes this fraction
    infra_error_threshold: float = 0.2
    timeout: float = 10.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.infra_error_threshold <= 1.0:
            raise ValueError(
                f"infra_error_threshold must be between 0 and 1, got {self.infra_error_threshold}"
            )
        if self.webhook_url is not None and not self.webhook_url.startswith(
            ("http://", "https://")
        ):
            raise ValueError(f"webhook URL must be http(s), got {self.webhook_url!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class AlertOutcome:
    """What happened to one alert."""

    sent: bool
    status: int | None = None
    error: str | None = None


def infra_error_rate(infra_errors: int, items: int) -> float:
    """Infrastructure errors per attempted item (0.0 when nothing was attempted)."""
    return infra_errors / items if items > 0 else 0.0


def should_alert(infra_errors: int, items: int, config: AlertConfig) -> bool:
    """Whether the infrastructure error rate passes (is above) the threshold."""
    return items > 0 and infra_error_rate(infra_errors, items) > config.infra_error_threshold


def _message(title: str, lines: list[str], fields: Mapping[str, object]) -> dict[str, object]:
    text = "\n".join([f"*{title}*", *lines])
    blocks: list[dict[str, object]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": text}},
    ]
    if fields:
        blocks.append(
            {
                "type": "section",
                "fields": [
                    {"type": "mrkdwn", "text": f"*{k}*\n{v}"} for k, v in list(fields.items())[:10]
                ],
            }
        )
    return {"text": text, "blocks": blocks}


def post_alert(
    config: AlertConfig,
    title: str,
    lines: list[str] | None = None,
    fields: Mapping[str, object] | None = None,
) -> AlertOutcome:
    """POST one Slack-compatible message; returns whether it was accepted (2xx)."""
    if not config.webhook_url:
        return AlertOutcome(sent=False, error="no webhook configured")
    body = json.dumps(_message(title, lines or [], fields or {})).encode("utf-8")
    request = urllib.request.Request(
        config.webhook_url,
        data=body,
        headers={"content-type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=config.timeout) as response:
            status = int(response.status)
    except urllib.error.HTTPError as exc:
        return AlertOutcome(sent=False, status=exc.code, error=f"webhook answered {exc.code}")
    except (urllib.error.URLError, OSError) as exc:
        return AlertOutcome(sent=False, error=f"webhook unreachable: {exc}")
    return AlertOutcome(sent=200 <= status < 300, status=status)


def _alerts(config: PipelineConfig) -> AlertConfig:
    return AlertConfig(
        webhook_url=config.alert_webhook, infra_error_threshold=config.infra_error_threshold
    )


def alert_failure(config: PipelineConfig, run_name: str, exc: BaseException) -> None:
    """Post the failure of a run to the configured webhook (if any)."""
    if not config.alert_webhook:
        return
    outcome = post_alert(
        _alerts(config),
        f"taskmint: {run_name} failed",
        [f"{type(exc).__name__}: {exc}"[:1000]],
        {"output": config.output_root, "seeds": config.seeds_manifest},
    )
    if not outcome.sent:
        log.warning("alert not delivered: %s", outcome.error)


def alert_infra_rate(config: PipelineConfig, run_name: str, infra: int, items: int) -> bool:
    """Post when the infrastructure error rate passes the threshold; whether it did."""
    alerts = _alerts(config)
    if not config.alert_webhook or not should_alert(infra, items, alerts):
        return False
    outcome = post_alert(
        alerts,
        f"taskmint: {run_name}: infrastructure error rate {infra / items:.0%}",
        [
            f"{infra} of {items} work items failed on infrastructure (threshold "
            f"{alerts.infra_error_threshold:.0%}): sandboxes or model endpoints are failing."
        ],
        {"output": config.output_root, "seeds": config.seeds_manifest},
    )
    if not outcome.sent:
        log.warning("alert not delivered: %s", outcome.error)
    return outcome.sent
