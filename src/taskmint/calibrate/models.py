"""Model configuration for calibration: which OpenAI-compatible endpoints to calibrate against.

A calibration config is a TOML file read at the edge (the CLI or a flow) and passed into the
calibration functions as records. It never holds a secret: each model names the environment
variable that holds its API key (`api_key_env`), and `resolve_api_key` reads that variable from
a mapping the caller passes in (the CLI passes `os.environ`). A key written into the file is
refused with a message saying what to do instead.

```toml
[calibration]
cap = 16                 # most attempts per (task, model)
min_attempts = 2
confidence = 0.95        # posterior mass that must fall inside one band (widened by the margin)
margin = 0.1             # indifference zone around band edges
hint_levels = [0]        # 0 = no hint; k = hints[:k] given to the model
retire_at = 0.9
rule = "threshold"       # or "optimal": Bayes-optimal stopping for an expected misplacement
target_error = 0.05      # ... of at most this much per key (rule = "optimal" only)
prior = "auto"           # "joint": share strength across the models of each task (an
                         # item-response model); "auto" = joint with rule = "threshold";
                         # "pooled": each (model, hint) on its own; "uniform"
joint_weight = "fit"     # the joint prior's weight against the pooled one, or a number in [0, 1)

[calibration.bands]      # band -> lowest solve rate in it; the band with 0.0 is the floor
easy = 0.8
medium = 0.5
hard = 0.2
frontier = 0.05
unsolved = 0.0

[[model]]
name = "qwen-coder-7b"
base_url = "http://127.0.0.1:8000/v1"
model = "Qwen/Qwen2.5-Coder-7B-Instruct"
api_key_env = ""          # empty: the endpoint needs no key
temperature = 0.7
concurrency = 4
price_input_per_mtok = 0.0
price_output_per_mtok = 0.0
```
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from taskmint.errors import ManifestError, TaskmintError

__all__ = [
    "DEFAULT_BANDS",
    "AgentBudget",
    "CalibrationConfig",
    "MissingApiKeyError",
    "ModelConfig",
    "load_calibration_config",
    "resolve_api_key",
]

_FROZEN = {"frozen": True, "slots": True, "kw_only": True}

# band name -> lowest solve rate that falls in it (highest first)
DEFAULT_BANDS: tuple[tuple[str, float], ...] = (
    ("easy", 0.8),
    ("medium", 0.5),
    ("hard", 0.2),
    ("frontier", 0.05),
    ("unsolved", 0.0),
)
# Keys that look like a secret: a config file must never hold one.
_SECRET_KEYS = frozenset({"api_key", "key", "token", "secret", "password", "authorization"})


class MissingApiKeyError(TaskmintError, KeyError):
    """A model's `api_key_env` names an environment variable that is not set."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


@dataclass(**_FROZEN)
class AgentBudget:
    """Limits on one attempt: assistant turns, total tokens, wall-clock seconds."""

    max_turns: int = 40
    max_tokens: int = 400_000  # prompt + completion tokens summed over the attempt
    wall_seconds: float = 1800.0
    request_timeout: float = 120.0  # one HTTP request
    max_retries: int = 4  # per request, on 429, 5xx, connection errors and timeouts
    backoff_base: float = 1.0  # seconds; doubled per retry, with jitter
    backoff_max: float = 60.0
    max_tool_output: int = 12_000  # characters of one tool result shown to the model

    def __post_init__(self) -> None:
        for name in ("max_turns", "max_tokens", "wall_seconds", "request_timeout"):
            if getattr(self, name) <= 0:
                raise ManifestError(f"budget {name} must be positive, got {getattr(self, name)}")
        if self.max_retries < 0 or self.backoff_base < 0 or self.backoff_max < 0:
            raise ManifestError("budget max_retries, backoff_base and backoff_max must be >= 0")


