"""taskmint's pytest plugin: per-test outcomes as JSON lines in a file outside the workspace.

This file runs INSIDE the sandbox, under the seed's interpreter, and imports nothing of
taskmint. Every record carries the per-run nonce; the host checks the nonce, the schema, and
that a `finish` record arrived. What the tests print is never parsed.
It stays one module although it is long: pytest registers this module itself as the plugin
(its hooks are its module-level functions, all reading the one `_state`), and the fork server
preloads it by this name.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import json
import os
import random
import signal
import sys
import time
import types
from collections.abc import Iterator, Mapping

import pytest


def _sibling(name: str) -> types.ModuleType:
    """A module of this folder, loaded once from its file under a name of taskmint's own
    (`taskmint_inside_<name>`): never one the workspace could provide, whatever is on sys.path
    when this plugin is imported, and never in the way of a seed's own module of that name."""
    key = "taskmint_inside_" + name
    if key not in sys.modules:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), name + ".py")
        spec = importlib.util.spec_from_file_location(key, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module
        spec.loader.exec_module(module)
    return sys.modules[key]


Watch = _sibling("shared_state").Watch
_state: dict[str, object] = {
    "fh": None,
    "nonce": "",
    "cov": None,
    "select": None,
    "ctx": "",
    "order": "declared",
    "seed": None,
    "spawns": None,
    "children": None,
    "batch": None,  # a `forked_runs.Batch`: the runs are forks of this collection
    "tag": None,  # in a forked run: "<candidate>/<run>", on every record
    "watch": None,  # in the coverage run: a `shared_state.Watch` of the workspace's modules
    "plugins": (),  # (name, module) of the environment's pytest plugins (`_register_plugins`)
    "own_plugins": (),  # (name, module) of the seed's own pytest plugins (`pytest_addhooks`)
    "test_timeout": 0.0,  # seconds a test may run (setup, call, teardown) before it fails
    "deselected": 0,  # tests the project's own configuration deselected at collection
    "ours": False,  # True while this plugin deselects (not counted as the project's)
}
ENV_PLUGINS = "taskmint_env_plugins"  # the PYTEST_PLUGINS name that loads `_state["plugins"]`
TIMEOUT_MESSAGE = "taskmint: the test ran longer than its limit of"
# Plugins that change how the suite runs rather than what it checks, each with the options
# (appended after the project's own) that turn that part off: taskmint runs the tests in one
# process (`-n 0`), in the orders and with the random seeds it chooses, measures coverage
# itself, and must see a flaky test fail rather than pass on a rerun.
_NEUTRALIZE = {
    "xdist": ("-n", "0"),
    "pytest_cov": ("--no-cov",),
    "randomly": ("--randomly-dont-reorganize", "--randomly-dont-reset-seed"),
    "rerunfailures": ("--reruns", "0"),
}
# Audit events of starting another program or process: what it runs is not measured, so the
# coverage map must know which test phases did it (`record_spawns`). `subcov/sitecustomize.py`
# counts the same events in the processes the tests start.
_SPAWN_EVENTS = frozenset(
    {
        "subprocess.Popen",
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.fork",
        "os.forkpty",
        "pty.spawn",
    }
)
SPAWN_FILE = "/taskmint-spawned-a-process"  # the coverage data's marker file for those phases
LEAK_FILE = "/taskmint-left-shared-state"  # the marker of tests that left state (`record_leaks`)
_POPEN = "subprocess.Popen"  # the one way of starting a process whose child can be measured


def configure(
    path: str | int,
    nonce: str,
    cov: object = None,
    select: list[str] | None = None,
    order: str = "declared",
    seed: int | None = None,
    batch: object = None,
    plugins: list[tuple[str, str]] | tuple[()] = (),
    own_plugins: list[tuple[str, str]] | tuple[()] = (),
    test_timeout: float = 0.0,
) -> None:
    """Open the report file (called by the bootstrap before pytest starts).

    `cov`, when given, is a started `coverage.Coverage`: each test phase then gets its own
    dynamic context, "<nodeid>|setup", "<nodeid>|run" or "<nodeid>|teardown"; code run
    outside any test (imports during collection) and fixtures wider than one test (module,
    session scope: shared by several tests) get the empty context. `select`, when given, is
    the set of test ids to run: every other collected test is deselected. `order` is
    "declared", "reverse" or "shuffle" (seeded by `seed`): the order the kept tests run in.
    `seed`, when given, also reseeds `random` before each test from (seed, test id), so a
    test's random draws do not depend on the order or on the other tests. `batch`, when
    given, is a `forked_runs.Batch`: after collection, instead of running the tests, this
    process serves that batch's runs, each a fork of it (see `pytest_runtestloop`).
    `plugins` are the (name, module) pairs of the pytest plugins the environment provides:
    registered where pytest would autoload them (`_register_plugins`); `own_plugins` the
    seed's own, registered before anything else reads the options (`pytest_addhooks`).
    `test_timeout`, when positive, fails a test that runs longer (`_PerTestTimeout`).
    """
    if isinstance(path, int):  # an inherited descriptor (the out-of-band channel)
        fd = path
    else:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    _state["fh"] = os.fdopen(fd, "a", encoding="utf-8", buffering=1)
    _state["nonce"] = nonce
    _state["cov"] = cov
    _state["select"] = set(select) if select is not None else None
    _state["order"] = order
    _state["seed"] = seed
    _state["batch"] = batch
    _state["plugins"] = tuple(tuple(p) for p in plugins)
    _state["own_plugins"] = tuple(tuple(p) for p in own_plugins)
    _state["test_timeout"] = float(test_timeout or 0.0)
    if cov is not None and _state["spawns"] is None:
        _state["spawns"] = {}
        sys.addaudithook(_audit)
    if cov is not None:
        _state["watch"] = Watch(os.getcwd())


def close() -> None:
    """Close the report (the bootstrap's last word: nothing is recorded after the session)."""
    fh = _state["fh"]
    _state["fh"] = None
    if fh is not None:
        with contextlib.suppress(OSError):
            fh.close()  # type: ignore[attr-defined]


def measure_children(folder: str) -> None:
    """Keep `folder/context` holding the current context, for the Python processes the tests
    start (`subcov/sitecustomize.py` reads it when such a process starts)."""
    fd = os.open(os.path.join(folder, "context"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.set_inheritable(fd, False)
    _state["children"] = (folder, fd)


def _audit(event: str, _args: object) -> None:
    if event in _SPAWN_EVENTS:
        spawns = _state["spawns"]
        if isinstance(spawns, dict):
            counts = spawns.setdefault(_state["ctx"], [0, 0])
            counts[0 if event == _POPEN else 1] += 1


def _child_records(folder: str) -> list[dict[str, object]]:
    records = []
    for name in sorted(os.listdir(folder)):
        if not (name.startswith("rec.") and name.endswith(".json")):
            continue
        try:
            with open(os.path.join(folder, name), encoding="utf-8") as fh:
                record = json.load(fh)
            data = os.path.join(folder, "data." + name[len("rec.") : -len(".json")])
            if os.path.exists(data):
                record["data"] = data
                records.append(record)
        except (OSError, ValueError):
            continue
    return records


def _complete(record: dict[str, object], kids: dict[object, list], depth: int = 0) -> bool:
    """Whether every process `record`'s process started left a record, recursively."""
    mine = kids.get(record["pid"], [])
    return (
        depth < 64
        and record.get("other") == 0
        and len(mine) == record.get("popens")
        and all(_complete(k, kids, depth + 1) for k in mine)
    )


def record_spawns(cov: object) -> None:
    """Add the measured child processes' lines to the coverage data, and mark each context in
    which a process was started that was not measured: line 1 of `SPAWN_FILE` (the code such a
    process ran is not in the data, so the map must treat those test phases as able to see any
    edit).

    A context's processes count as measured when it started them all with `subprocess.Popen`
    (not fork, exec, system or spawn), each of them left a record in that context, no other
    process did, and the same holds for what they started in turn (`_complete`). Anything else
    (a program that is not Python, a child run with -I, a scrubbed environment, a process that
    did not exit normally or that was started without an audit event) leaves the count short or
    long: that context is marked."""
    spawns = _state["spawns"]
    if not isinstance(spawns, dict):
        return
    data = cov.get_data()  # type: ignore[attr-defined]
    kids: dict[object, list] = {}
    children = _state["children"]
    if isinstance(children, tuple):
        from coverage import CoverageData

        for record in _child_records(children[0]):
            child = CoverageData(basename=str(record["data"]))
            child.read()
            data.update(child)
            kids.setdefault(record["ppid"], []).append(record)
    mine = kids.get(os.getpid(), [])
    unmeasured = []
    for ctx in sorted(set(spawns) | {str(r["context"]) for r in mine}):
        popens, other = spawns.get(ctx, (0, 0))
        started = [r for r in mine if r["context"] == ctx]
        if other or len(started) != popens or not all(_complete(r, kids) for r in started):
            unmeasured.append(ctx)
    for ctx in unmeasured:
        data.set_context(ctx)
        data.add_lines({SPAWN_FILE: [1]})


def record_leaks(cov: object) -> None:
    """Mark the setup and run contexts of each test that left state for later tests (line 1
    of `LEAK_FILE`): the coverage map counts every line they executed as shared."""
    watch = _state["watch"]
    if not isinstance(watch, Watch) or not watch.leaked:
        return
    data = cov.get_data()  # type: ignore[attr-defined]
    for nodeid in watch.leaked:
        for phase in ("setup", "run"):
            data.set_context(f"{nodeid}|{phase}")
            data.add_lines({LEAK_FILE: [1]})


def pytest_addhooks(pluginmanager):  # type: ignore[no-untyped-def]
    """Register the seed's own plugins first, under their entry-point names: as if the project
    were installed, `-p NAME` in its configuration then finds its plugin (not a module of that
    name), and `-p no:NAME` still unregisters it."""
    _register_plugins(pluginmanager, _state["own_plugins"])


def pytest_plugin_registered(plugin, plugin_name, manager):  # type: ignore[no-untyped-def]
    """When pytest registers `ENV_PLUGINS` (named in PYTEST_PLUGINS, so at the very point where
    it would autoload installed plugins, after the command line's and the configuration's
    `-p` options), register the environment's plugins (`_register_plugins`)."""
    if plugin_name == ENV_PLUGINS:
        _register_plugins(manager, _state["plugins"])


def _register_plugins(manager, plugins) -> None:  # type: ignore[no-untyped-def]
    """Register each (name, module) of `plugins` as pytest's autoload would: under its
    entry-point name, unless that name is blocked (`-p no:NAME`) or already taken. The lists
    come from the environment's own distributions (never from the workspace, where a patch
    could add one) and from the seed's manifest. A plugin that fails to import is recorded
    (`plugin_error`) and the run goes on without it."""
    for name, spec in plugins:
        module_name, _, attr = str(spec).partition(":")
        if manager.is_blocked(name) or manager.is_blocked(module_name) or manager.get_plugin(name):
            continue
        try:
            rewrite = getattr(manager, "rewrite_hook", None)
            if rewrite is not None and module_name not in sys.modules:
                # as `-p` does (a module a warm interpreter preloaded cannot be rewritten)
                rewrite.mark_rewrite(module_name)
            obj: object = importlib.import_module(module_name)
            for part in attr.split(".") if attr else ():
                obj = getattr(obj, part)
            if manager.is_registered(obj):
                continue
            manager.register(obj, name=name)
        except Exception as exc:  # recorded, and the run goes on
            _emit({"type": "plugin_error", "name": name, "message": f"{type(exc).__name__}: {exc}"})


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):  # type: ignore[no-untyped-def]
    """Append the options that neutralize the loaded plugins that change how tests run
    (`_NEUTRALIZE`), before any plugin reads them: after the project's own options, so they
    win. pytest-cov decides here whether to start, from the options parsed so far."""
    manager = early_config.pluginmanager
    for name, extra in _NEUTRALIZE.items():
        if manager.get_plugin(name) is not None:
            args.extend(extra)
    if manager.get_plugin("pytest_cov") is not None:
        early_config.known_args_namespace.no_cov = True
    return (yield)


def pytest_deselected(items):  # type: ignore[no-untyped-def]
    """Count the tests the project's own configuration deselects (`-m`, `-k`, conftest hooks)."""
    if not _state["ours"]:
        _state["deselected"] = int(str(_state["deselected"])) + len(items)


def _context(name: str) -> None:
    cov = _state["cov"]
    if cov is not None:
        _state["ctx"] = name
        cov.switch_context(name)  # type: ignore[attr-defined]
        children = _state["children"]
        if isinstance(children, tuple):
            fd = children[1]
            os.ftruncate(fd, 0)
            os.pwrite(fd, name.encode(), 0)


def _crash_only() -> object:
    """A function that makes an item's failures cheap to report (None: this pytest's internals
    differ): the crash line only, not the formatted traceback.

    pytest formats a traceback for every failing test phase even with --tb=no (filtering and
    cutting its entries costs about 0.5 ms a failure, more than most tests take to fail), and
    nothing here prints it: the report keeps the crash message, which is the same either way
    (`excinfo._getreprcrash()`, which the full repr also uses). The outcome never depends on
    it. Exceptions pytest reports in its own way (`pytest.fail(pytrace=False)`, a missing
    fixture, a conftest that failed to import), an item class with its own `_repr_failure_py`,
    and any pytest whose internals differ keep the full repr."""
    try:
        from _pytest._code.code import ReprExceptionInfo, ReprTraceback
        from _pytest.config import ConftestImportFailure
        from _pytest.fixtures import FixtureLookupError
        from _pytest.nodes import Node
        from _pytest.outcomes import OutcomeException
    except ImportError:
        return None
    own = (ConftestImportFailure, FixtureLookupError, OutcomeException)

    def apply(item: object) -> None:
        if getattr(type(item), "_repr_failure_py", None) is not Node._repr_failure_py:
            return
        full = item._repr_failure_py  # type: ignore[attr-defined]

        def crash_only(excinfo, style=None):  # type: ignore[no-untyped-def]
            if isinstance(excinfo.value, own):
                return full(excinfo, style)
            try:
                crash = excinfo._getreprcrash()
                if crash is None:  # every frame hidden
                    return full(excinfo, style)
                return ReprExceptionInfo(
                    reprtraceback=ReprTraceback(reprentries=[], extraline=None, style="short"),
                    reprcrash=crash,
                )
            except Exception:  # another pytest's internals: the full repr
                return full(excinfo, style)

        item._repr_failure_py = crash_only  # type: ignore[attr-defined]

    return apply


def _selected(nodeid: str, select: set[str]) -> bool:
    return nodeid in select or ("[" in nodeid and nodeid.split("[", 1)[0] in select)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items):  # type: ignore[no-untyped-def]
    """Keep only the selected tests, when a selection was given; cheap failure reports.

    Runs last: the project's own hooks (conftest deselection, skips, reordering) have already
    run, so a selection only ever narrows what the project itself would run."""
    select = _state["select"]
    if select is not None:
        # An id without parameters also selects the variants the project's fixtures make of
        # it (an autouse fixture with params in a conftest parametrizes every test beside it,
        # the canaries too); an id with parameters selects itself alone.
        keep = [item for item in items if _selected(item.nodeid, select)]
        drop = [item for item in items if not _selected(item.nodeid, select)]
        if drop:
            _state["ours"] = True
            try:
                config.hook.pytest_deselected(items=drop)
            finally:
                _state["ours"] = False
        items[:] = keep
    cheap = _crash_only()
    if callable(cheap):
        for item in items:
            cheap(item)
    if _state["order"] == "reverse":
        items.reverse()
    elif _state["order"] == "shuffle":
        random.Random(f"order|{_state['seed']}").shuffle(items)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):  # type: ignore[no-untyped-def]
    """Reseed `random` for this test (from the run's seed and the test id)."""
    if _state["seed"] is not None:
        random.seed(f"{_state['seed']}|{item.nodeid}")


