"""The reward service's metrics, in Prometheus' text exposition format (version 0.0.4).

Counters and histograms are kept here (thread-safe, labelled); gauges are read when `/metrics`
is scraped (queue depth, in flight, the warm sandbox pool, the process's resident memory).
"""

from __future__ import annotations

import bisect
import os
import threading
from collections.abc import Callable, Iterable

__all__ = ["LATENCY_BUCKETS", "Metrics", "resident_bytes"]

LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0)

Labels = tuple[tuple[str, str], ...]


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(labels: Labels, extra: Labels = ()) -> str:
    pairs = [*labels, *extra]
    if not pairs:
        return ""
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in pairs) + "}"


class _Histogram:
    def __init__(self, buckets: tuple[float, ...]) -> None:
        self.buckets = buckets
        self.counts = [0] * (len(buckets) + 1)
        self.sum = 0.0

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.buckets, value)] += 1
        self.sum += value


class Metrics:
    """Named counters and histograms, by label set."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counters: dict[str, dict[Labels, float]] = {}
        self._histograms: dict[str, dict[Labels, _Histogram]] = {}
        self._help: dict[str, str] = {}
        self._gauges: list[tuple[str, str, Callable[[], Iterable[tuple[Labels, float]]]]] = []

    def describe(self, name: str, help_text: str) -> None:
        self._help[name] = help_text

    def inc(self, name: str, value: float = 1.0, **labels: str) -> None:
        key = tuple(sorted(labels.items()))
        with self._lock:
            series = self._counters.setdefault(name, {})
            series[key] = series.get(key, 0.0) + value

    def observe(self, name: str, value: float, **labels: str) -> None:
        key = tuple(sorted(labels.items()))
        with self._lock:
            series = self._histograms.setdefault(name, {})
            hist = series.get(key)
            if hist is None:
                hist = series[key] = _Histogram(LATENCY_BUCKETS)
            hist.observe(value)

    def gauge(
        self, name: str, help_text: str, read: Callable[[], Iterable[tuple[Labels, float]]]
    ) -> None:
        """A gauge read at scrape time: `read()` gives (labels, value) pairs."""
        self._gauges.append((name, help_text, read))

    def counter(self, name: str, **labels: str) -> float:
        """A counter's current value (0 when never incremented)."""
        with self._lock:
            return self._counters.get(name, {}).get(tuple(sorted(labels.items())), 0.0)

    def render(self) -> str:
        """The text exposition of every metric."""
        out: list[str] = []
        with self._lock:
            for name, series in sorted(self._counters.items()):
                out.append(f"# HELP {name} {self._help.get(name, name)}")
                out.append(f"# TYPE {name} counter")
                for labels, value in sorted(series.items()):
                    out.append(f"{name}{_labels(labels)} {value:g}")
            for name, hseries in sorted(self._histograms.items()):
                out.append(f"# HELP {name} {self._help.get(name, name)}")
                out.append(f"# TYPE {name} histogram")
                for labels, hist in sorted(hseries.items()):
                    running = 0
                    for bound, count in zip((*hist.buckets, None), hist.counts, strict=True):
                        running += count
                        le = "+Inf" if bound is None else f"{bound:g}"
                        out.append(f"{name}_bucket{_labels(labels, (('le', le),))} {running}")
                    out.append(f"{name}_sum{_labels(labels)} {hist.sum:.6f}")
                    out.append(f"{name}_count{_labels(labels)} {running}")
        for name, help_text, read in self._gauges:
            out.append(f"# HELP {name} {help_text}")
            out.append(f"# TYPE {name} gauge")
            for labels, value in read():
                out.append(f"{name}{_labels(labels)} {value:g}")
        return "\n".join(out) + "\n"


def resident_bytes() -> int:
    """This process's resident set size, in bytes (0 where /proc is not there)."""
    try:
        with open("/proc/self/statm") as fh:
            pages = int(fh.read().split()[1])
    except (OSError, ValueError, IndexError):
        return 0
    return pages * os.sysconf("SC_PAGE_SIZE")
