"""Stage 5, `validate`: a `Candidate` -> a `Verdict`.

The original suite runs several times first (tests with mixed results are flaky and excluded),
then the broken tree runs several times. FAIL_TO_PASS are the tests that passed on every
original run and failed on every broken run; PASS_TO_PASS passed on every run. A candidate is
accepted when FAIL_TO_PASS is not empty and nothing else moved.
"""

from taskmint.validate.baseline import Baseline, run_baseline
from taskmint.validate.candidate import materialize, validate_candidate
from taskmint.validate.forked import validate_batch

__all__ = ["Baseline", "materialize", "run_baseline", "validate_batch", "validate_candidate"]
