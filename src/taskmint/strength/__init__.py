"""The test-strength gate: after a task is accepted, mutants of its gold code (flipped
comparisons and boolean operators, shifted constants, dropped statements, early returns,
swapped arguments, removed branches; Python and JavaScript) are graded with the task's graded
tests, hidden ones included, by the fast validation machinery (`validate_batch`: forked runs,
test selection). The mutation score is killed / graded; a task under
`StrengthConfig.min_mutation_score` is rejected as `weak_tests`. See docs/strength.md.
"""

from taskmint.strength.gate import (
    GENERATOR_VERSION,
    GateItem,
    MutantResult,
    Strength,
    gate_mutants,
    grade_mutants,
    measure_strength,
    mutant_candidate,
    weak_reason,
)
from taskmint.strength.mutants import Mutant, gold_lines, mutants_of, sample_mutants

__all__ = [
    "GENERATOR_VERSION",
    "GateItem",
    "Mutant",
    "MutantResult",
    "Strength",
    "gate_mutants",
    "gold_lines",
    "grade_mutants",
    "measure_strength",
    "mutant_candidate",
    "mutants_of",
    "sample_mutants",
    "weak_reason",
]
