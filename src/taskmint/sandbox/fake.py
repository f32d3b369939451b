"""A sandbox that hands each run to a function: for tests of code that needs only the interface."""

from __future__ import annotations

from collections.abc import Callable

from taskmint.sandbox.base import RunResult, RunSpec, Sandbox

__all__ = ["FakeSandbox"]


class FakeSandbox(Sandbox):
    """Calls `handler(spec)` instead of running anything, and records every spec it was given."""

    name = "fake"

    def __init__(self, handler: Callable[[RunSpec], RunResult]) -> None:
        self.handler = handler
        self.calls: list[RunSpec] = []

    def run(self, spec: RunSpec) -> RunResult:
        """Record `spec` and return the handler's result."""
        self.calls.append(spec)
        return self.handler(spec)
