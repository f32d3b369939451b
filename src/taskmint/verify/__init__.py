"""`grade_patch(task, patch, ...) -> Reward`: the reward a training loop trusts (the
consumer's `taskmint.verify` resolves a loaded task's runtime and calls it).

The policy controls every byte of its workspace, so nothing is taken from it but its diff: the
verifier rebuilds the broken tree from the task's own data, applies the diff filtered to the
task's allowed paths, restores the tests from its own copy, deletes bytecode, and runs the
expected tests in the sandbox, grading from the out-of-band report against the exact expected
ids (missing, skipped, errored = failed; the exit code is never trusted).
"""

from taskmint.verify.reward import Grader, grade, grade_patch, policy_view
from taskmint.verify.scope import filter_patch

__all__ = ["Grader", "filter_patch", "grade", "grade_patch", "policy_view"]
