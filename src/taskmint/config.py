"""Configuration records, loaded at the edges (CLI, flows) and passed into the stages.

Stages never read environment variables or global paths; they take these records.
"""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

from taskmint.errors import ManifestError
from taskmint.records import StatementStyle, Strategy, as_strategy

__all__ = [
    "MIN_PYTEST",
    "FeatureSize",
    "Knobs",
    "KnobsError",
    "Limits",
    "PipelineConfig",
    "SandboxConfig",
    "StrengthConfig",
    "VerifyConfig",
    "load_config",
]


Range = tuple[float | None, float | None]

# The oldest pytest taskmint's in-sandbox plugin supports (`runners/inside`): environments get
# no older one (`envs`), and a project's pytest pin below it is dropped (`acquire`).
MIN_PYTEST = "8.0"


class KnobsError(ManifestError):
    """A knob range is malformed."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Knobs:
    """Optional inclusive (min, max) ranges on the static features; None on a side: unbounded.

    `strategies` restricts the strategy (None: any).
    """

    lines_removed: Range | None = None
    units: Range | None = None
    files: Range | None = None
    callers: Range | None = None
    complexity: Range | None = None
    has_docstring: bool | None = None
    strategies: tuple[Strategy, ...] | None = None

    def __post_init__(self) -> None:
        for name in self.strategies or ():
            as_strategy(name, error=KnobsError, where="knobs.strategies")
        for f in fields(self):
            if f.name in ("strategies", "has_docstring"):
                continue
            rng = getattr(self, f.name)
            if rng is None:
                continue
            if not isinstance(rng, tuple) or len(rng) != 2:
                raise KnobsError(f"knob {f.name} must be a (min, max) pair, got {rng!r}")
            low, high = rng
            if low is not None and high is not None and low > high:
                raise KnobsError(
                    f"knob {f.name}: min {low} is above max {high}; swap them or use None"
                )

    def ranges(self) -> dict[str, Range]:
        """The feature ranges that are set."""
        out: dict[str, Range] = {}
        for name in ("lines_removed", "units", "files", "callers", "complexity"):
            rng = getattr(self, name)
            if rng is not None:
                out[name] = rng
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """Resource limits for one sandboxed run."""

    wall_seconds: float = 120.0
    cpu_seconds: int = 300
    memory_bytes: int = 4 * 1024**3
    processes: int = 256
    file_bytes: int = 256 * 1024**2
    output_bytes: int = 256 * 1024
    open_files: int = 1024

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            if getattr(self, f.name) <= 0:
                raise ManifestError(f"limit {f.name} must be positive, got {getattr(self, f.name)}")

    def with_wall(self, seconds: float) -> Limits:
        """A copy with another wall-clock timeout."""
        return dataclasses.replace(self, wall_seconds=seconds)


@dataclass(frozen=True, slots=True, kw_only=True)
class SandboxConfig:
    """Which sandbox backend to use, and its limits."""

    backend: Literal["local", "docker"] = "local"
    limits: Limits = field(default_factory=Limits)
    # What of the host's /usr is visible inside (globs allowed): programs and shared libraries,
    # not the whole of /usr with its SDKs, headers and other projects' files.
    # docker backend: containers kept warm per image (0: a fresh container per run)
    docker_warm: int = 0
    # local backend: serve Python runs from fork servers (see taskmint.sandbox.warm)
    warm: bool = True
    system_paths: tuple[str, ...] = (
        "/usr/bin",
        "/usr/lib/*-linux-gnu",
        "/usr/lib64",
        "/usr/lib/locale",
        "/usr/share/zoneinfo",
    )
    # local backend: every run's workspace (and report folder) lives on a tmpfs of this many
    # bytes, so no run can fill the host's disk (0: the host folder itself, uncapped)
    workspace_bytes: int = 1024**3

    def __post_init__(self) -> None:
        if self.backend not in ("local", "docker"):
            raise ManifestError(
                f"unknown sandbox backend {self.backend!r}; choose 'local' or 'docker'"
            )


@dataclass(frozen=True, slots=True, kw_only=True)
class VerifyConfig:
    """How `verify` grades: hidden tests chosen at minting, and what the static scan costs."""

    # Share of FAIL_TO_PASS test functions held out of the policy's view (one stays visible).
    hidden_fraction: float = 0.3
    # Share of PASS_TO_PASS test functions held out as well.
    hidden_pass_fraction: float = 0.1
    # Any finding of the static diff scan makes the reward 0 (otherwise only reported).
    scan_zeroes_reward: bool = False

    def __post_init__(self) -> None:
        for name in ("hidden_fraction", "hidden_pass_fraction"):
            value = getattr(self, name)
            if not 0.0 <= value < 1.0:
                raise ManifestError(f"verify.{name} must be in [0, 1), got {value!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class FeatureSize:
    """The size of what strategy `feature` removes: inclusive (min, max) ranges of removed
    lines, units (functions, methods, classes) and files; None on a side: unbounded."""

    lines: Range = (100, 1500)
    units: Range = (2, None)
    files: Range = (2, None)

    def __post_init__(self) -> None:
        for f in fields(self):
            rng = getattr(self, f.name)
            if not isinstance(rng, tuple) or len(rng) != 2:
                raise KnobsError(f"feature.{f.name} must be a (min, max) pair, got {rng!r}")
            low, high = rng
            if low is not None and high is not None and low > high:
                raise KnobsError(f"feature.{f.name}: min {low} is above max {high}")

    def admits(self, lines: int, units: int, files: int) -> bool:
        """Whether a feature of these sizes is within every range."""
        for (low, high), value in ((self.lines, lines), (self.units, units), (self.files, files)):
            if (low is not None and value < low) or (high is not None and value > high):
                return False
        return True


@dataclass(frozen=True, slots=True, kw_only=True)
class StrengthConfig:
    """The test-strength gate (see `taskmint.strength`): up to `mutants` mutants of each
    accepted task's gold code are graded with its graded tests; a task whose mutation score
    (killed / graded) is under `min_mutation_score` is rejected as `weak_tests`. `mutants = 0`
    turns the gate off (rows then have a null score).

    The defaults are measured (docs/benchmarks.md, "Test-strength gate"): at 0.7, 8 mutants
    reject the same tasks as 12 on real projects (and 6 of 7 on the bundled seeds) for two
    thirds of the runs; the tasks rejected there let 3x as many held-out mutants pass as the
    rest, while 0.5 rejects almost nothing outside the barely-tested fixture."""

    mutants: int = 8
    min_mutation_score: float = 0.7

    def __post_init__(self) -> None:
        if self.mutants < 0:
            raise ManifestError(f"strength.mutants must be 0 or more, got {self.mutants}")
        if not 0.0 <= self.min_mutation_score <= 1.0:
            raise ManifestError(
                f"strength.min_mutation_score must be between 0 and 1, got "
                f"{self.min_mutation_score}"
            )


@dataclass(frozen=True, slots=True, kw_only=True)
class PipelineConfig:
    """Everything a refresh run needs; the embedded defaults are what `make demo` uses."""

    output_root: Path = Path("output")
    dataset_name: str = "taskmint"
    seeds_manifest: Path = Path("seed_apps/seeds.toml")
    sandbox: SandboxConfig = field(default_factory=SandboxConfig)
    original_runs: int = 5
    broken_runs: int = 2
    max_candidates_per_seed: int = 36
    min_body_lines: int = 2
    workers: int = 2
    # seeds minted at once by a refresh (their steps share the executor: `workers` sandboxes
    # per process, or a cluster's workers); 1 takes them in turn
    parallel_seeds: int = 1
    random_seed: int = 0
    shard_rows: int = 500
    reference_solvers: tuple[str, ...] = ("null", "oracle")
    strategies: tuple[Strategy, ...] = (
        "stub_body",
        "remove_function",
        "remove_class",
        "remove_block",
        "feature_cluster",
        "feature",
    )
    knobs: Knobs | None = None  # ranges on the candidates' static difficulty features
    # A calibration TOML (see docs/calibration.md); None: the reference solvers alone.
    models: Path | None = None
    # describe: the style of problem_statement ("spec" or "issue"; both are stored), and the
    # name of a `[[model]]` of the calibration config to reword statements (None: templates)
    statement_style: StatementStyle = "spec"
    describe_model: str | None = None
    # describe: 1 gives the removed interface (signatures, docstrings); 2 describes the
    # feature's behaviour in product terms, the tests being the spec
    statement_level: int = 1
    # strategy `feature`: the size of what it removes
    feature: FeatureSize = field(default_factory=FeatureSize)
    # the test-strength gate, run on every accepted task
    strength: StrengthConfig = field(default_factory=StrengthConfig)
    # Triage of a seed's original suite: the seed is kept when at least `min_tests` tests pass
    # every original run; a suite with more stable tests than `max_tests` is cut to a selection.
    min_tests: int = 1
    max_tests: int = 3000
    verify: VerifyConfig = field(default_factory=VerifyConfig)
    # Bands (name, lowest solve rate), highest first, overriding the models file's bands.
    bands: tuple[tuple[str, float], ...] | None = None
    # Alerts (flows): a Slack-compatible webhook, and the infrastructure error rate that alerts.
    alert_webhook: str | None = None
    infra_error_threshold: float = 0.2

    def __post_init__(self) -> None:
        if self.bands is not None:
            if not self.bands or any(not 0.0 <= low <= 1.0 for _, low in self.bands):
                raise ManifestError(f"bands need lowest rates between 0 and 1, got {self.bands}")
            if min(low for _, low in self.bands) != 0.0:
                raise ManifestError("the lowest band must start at 0.0 so every rate has a band")
        if self.original_runs < 3:
            raise ManifestError(
                "original_runs must be at least 3 (declared, reversed and shuffled order) to "
                "detect flaky tests; 5 is the default"
            )
        if self.broken_runs < 2:
            raise ManifestError("broken_runs must be at least 2 to detect flaky results")
        if self.workers < 1:
            raise ManifestError("workers must be at least 1")
        if self.parallel_seeds < 1:
            raise ManifestError("parallel_seeds must be at least 1")
        for name in self.strategies:
            as_strategy(name, error=ManifestError, where="strategies")
        if self.statement_style not in ("spec", "issue"):
            raise ManifestError(
                f"statement_style must be 'spec' or 'issue', got {self.statement_style!r}"
            )
        if self.statement_level not in (1, 2):
            raise ManifestError(f"statement_level must be 1 or 2, got {self.statement_level!r}")
        if self.min_tests < 1 or self.max_tests < self.min_tests:
            raise ManifestError("need 1 <= min_tests <= max_tests")

    @property
    def cache_dir(self) -> Path:
        """Where snapshots, environments and per-step results are cached."""
        return self.output_root / "cache"

    @property
    def datasets_dir(self) -> Path:
        """Where datasets are published."""
        return self.output_root / "datasets"


def load_config(path: Path | None = None, **overrides: Any) -> PipelineConfig:
    """Read a `taskmint` config TOML (all keys optional) and apply keyword overrides."""
    data: dict[str, Any] = {}
    if path is not None:
        try:
            data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ManifestError(f"cannot read config {path}: {exc}") from exc
    data.update({k: v for k, v in overrides.items() if v is not None})
    sandbox = data.pop("sandbox", {})
    if isinstance(sandbox, dict):
        limits = Limits(**sandbox.pop("limits", {}))
        sandbox = SandboxConfig(limits=limits, **sandbox)
    for key in ("output_root", "seeds_manifest", "models"):
        if key in data:
            data[key] = Path(data[key])
    if "strategies" in data:
        data["strategies"] = tuple(data["strategies"])
    if isinstance(data.get("knobs"), dict):
        knobs: dict[str, Any] = {
            k: tuple(v) if isinstance(v, list) else v for k, v in data["knobs"].items()
        }
        data["knobs"] = Knobs(**knobs)
    if isinstance(data.get("bands"), dict):
        data["bands"] = tuple(
            sorted(((str(k), float(v)) for k, v in data["bands"].items()), key=lambda b: -b[1])
        )
    if "reference_solvers" in data:
        data["reference_solvers"] = tuple(data["reference_solvers"])
    if isinstance(data.get("feature"), dict):
        data["feature"] = FeatureSize(
            **{k: tuple(v) if isinstance(v, list) else v for k, v in data["feature"].items()}
        )
    if isinstance(data.get("strength"), dict):
        data["strength"] = StrengthConfig(**data["strength"])
    if isinstance(data.get("verify"), dict):
        data["verify"] = VerifyConfig(**data["verify"])
    known = {f.name for f in dataclasses.fields(PipelineConfig)}
    unknown = set(data) - known
    if unknown:
        raise ManifestError(f"unknown config keys {sorted(unknown)}; known keys: {sorted(known)}")
    return PipelineConfig(sandbox=sandbox, **data)
