"""The coverage run's watch over the workspace's state, driven directly: what a test leaves
behind through objects that only an earlier test made reachable is still seen."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from taskmint.runners.adapters import inside_dir


@pytest.fixture
def shared_state():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(
        "taskmint_test_shared_state", inside_dir() / "shared_state.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def workspace(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    (tmp_path / "regmod.py").write_text("REGISTRY = {}\nHISTORY = []\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("regmod", None)
    module = importlib.import_module("regmod")
    yield tmp_path, module
    sys.modules.pop("regmod", None)
    sys.modules.pop("regmod2", None)


def test_state_reached_through_what_an_earlier_test_added_is_watched(shared_state, workspace):
    root, mod = workspace
    watch = shared_state.Watch(str(root))

    def test(body) -> bool:  # type: ignore[no-untyped-def]
        watch.before()
        body()
        return bool(watch.after())

    assert not test(lambda: None)
    assert test(lambda: mod.REGISTRY.setdefault("plugins", {}))  # a new nested dict
    # a later test fills the nested dict: only watched if the first change was followed
    assert test(lambda: mod.REGISTRY["plugins"].__setitem__("x", [1]))
    assert test(lambda: mod.REGISTRY["plugins"]["x"].append(2))  # and what that holds
    assert not test(lambda: len(mod.REGISTRY))
    assert watch.whole
    # a new workspace module: everything is found again, and its state watched too
    (Path(root) / "regmod2.py").write_text("SEEN = set()\n")
    assert test(lambda: importlib.import_module("regmod2"))
    assert test(lambda: sys.modules["regmod2"].SEEN.add("y"))
    assert not test(lambda: None)
