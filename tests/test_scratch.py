"""Scratch folders (workspaces, reports, spools): where they go and how that is chosen."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from taskmint import scratch
from taskmint.scratch import make_scratch, scratch_dir


@pytest.fixture
def fresh_choice() -> Iterator[None]:
    scratch_dir.cache_clear()
    yield
    scratch_dir.cache_clear()


def test_the_setting_chooses_the_folder(monkeypatch, tmp_path, fresh_choice):
    monkeypatch.setenv("TASKMINT_SCRATCH", str(tmp_path / "scratch"))
    made = make_scratch("taskmint-ws-")
    assert made.parent == tmp_path / "scratch"
    assert made.name.startswith("taskmint-ws-") and made.is_dir()
    assert oct(made.stat().st_mode & 0o777) == oct(0o700)  # private, as mkdtemp makes it


def test_an_empty_setting_means_the_system_temporary_folder(monkeypatch, fresh_choice):
    monkeypatch.setenv("TASKMINT_SCRATCH", "")
    made = make_scratch("taskmint-ws-")
    try:
        assert made.parent == Path(tempfile.gettempdir())
    finally:
        made.rmdir()


def test_a_folder_that_is_no_tmpfs_mount_is_not_taken(tmp_path, monkeypatch):
    assert not scratch._roomy_tmpfs(str(tmp_path))
    # /dev/shm is taken only with room to spare: it is memory
    monkeypatch.setattr(scratch, "SHM_MIN_FREE", 1 << 62)
    assert not scratch._roomy_tmpfs("/dev/shm")


def test_by_default_shm_when_it_is_a_roomy_tmpfs(monkeypatch, fresh_choice):
    monkeypatch.delenv("TASKMINT_SCRATCH", raising=False)
    expected = "/dev/shm" if scratch._roomy_tmpfs("/dev/shm") else None
    assert scratch_dir() == expected
    made = make_scratch("taskmint-ws-")
    try:
        assert str(made.parent) == (expected or tempfile.gettempdir())
        assert os.access(made, os.W_OK)
    finally:
        made.rmdir()