def pytest_configure(config):  # type: ignore[no-untyped-def]
    """With coverage, the hooks that give each test phase its own context. Without it they
    would only cost every test three hook wrappers (and one per fixture) for nothing."""
    if _state["cov"] is not None:
        config.pluginmanager.register(_CoverageContexts(), "taskmint-coverage-contexts")
    limit = float(str(_state["test_timeout"]))
    if limit > 0 and not _timeout_plugin_active(config):
        config.pluginmanager.register(_PerTestTimeout(limit), "taskmint-per-test-timeout")


def _timeout_plugin_active(config) -> bool:  # type: ignore[no-untyped-def]
    """Whether pytest-timeout is loaded with a limit of the project's: it owns the alarm then."""
    if config.pluginmanager.get_plugin("timeout") is None:
        return False
    try:
        value = config.getoption("timeout", None) or config.getini("timeout")
        return bool(value) and float(value) > 0
    except (ValueError, TypeError):
        return False


class _PerTestTimeout:
    """A test whose setup, call and teardown together run longer than `limit` seconds fails
    with `TIMEOUT_MESSAGE` (a SIGALRM timer, armed only while one of its phases runs, so the
    failure is that phase's outcome). A test that blocks where no signal gets through is
    ended with the whole run, which reports it as the test that was running (`start`)."""

    def __init__(self, limit: float) -> None:
        self.limit = limit
        self.left = limit

    @contextlib.contextmanager
    def _armed(self) -> Iterator[None]:
        def expired(signum, frame):  # type: ignore[no-untyped-def]
            __tracebackhide__ = True
            pytest.fail(f"{TIMEOUT_MESSAGE} {self.limit:g} s", pytrace=False)

        previous = signal.signal(signal.SIGALRM, expired)
        signal.setitimer(signal.ITIMER_REAL, max(self.left, 0.001))
        started = time.monotonic()
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
            self.left -= time.monotonic() - started

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_setup(self, item):  # type: ignore[no-untyped-def]
        """The test's budget starts with its setup."""
        self.left = self.limit
        with self._armed():
            return (yield)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_call(self, item):  # type: ignore[no-untyped-def]
        """The call spends what setup left."""
        with self._armed():
            return (yield)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_teardown(self, item, nextitem):  # type: ignore[no-untyped-def]
        """So does teardown."""
        with self._armed():
            return (yield)


