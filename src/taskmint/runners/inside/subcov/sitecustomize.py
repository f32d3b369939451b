"""Coverage of the Python processes a test starts, during taskmint's coverage run only.

This folder is on the PYTHONPATH the coverage run hands to the processes its tests start (see
`run_pytest._measure_children`), so a Python interpreter started by a test imports this module
at start-up. With $TASKMINT_SUBCOV set (the coverage run sets it; no other run does), it
measures the process with coverage.py in the dynamic context of the test phase that is running
in the test process (read from the file that process keeps current), and when the process exits
normally it leaves, in the folder $TASKMINT_SUBCOV names:
- `data.<pid>.<random>`: the lines it ran, in that context;
- `rec.<pid>.<random>.json`: its pid, its parent's pid, the context, and how many processes it
  started itself (`subprocess.Popen`), and by other means (fork, exec, system, spawn).
The coverage run then counts a test's processes as measured only when every process it started
left a record, recursively (`taskmint_pytest_report.record_spawns`). A process that is not
Python, that starts without this folder on its path (`-I`, `-S`, a scrubbed environment), or
that dies without exiting leaves no record, and the test stays in every selection.
Then the next `sitecustomize` on the path, if any, is imported, as it would have been.
This file imports nothing of taskmint.
"""

import atexit
import contextlib
import importlib.machinery
import importlib.util
import json
import os
import secrets
import sys

# The plugin's `_SPAWN_EVENTS` but `subprocess.Popen` (this file cannot import the plugin: it
# runs in processes without pytest on their path); keep the two in step.
_OTHER_SPAWNS = frozenset(
    {"os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty", "pty.spawn"}
)


def _measure() -> None:
    conf = json.loads(os.environ["TASKMINT_SUBCOV"])
    folder = conf["dir"]
    try:
        with open(os.path.join(folder, "context"), encoding="utf-8") as fh:
            context = fh.read()
        import coverage  # the environment's, if it has one (else: unmeasured)
    except (OSError, ImportError):
        return  # no record: this process counts as unmeasured
    counts = {"popens": 0, "other": 0}

    def audit(event: str, _args: object) -> None:
        if event == "subprocess.Popen":
            counts["popens"] += 1
        elif event in _OTHER_SPAWNS:
            counts["other"] += 1

    sys.addaudithook(audit)
    cov = coverage.Coverage(data_file=None, source=conf["source"], config_file=False, branch=False)
    cov.start()
    cov.switch_context(context)
    pid = os.getpid()

    def finish() -> None:
        if os.getpid() != pid:  # a forked copy: counted as "other" by its parent
            return
        cov.stop()
        name = f"{pid}.{secrets.token_hex(6)}"
        data = coverage.CoverageData(basename=os.path.join(folder, f"data.{name}"))
        data.update(cov.get_data())
        data.write()
        record = {"pid": pid, "ppid": os.getppid(), "context": context, **counts}
        tmp = os.path.join(folder, f".rec.{name}")
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(record, fh)
        os.rename(tmp, os.path.join(folder, f"rec.{name}.json"))

    atexit.register(finish)


def _chain() -> None:
    """Import the `sitecustomize` this one shadows, if the path holds another."""
    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


if os.environ.get("TASKMINT_SUBCOV"):
    # never break the process under test: unmeasured, its test stays in every selection
    with contextlib.suppress(Exception):
        _measure()
_chain()
