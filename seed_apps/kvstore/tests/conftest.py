"""Shared fixtures for the kvstore test suite."""

import pytest

from kvstore import LogicalClock, MemoryFileSystem, Options, OSFileSystem


@pytest.fixture
def memfs():
    """A fresh in-memory filesystem with a /db directory."""
    fs = MemoryFileSystem()
    fs.makedirs("/db")
    return fs


@pytest.fixture
def clock():
    """A logical clock starting at tick 0."""
    return LogicalClock()


@pytest.fixture(params=["memory", "os"])
def backend(request, tmp_path):
    """(filesystem, store path) for both the in-memory and the real filesystem."""
    if request.param == "memory":
        return MemoryFileSystem(), "/stores/db"
    return OSFileSystem(), str(tmp_path / "db")


def make_options(fs, clock=None, **overrides):
    """Options with small sizes so tests exercise flushes and blocks quickly."""
    settings = dict(fs=fs, clock=clock if clock is not None else LogicalClock(),
                    memtable_bytes=1 << 20, block_size=128, auto_compact=False)
    settings.update(overrides)
    return Options(**settings)
