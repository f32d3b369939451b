import pytest

from sheetcalc.addressing import parse_reference
from sheetcalc.evaluator import Evaluator
from sheetcalc.functions import FunctionRegistry, FunctionSpec, default_registry
from sheetcalc.nodes import Number
from sheetcalc.parser import parse_formula
from sheetcalc.values import BLANK, DIV0, NAME, NA, REF, VALUE, Grid


class FakeSource:
    """Minimal data source: one sheet ``S`` plus optional names."""

    def __init__(self, cells, names=None):
        self.cells = cells
        self.names = names or {}

    def resolve_sheet(self, name):
        return "S" if name.casefold() == "s" else None

    def cell_value(self, sheet, row, col):
        return self.cells.get((row, col), BLANK)

    def lookup_name(self, name):
        return self.names.get(name.upper())


def make(cells=None, names=None, registry=None):
    return Evaluator(FakeSource(cells or {}, names), registry or default_registry())


def test_cell_reference_evaluates_to_single_cell_grid():
    evaluator = make({(0, 0): 5.0})
    assert evaluator.evaluate(parse_formula("A1"), "S") == Grid([[5.0]])


def test_range_reference_reads_rows_in_order():
    evaluator = make({(0, 0): 1.0, (1, 1): 4.0})
    assert evaluator.evaluate(parse_formula("A1:B2"), "s") == Grid([[1.0, BLANK], [BLANK, 4.0]])


def test_unknown_sheet_gives_ref_error():
    assert make().evaluate(parse_formula("Other!A1+1"), "S") == REF


def test_evaluate_formula_unwraps_and_turns_blank_into_zero():
    evaluator = make({(0, 0): "x"})
    assert evaluator.evaluate_formula(parse_formula("A1"), "S") == "x"
    assert evaluator.evaluate_formula(parse_formula("B7"), "S") == 0.0
    assert evaluator.evaluate_formula(parse_formula("A1:A2"), "S") == VALUE


def test_operators_on_multi_cell_ranges_are_value_errors():
    assert make().evaluate(parse_formula("A1:A2+1"), "S") == VALUE


def test_unary_and_percent_on_references():
    evaluator = make({(0, 0): 50.0})
    assert evaluator.evaluate(parse_formula("-A1%"), "S") == -0.5


def test_error_literals_propagate_through_operators():
    assert make().evaluate(parse_formula("1+#N/A"), "S") == NA


def test_defined_names_resolve_to_references():
    evaluator = make({(0, 0): 2.0, (1, 0): 3.0}, {"NUMS": parse_reference("S!A1:A2")})
    assert evaluator.evaluate_formula(parse_formula("SUM(nums)*2"), "S") == 10.0


def test_undefined_and_dangling_names():
    evaluator = make(names={"GONE": REF})
    assert evaluator.evaluate(parse_formula("Missing+1"), "S") == NAME
    assert evaluator.evaluate(parse_formula("GONE"), "S") == REF


def test_unknown_function_is_name_error_and_bad_arity_is_value_error():
    evaluator = make()
    assert evaluator.evaluate(parse_formula("NOSUCH(1)"), "S") == NAME
    assert evaluator.evaluate(parse_formula("ABS(1, 2)"), "S") == VALUE
    assert evaluator.evaluate(parse_formula("NA(1)"), "S") == VALUE


def test_non_lazy_function_receives_error_values_as_arguments():
    assert make().evaluate(parse_formula("ISERROR(1/0)"), "S") is True


def test_integer_results_from_custom_functions_become_floats():
    registry = FunctionRegistry([FunctionSpec("SEVEN", lambda args: 7, 0, 0)])
    result = make(registry=registry).evaluate(parse_formula("SEVEN()"), "S")
    assert result == 7.0 and isinstance(result, float)


def test_lazy_functions_only_evaluate_needed_thunks():
    calls = []

    def first(thunks):
        calls.append(len(thunks))
        return thunks[0]()

    registry = FunctionRegistry([FunctionSpec("FIRST", first, 1, None, lazy=True)])
    result = make(registry=registry).evaluate(parse_formula("FIRST(2, NOSUCH())"), "S")
    assert result == 2.0
    assert calls == [2]


def test_division_by_zero_inside_nested_expression():
    assert make().evaluate(parse_formula("(1+2)/(3-3)"), "S") == DIV0


def test_evaluating_a_non_node_raises_type_error():
    with pytest.raises(TypeError):
        make().evaluate(object(), "S")


def test_literal_number_node_evaluates_to_itself():
    assert make().evaluate(Number(2.5), "S") == 2.5
