"""Stage 7, `calibrate`: a `Task` -> a `Calibration` per solver.

Two reference solvers run on every task: `null` submits an empty patch and must get reward 0
(the task is really broken), and `oracle` submits the gold patch and must get reward 1 (the
task is solvable and the verifier agrees). Model solvers come later through the `openai`
client; they share this interface.
"""

from taskmint.calibrate.reference import REFERENCE_SOLVERS, calibrate_reference, wilson_interval

__all__ = ["REFERENCE_SOLVERS", "calibrate_reference", "wilson_interval"]
