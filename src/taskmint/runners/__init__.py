"""Test-runner adapters: how a seed's tests run in a sandbox and how outcomes come back.

An adapter builds the command for its runner and reads the structured report the runner writes
to the out-of-band report folder. Outcomes never come from the output that the code under test
shares. Each language's profile holds its runner's adapter (`taskmint.languages`: pytest for
Python, node's test runner for JavaScript); this package runs whichever it is given.
"""

from taskmint.runners.adapters import Adapter
from taskmint.runners.execute import run_tests
from taskmint.runners.report import parse_node_report, parse_pytest_report

__all__ = [
    "Adapter",
    "parse_node_report",
    "parse_pytest_report",
    "run_tests",
]
