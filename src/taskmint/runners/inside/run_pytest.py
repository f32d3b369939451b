"""Bootstrap that runs pytest inside the sandbox with taskmint's plugin and configuration.

Usage: python -I -B run_pytest.py REPORT NONCE OPTIONS_JSON -- PYTEST_ARGS...
   or: python -I -B run_pytest.py --channel
With --channel, {"nonce": ..., "options": OPTIONS_JSON, "args": PYTEST_ARGS} is read from
the input descriptor that $TASKMINT_CHANNEL names, which is closed before any code of the
workspace runs, and the report goes to its report descriptor: neither the nonce, the selection
nor the test files appear in the argv, the environment or any file the code under test can open.
OPTIONS_JSON: {"pythonpath": [...], "coverage": null | {"data_file": ..., "source": [...]},
"select": null | [test ids], "order": "declared" | "reverse" | "shuffle", "seed": null | int,
"compile": bool, "batch": null | {...}, "plugins": [[name, module], ...] (the seed's own
pytest plugins), "test_timeout": seconds} (the selection may also come from a file,
"select_file"). The project's own pytest configuration applies (its ini file, addopts,
markers, conftests); taskmint's options come after it on the command line. With "compile",
the run writes bytecode instead of testing: every workspace file compiled to a hash-checked
pyc, then pytest's collection, which writes its assertion-rewritten pycs (see
`_compile_workspace`).
Runs with -I (isolated: no PYTHON* variables, no user site) so the environment cannot inject
start-up code; the seed's import paths are added here, explicitly. With "batch" (see
`forked_runs`), the tests are collected once and each run of the batch is a fork of this process.
"""

from __future__ import annotations

import compileall
import contextlib
import importlib
import importlib.metadata
import json
import os
import py_compile
import re
import sys
import sysconfig
import types
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from taskmint.runners.inside.protocol import ChannelInput, CoverageOptions, RunOptions


def _import_sources(sources: list[str], pythonpath: list[str]) -> None:
    """Import the seed's own modules before collection, in the empty coverage context: code
    that runs when they load (module-level calls, decorators) is then marked as shared by every
    test, since any test file importing them would break with it."""
    modules = []
    for src in sources:
        files = (
            [src]
            if src.endswith(".py")
            else [
                os.path.join(d, f)
                for d, _, fs in sorted(os.walk(src))
                for f in sorted(fs)
                if f.endswith(".py")
            ]
        )
        for path in files:
            for root in pythonpath:
                rel = os.path.relpath(path, root)
                if not rel.startswith(".."):
                    name = rel[:-3].replace(os.sep, ".").removesuffix(".__init__")
                    modules.append(name)
                    break
    for name in modules:
        # a module that fails to import here fails again, and is reported, under pytest
        with contextlib.suppress(Exception):
            importlib.import_module(name)


def _compile_workspace() -> None:
    """Compile every Python file of the workspace (the current folder) into its `__pycache__`
    as a CHECKED_HASH pyc: the import system uses such a pyc only while the source's hash still
    matches, so a copy made here stays exact for every later tree that shares the file. Files
    that do not compile are left alone (their import fails, and is reported, in a real run)."""
    sys.dont_write_bytecode = False  # compileall and pytest's rewriter write only then
    compileall.compile_dir(
        os.getcwd(),
        quiet=2,
        force=True,
        rx=re.compile(r"/(\.|node_modules/|__pycache__/)"),
        invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH,
    )


def _measure_children(spec: CoverageOptions, here: str, plugin: object) -> None:
    """Let the Python processes the tests start measure themselves (`subcov/sitecustomize.py`):
    its folder goes on the PYTHONPATH they inherit, and on this process's own path last (tests
    often hand their children `os.pathsep.join(sys.path)`; nothing else lives there)."""
    folder = spec["data_file"] + ".children"
    os.makedirs(folder, mode=0o700, exist_ok=True)
    sub = os.path.join(here, "subcov")
    os.environ["TASKMINT_SUBCOV"] = json.dumps({"dir": folder, "source": spec["source"]})
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = sub + (os.pathsep + old if old else "")
    sys.path.append(sub)
    plugin.measure_children(folder)  # type: ignore[attr-defined]


def _save_coverage(cov: object, path: str) -> None:
    """Write what `cov` measured in memory (lines per context) to the data file `path`."""
    from coverage import CoverageData  # the environment's (coverage runs only)

    data = CoverageData(basename=path)
    data.update(cov.get_data())  # type: ignore[attr-defined]
    data.write()