class _CoverageContexts:
    """The coverage run's hooks: which context each line runs in."""

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_protocol(self, item, nextitem):  # type: ignore[no-untyped-def]
        """Each test starts from the caches it would find first (`shared_state.Watch`); a test
        that leaves other state behind is recorded (`record_leaks`)."""
        watch = _state["watch"]
        if not isinstance(watch, Watch):
            yield
            return
        try:
            watch.before()
        except Exception:  # the state could not be read: as if the test had changed it
            watch.leaked.append(item.nodeid)
            yield
            return
        yield
        try:
            changed = watch.after()
        except Exception:
            changed = True
        if changed:
            watch.leaked.append(item.nodeid)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_fixture_setup(self, fixturedef, request):  # type: ignore[no-untyped-def]
        """Fixtures shared by several tests get a context that names who shares them.

        Module and class scope: "collect|<test file>" (every test of the file may depend on it);
        package and session scope: the empty context (any test may).
        """
        if _state["cov"] is None or fixturedef.scope == "function":
            yield
            return
        outer = str(_state["ctx"])
        if fixturedef.scope in ("module", "class"):
            _context("collect|" + request.node.nodeid.split("::", 1)[0])
        else:
            _context("")
        yield
        _context(outer)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_make_collect_report(self, collector):  # type: ignore[no-untyped-def]
        """Code a test file runs while it is collected (parametrize arguments, module-level calls)
        gets "collect|<test file>": if it breaks, that file's tests break."""
        if _state["cov"] is None or not isinstance(collector, pytest.Module):
            yield
            return
        _context("collect|" + collector.nodeid)
        yield
        _context("")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup(self, item):  # type: ignore[no-untyped-def]
        """Attribute what setup runs to this test's setup context; reseed `random`."""
        if _state["seed"] is not None:
            random.seed(f"{_state['seed']}|{item.nodeid}")
        _context(item.nodeid + "|setup")
        yield
        _context("")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):  # type: ignore[no-untyped-def]
        """Attribute what the test body runs to this test's run context."""
        _context(item.nodeid + "|run")
        yield
        _context("")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_teardown(self, item):  # type: ignore[no-untyped-def]
        """Attribute what teardown runs to this test's teardown context."""
        _context(item.nodeid + "|teardown")
        yield
        _context("")


