"""Configuration records, loaded at the edges (CLI, flows) and passed into the stages.

Stages never read environment variables or global paths; they take these records.
"""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from taskmint.errors import ManifestError

__all__ = ["Limits", "PipelineConfig", "SandboxConfig", "load_config"]


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

    backend: Literal["local"] = "local"
    limits: Limits = field(default_factory=Limits)
    # What of the host's /usr is visible inside (globs allowed): programs and shared libraries,
    # not the whole of /usr with its SDKs, headers and other projects' files.
    system_paths: tuple[str, ...] = (
        "/usr/bin",
        "/usr/lib/*-linux-gnu",
        "/usr/lib64",
        "/usr/lib/locale",
        "/usr/share/zoneinfo",
    )

    def __post_init__(self) -> None:
        if self.backend not in ("local",):
            raise ManifestError(f"unknown sandbox backend {self.backend!r}; choose 'local'")


@dataclass(frozen=True, slots=True, kw_only=True)
class PipelineConfig:
    """Everything a refresh run needs; the embedded defaults are what `make demo` uses."""

    output_root: Path = Path("output")
    dataset_name: str = "taskmint"
    seeds_manifest: Path = Path("seed_apps/seeds.toml")
    sandbox: SandboxConfig = field(default_factory=SandboxConfig)
    original_runs: int = 3
    broken_runs: int = 2
    max_candidates_per_seed: int = 36
    min_body_lines: int = 2
    workers: int = 2
    random_seed: int = 0
    shard_rows: int = 500
    reference_solvers: tuple[str, ...] = ("null", "oracle")
    # A calibration TOML (see docs/calibration.md); None: the reference solvers alone.
    models: Path | None = None

    def __post_init__(self) -> None:
        if self.original_runs < 2:
            raise ManifestError("original_runs must be at least 2 to detect flaky tests")
        if self.broken_runs < 1:
            raise ManifestError("broken_runs must be at least 1")
        if self.workers < 1:
            raise ManifestError("workers must be at least 1")

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
    if "reference_solvers" in data:
        data["reference_solvers"] = tuple(data["reference_solvers"])
    known = {f.name for f in dataclasses.fields(PipelineConfig)}
    unknown = set(data) - known
    if unknown:
        raise ManifestError(f"unknown config keys {sorted(unknown)}; known keys: {sorted(known)}")
    return PipelineConfig(sandbox=sandbox, **data)