@dataclass(**_FROZEN)
class ModelConfig:
    """One model to calibrate against, reached through an OpenAI-compatible endpoint.

    `name` is the id recorded in calibration rows (stable across endpoints); `model` is what the
    endpoint calls it. `api_key_env` is the name of the environment variable holding the key,
    or "" for endpoints that need none (local vLLM, SGLang, Ollama).
    """

    name: str
    base_url: str
    model: str
    api_key_env: str = ""
    temperature: float = 0.7
    top_p: float | None = None
    max_completion_tokens: int = 4096  # per response
    # the request field carrying it: "max_tokens" (vLLM, Ollama, most proxies) or
    # "max_completion_tokens" (OpenAI's newer models)
    max_tokens_param: str = "max_tokens"
    seed: int | None = None
    concurrency: int = 1
    price_input_per_mtok: float = 0.0  # dollars per million prompt tokens
    price_output_per_mtok: float = 0.0  # dollars per million completion tokens
    budget: AgentBudget = field(default_factory=AgentBudget)

    def __post_init__(self) -> None:
        if not self.name or not self.model:
            raise ManifestError("a model needs a non-empty `name` and `model`")
        if not self.base_url.startswith(("http://", "https://")):
            raise ManifestError(
                f"model {self.name}: base_url must start with http:// or https://, "
                f"got {self.base_url!r}"
            )
        if self.concurrency < 1:
            raise ManifestError(f"model {self.name}: concurrency must be at least 1")
        if self.price_input_per_mtok < 0 or self.price_output_per_mtok < 0:
            raise ManifestError(f"model {self.name}: prices cannot be negative")
        if self.max_tokens_param not in ("max_tokens", "max_completion_tokens"):
            raise ManifestError(
                f"model {self.name}: max_tokens_param must be max_tokens or max_completion_tokens"
            )
        if self.max_completion_tokens < 1:
            raise ManifestError(f"model {self.name}: max_completion_tokens must be positive")

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        """Dollars for the given token counts at this model's prices."""
        return (
            prompt_tokens * self.price_input_per_mtok
            + completion_tokens * self.price_output_per_mtok
        ) / 1e6


@dataclass(**_FROZEN)
class CalibrationConfig:
    """The models to calibrate against and how the sequential estimate stops.

    `bands` maps band names to the lowest solve rate in each band, highest first, ending at 0.0.
    """

    models: tuple[ModelConfig, ...] = ()
    bands: tuple[tuple[str, float], ...] = DEFAULT_BANDS
    cap: int = 16
    min_attempts: int = 2
    confidence: float = 0.95
    margin: float = 0.1
    hint_levels: tuple[int, ...] = (0,)
    retire_at: float = 0.9
    rule: str = "threshold"  # or "optimal": see calibrate.sequential
    target_error: float = 0.05  # expected misplacement per key the "optimal" rule aims at
    prior: str = "auto"  # "auto", "joint", "pooled" or "uniform": see calibrate.sequential
    joint_weight: float | str = "fit"  # "fit" or the joint prior's weight in [0, 1)

    def __post_init__(self) -> None:
        names = [m.name for m in self.models]
        if len(set(names)) != len(names):
            raise ManifestError(f"model names must be unique, got {names}")
        lows = [low for _, low in self.bands]
        if not self.bands or lows != sorted(lows, reverse=True) or len(set(lows)) != len(lows):
            raise ManifestError(
                "bands must list distinct lower bounds from the highest to 0.0, e.g. "
                "easy = 0.8, medium = 0.5, hard = 0.2, frontier = 0.05, unsolved = 0.0"
            )
        if lows[-1] != 0.0 or lows[0] > 1.0:
            raise ManifestError("the lowest band must start at 0.0 and none above 1.0")
        if not 1 <= self.min_attempts <= self.cap:
            raise ManifestError("need 1 <= min_attempts <= cap")
        if not 0.5 < self.confidence < 1.0:
            raise ManifestError("confidence must be between 0.5 and 1.0 (e.g. 0.95)")
        if not 0.0 <= self.margin < 0.5 or math.isnan(self.margin):
            raise ManifestError("margin must be in [0, 0.5)")
        if any(k < 0 for k in self.hint_levels) or not self.hint_levels:
            raise ManifestError("hint_levels must be non-negative integers, e.g. [0, 1, 2]")
        if not 0.0 < self.retire_at <= 1.0:
            raise ManifestError("retire_at must be in (0, 1]")
        if self.rule not in ("threshold", "optimal"):
            raise ManifestError("rule must be 'threshold' or 'optimal'")
        if not 0.0 < self.target_error < 0.5:
            raise ManifestError("target_error must be in (0, 0.5), e.g. 0.05")
        if self.prior not in ("auto", "joint", "pooled", "uniform"):
            raise ManifestError("prior must be 'auto', 'joint', 'pooled' or 'uniform'")
        if self.prior == "joint" and self.rule != "threshold":
            raise ManifestError("prior = 'joint' works with rule = 'threshold' only")
        weight = self.joint_weight
        if weight != "fit" and (isinstance(weight, (str, bool)) or not 0.0 <= float(weight) < 1.0):
            raise ManifestError('joint_weight must be "fit" or a number in [0, 1), e.g. 0.9')

    def model(self, name: str) -> ModelConfig:
        """The model called `name`."""
        for m in self.models:
            if m.name == name:
                return m
        raise ManifestError(f"no model {name!r}; configured: {[m.name for m in self.models]}")


