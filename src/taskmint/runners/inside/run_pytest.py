"""Bootstrap that runs pytest inside the sandbox with taskmint's plugin and configuration.

Usage: python -I -B run_pytest.py REPORT NONCE PYTHONPATH_JSON -- PYTEST_ARGS...
Runs with -I (isolated: no PYTHON* variables, no user site) so the environment cannot inject
start-up code; the seed's import paths are added here, explicitly.
"""

import json
import os
import sys


def main() -> int:
    report, nonce, pythonpath = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    if sys.argv[4] != "--":
        raise SystemExit("usage: run_pytest.py REPORT NONCE PYTHONPATH_JSON -- ARGS")
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    # Import the runner's own modules before the workspace is on sys.path, so no file in the
    # workspace can stand in for them.
    import pytest
    import taskmint_pytest_report as plugin

    sys.path.remove(here)
    for entry in reversed(pythonpath):
        sys.path.insert(0, entry)
    plugin.configure(report, nonce)
    return int(pytest.main(sys.argv[5:], plugins=[plugin]))


if __name__ == "__main__":
    sys.exit(main())