def _emit(record: Mapping[str, object]) -> None:
    """Write `record` on the report (a JSON line) with the run's nonce, and in a forked run its
    tag (`forked_runs`' own records, `protocol`'s batch records, carry theirs)."""
    fh = _state["fh"]
    if fh is None:
        return
    line = {**record, "nonce": _state["nonce"]}
    if _state["tag"] is not None and "tag" not in line:
        line["tag"] = _state["tag"]
    fh.write(json.dumps(line, sort_keys=True) + "\n")  # type: ignore[attr-defined]
    fh.flush()  # type: ignore[attr-defined]


def _message(report: object) -> str | None:
    longrepr = getattr(report, "longrepr", None)
    if longrepr is None:
        return None
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # a skip: (path, line, reason)
        return str(longrepr[2])[-2000:]
    crash = getattr(longrepr, "reprcrash", None)
    text = getattr(crash, "message", None) if crash is not None else None
    if text is None:
        text = str(longrepr)
    return text[-2000:]


def pytest_collectreport(report):  # type: ignore[no-untyped-def]
    """Record collection errors: a module that fails to import is data, not a lost line."""
    if report.failed:
        _emit({"type": "collect_error", "nodeid": report.nodeid, "message": _message(report)})


def pytest_collection_finish(session):  # type: ignore[no-untyped-def]
    """Record every collected test id."""
    _emit(
        {
            "type": "collected",
            "ids": [item.nodeid for item in session.items],
            "deselected": _state["deselected"],
        }
    )