def _environment_plugins() -> list[tuple[str, str]]:
    """(entry-point name, target) of every `pytest11` entry point the environment's own
    distributions declare: the plugins pytest's autoload would find there. Only the venv's
    site-packages are read, never sys.path, which holds the workspace (a patch could add a
    distribution to it). Sorted, so every run registers them in the same order."""
    paths = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    found = set()
    for dist in importlib.metadata.distributions(path=paths):
        for ep in dist.entry_points:
            if ep.group == "pytest11":
                found.add((str(dist.metadata["Name"] or ""), ep.name, ep.value))
    return [(name, value) for _, name, value in sorted(found)]


def _read_channel() -> tuple[int, str, RunOptions, list[str]]:
    fd_in, fd_out = (int(x) for x in os.environ.pop("TASKMINT_CHANNEL").split())
    chunks = []
    while True:
        chunk = os.read(fd_in, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(fd_in)
    os.set_inheritable(fd_out, False)  # no process the tests start gets it
    data: ChannelInput = json.loads(b"".join(chunks))
    return fd_out, data["nonce"], data["options"], data["args"]


def main() -> int:
    report: str | int
    options: RunOptions
    if sys.argv[1:] == ["--channel"]:
        report, nonce, options, args = _read_channel()
    else:
        report, nonce, options = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
        if sys.argv[4] != "--":
            raise SystemExit("usage: run_pytest.py REPORT NONCE OPTIONS_JSON -- ARGS")
        args = sys.argv[5:]
    here = os.path.dirname(os.path.abspath(__file__))
    pythonpath = list(options.get("pythonpath", []))
    sys.path.insert(0, here)
    # Import the runner's own modules before the workspace is first on sys.path, so no file in
    # the workspace can stand in for them (so here, not at the top: the folder is not on the
    # path of `python -I` until now, and leaves it again at once). The seed's import paths are
    # on it meanwhile, last: what the environment holds wins, but a dependency of pytest that
    # is the seed itself (pluggy, iniconfig: never installed, see `envs.copies`) is imported
    # from the workspace, as the tests will import it.
    sys.path.extend(pythonpath)
    import forked_runs
    import pytest
    import taskmint_pytest_report as plugin

    sys.path.remove(here)
    for entry in pythonpath:
        sys.path.remove(entry)
    for entry in reversed(pythonpath):
        sys.path.insert(0, entry)
    if options.get("compile"):
        _compile_workspace()
        args = [*args, "--collect-only"]
    cov = None
    spec = options.get("coverage")
    if spec:
        import coverage  # the environment's: only coverage runs import it

        # Measured in memory and written once at the end (`_save_coverage`): with a data file,
        # every context switch (three per test) is a transaction on it.
        cov = coverage.Coverage(
            data_file=None, source=spec["source"], config_file=False, branch=False
        )
        cov.start()
        _import_sources(spec["source"], options.get("pythonpath", []))
        _measure_children(spec, here, plugin)
    select = options.get("select")
    if options.get("select_file"):
        with open(options["select_file"], encoding="utf-8") as fh:
            select = json.load(fh)
    # Plugin autoload is off (PYTEST_DISABLE_PLUGIN_AUTOLOAD): the environment's plugins and
    # the seed's own are registered where autoload would have run, through PYTEST_PLUGINS.
    os.environ["PYTEST_PLUGINS"] = plugin.ENV_PLUGINS
    # (an empty module; its docstring keeps pytest from warning that it cannot rewrite it)
    sys.modules[plugin.ENV_PLUGINS] = types.ModuleType(plugin.ENV_PLUGINS, "PYTEST_DONT_REWRITE")
    plugin.configure(
        report,
        nonce,
        cov,
        select,
        order=options.get("order", "declared"),
        seed=options.get("seed"),
        batch=forked_runs.Batch(options["batch"], plugin._emit) if options.get("batch") else None,
        plugins=_environment_plugins(),
        own_plugins=[tuple(p) for p in options.get("plugins", [])],
        test_timeout=float(options.get("test_timeout") or 0.0),
    )
    try:
        return int(pytest.main(args, plugins=[plugin]))
    finally:
        plugin.close()
        if cov is not None and spec:
            cov.stop()
            plugin.record_spawns(cov)
            plugin.record_leaks(cov)
            _save_coverage(cov, spec["data_file"])


if __name__ == "__main__":
    sys.exit(main())
