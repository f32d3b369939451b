"""Test-runner adapters: how a seed's tests run in a sandbox and how outcomes come back.

An adapter builds the command for its runner (pytest for Python, node's test runner for
JavaScript) and reads the structured report the runner writes to the out-of-band report folder.
Outcomes never come from the output that the code under test shares.
"""

from taskmint.runners.adapters import Adapter, NodeAdapter, PytestAdapter, adapter_for
from taskmint.runners.execute import run_tests
from taskmint.runners.report import parse_node_report, parse_pytest_report

__all__ = [
    "Adapter",
    "NodeAdapter",
    "PytestAdapter",
    "adapter_for",
    "parse_node_report",
    "parse_pytest_report",
    "run_tests",
]