def pytest_runtest_logstart(nodeid, location):  # type: ignore[no-untyped-def]
    """Record that a test starts: a run ended from outside names the test it was running."""
    _emit({"type": "start", "nodeid": nodeid, "ts": time.time()})


def _start_forked_run(order: str, seed: int | None, tag: str) -> None:
    """In a forked run (see `pytest_runtestloop`): its order, seed and records' tag."""
    _state["order"] = order
    _state["seed"] = seed
    _state["tag"] = tag


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session):  # type: ignore[no-untyped-def]
    """With a batch: serve its runs as forks of this collected session (`forked_runs`),
    instead of running the tests here."""
    batch = _state["batch"]
    if batch is None:
        return None
    batch.serve(session, _start_forked_run)
    return True


def pytest_runtest_logreport(report):  # type: ignore[no-untyped-def]
    """Record each phase (setup, call, teardown) of each test."""
    batch = _state["batch"]
    if batch is not None and _state["tag"] is not None:
        batch.record(report)
    _emit(
        {
            "type": "phase",
            "nodeid": report.nodeid,
            "when": report.when,
            "outcome": report.outcome,
            "wasxfail": hasattr(report, "wasxfail"),
            "duration": float(report.duration),
            "message": _message(report) if report.failed or report.skipped else None,
        }
    )


def pytest_sessionfinish(session, exitstatus):  # type: ignore[no-untyped-def]
    """Record the end of the session; a report without it is incomplete."""
    _emit({"type": "finish", "exitstatus": int(exitstatus)})