def resolve_api_key(model: ModelConfig, environ: Mapping[str, str]) -> str:
    """The API key for `model`, read from `environ[model.api_key_env]`.

    Endpoints that need no key (`api_key_env = ""`) get a placeholder, since the client
    insists on a non-empty string.
    """
    if not model.api_key_env:
        return "unused"
    value = environ.get(model.api_key_env, "")
    if not value:
        raise MissingApiKeyError(
            f"model {model.name}: set the environment variable {model.api_key_env} to its API "
            'key (or set api_key_env = "" for an endpoint that needs none)'
        )
    return value


def _check_no_secret(where: str, table: Mapping[str, Any]) -> None:
    found = sorted(k for k in table if k.lower() in _SECRET_KEYS)
    if found:
        raise ManifestError(
            f"{where}: {found} looks like a secret; config files never hold keys. Put the key "
            'in an environment variable and name it with api_key_env = "VARIABLE_NAME"'
        )


def _model(entry: Mapping[str, Any], index: int) -> ModelConfig:
    where = f"[[model]] #{index + 1}"
    _check_no_secret(where, entry)
    data = dict(entry)
    budget = data.pop("budget", {})
    known = {f.name for f in dataclasses.fields(ModelConfig)} - {"budget"}
    unknown = set(data) - known
    if unknown:
        raise ManifestError(f"{where}: unknown keys {sorted(unknown)}; known: {sorted(known)}")
    try:
        return ModelConfig(budget=AgentBudget(**budget), **data)
    except TypeError as exc:
        raise ManifestError(f"{where}: {exc}") from exc


def load_calibration_config(path: Path) -> CalibrationConfig:
    """Read a calibration TOML (see the module docstring); no file means no models."""
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ManifestError(f"cannot read calibration config {path}: {exc}") from exc
    section = dict(data.get("calibration", {}))
    _check_no_secret("[calibration]", section)
    bands = section.pop("bands", None)
    models = tuple(_model(m, i) for i, m in enumerate(data.get("model", [])))
    kwargs: dict[str, Any] = {"models": models}
    if bands is not None:
        kwargs["bands"] = tuple(
            sorted(((str(k), float(v)) for k, v in bands.items()), key=lambda kv: -kv[1])
        )
    if "hint_levels" in section:
        section["hint_levels"] = tuple(int(k) for k in section["hint_levels"])
    known = {f.name for f in dataclasses.fields(CalibrationConfig)} - {"models", "bands"}
    unknown = set(section) - known
    if unknown:
        raise ManifestError(
            f"[calibration]: unknown keys {sorted(unknown)}; known: {sorted(known)}"
        )
    extra = set(data) - {"calibration", "model"}
    if extra:
        raise ManifestError(f"{path}: unknown tables {sorted(extra)}; use [calibration], [[model]]")
    return CalibrationConfig(**kwargs, **section)
