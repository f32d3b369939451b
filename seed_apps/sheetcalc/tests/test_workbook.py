import pytest

from sheetcalc import (
    BLANK, CYCLE, DIV0, NAME, REF, AddressError, FormatError, FormulaSyntaxError, NameDefinitionError,
    UnknownSheetError, Workbook, WorkbookError,
)


def test_new_workbook_has_default_sheet():
    assert Workbook().sheet_names() == ["Sheet1"]


def test_set_and_get_constant_values(wb):
    wb.set_cells({"A1": "12.5", "A2": "hello", "A3": "TRUE", "A4": 7, "A5": False, "A6": ""})
    assert [wb.get_value(f"A{i}") for i in range(1, 7)] == [12.5, "hello", True, 7.0, False, BLANK]


def test_set_cell_rejects_unsupported_content(wb):
    with pytest.raises(WorkbookError):
        wb.set_cell("A1", [1, 2])


def test_formula_is_recalculated_when_precedent_changes(wb):
    wb.set_cell("A1", 2)
    wb.set_cell("B1", "=A1*10")
    assert wb.get_value("B1") == 20.0
    wb.set_cell("A1", 3)
    assert wb.get_value("B1") == 30.0


def test_chain_of_formulas_recalculates_in_dependency_order(wb):
    wb.set_cells({"C1": "=B1+1", "B1": "=A1+1", "A1": 1})
    assert wb.get_value("C1") == 3.0
    wb.set_cell("A1", 10)
    assert (wb.get_value("B1"), wb.get_value("C1")) == (11.0, 12.0)


def test_only_dirty_cells_are_recalculated(wb, monkeypatch):
    wb.set_cells({"A1": 1, "B1": "=A1*2", "C1": 5, "D1": "=C1*2"})
    evaluated = []
    original = wb._evaluator.evaluate_formula

    def spy(node, sheet):
        evaluated.append(node)
        return original(node, sheet)

    monkeypatch.setattr(wb._evaluator, "evaluate_formula", spy)
    wb.set_cell("A1", 4)
    assert len(evaluated) == 1
    assert wb.get_value("B1") == 8.0


def test_formula_on_other_sheet(wb):
    wb.set_cell("Data!B2", 5)
    wb.set_cell("A1", "=Data!B2*2")
    assert wb.get_value("A1") == 10.0
    wb.set_cell("B2", 6, sheet="Data")
    assert wb.get_value("A1") == 12.0


def test_get_formula_returns_canonical_text(wb):
    wb.set_cell("A1", "= sum( b1:b2 ) + 1")
    assert wb.get_formula("A1") == "=SUM(B1:B2)+1"
    assert wb.get_formula("A2") is None


def test_invalid_formula_leaves_cell_unchanged(wb):
    wb.set_cell("A1", 5)
    with pytest.raises(FormulaSyntaxError):
        wb.set_cell("A1", "=1+")
    assert wb.get_value("A1") == 5.0


def test_lone_equals_sign_is_text(wb):
    wb.set_cell("A1", "=")
    assert wb.get_value("A1") == "="


def test_get_input_shows_formula_or_constant(wb):
    wb.set_cells({"A1": 1.5, "A2": "=A1*2", "A3": "=1/0"})
    assert wb.get_input("A1") == "1.5"
    assert wb.get_input("A2") == "=A1*2"
    assert wb.get_value("A3") == DIV0


def test_clear_cell_removes_value_and_recalculates(wb):
    wb.set_cells({"A1": 4, "B1": "=A1+1"})
    wb.clear_cell("A1")
    assert wb.get_value("A1") is BLANK
    assert wb.get_value("B1") == 1.0
    wb.clear_cell("Z99")
    assert wb.get_value("Z99") is BLANK


def test_clearing_a_formula_cell_forgets_its_precedents(wb):
    wb.set_cells({"A1": 4, "B1": "=A1+1"})
    wb.clear_cell("B1")
    assert wb.dependents("A1") == []


def test_self_reference_is_a_cycle(wb):
    wb.set_cell("A1", "=A1+1")
    assert wb.get_value("A1") == CYCLE


def test_cycle_members_and_their_dependents_show_cycle_error(wb):
    wb.set_cells({"A1": "=B1", "B1": "=A1", "C1": "=A1+1", "D1": 5})
    assert [wb.get_value(a) for a in ("A1", "B1", "C1", "D1")] == [CYCLE, CYCLE, CYCLE, 5.0]


def test_breaking_a_cycle_restores_values(wb):
    wb.set_cells({"A1": "=B1", "B1": "=A1"})
    wb.set_cell("B1", 3)
    assert wb.get_value("A1") == 3.0


def test_iferror_can_catch_cycle_from_outside(wb):
    wb.set_cells({"A1": "=A1", "B1": '=IFERROR(A1, "loop")'})
    assert wb.get_value("B1") == "loop"


def test_unknown_sheet_errors(wb):
    with pytest.raises(UnknownSheetError):
        wb.get_value("Nope!A1")
    with pytest.raises(UnknownSheetError):
        wb.set_cell("A1", 1, sheet="Nope")


def test_range_address_is_rejected_where_a_cell_is_needed(wb):
    with pytest.raises(AddressError):
        wb.get_value("A1:B2")


def test_add_sheet_validation(wb):
    with pytest.raises(WorkbookError):
        wb.add_sheet("data")
    for bad in ("", "a/b", "x" * 32):
        with pytest.raises(WorkbookError):
            wb.add_sheet(bad)


def test_adding_a_sheet_resolves_pending_references(wb):
    wb.set_cell("A1", "=Later!A1+1")
    assert wb.get_value("A1") == REF
    wb.add_sheet("Later")
    assert wb.get_value("A1") == 1.0
    wb.set_cell("Later!A1", 41)
    assert wb.get_value("A1") == 42.0


def test_remove_sheet_turns_references_into_ref_errors(wb):
    wb.set_cell("Data!A1", 3)
    wb.set_cell("A1", "=Data!A1*2")
    wb.remove_sheet("DATA")
    assert wb.sheet_names() == ["Sheet1"]
    assert wb.get_value("A1") == REF
    with pytest.raises(WorkbookError):
        wb.remove_sheet("Sheet1")
    with pytest.raises(UnknownSheetError):
        wb.remove_sheet("Data")


def test_defined_names_are_used_and_tracked(wb):
    wb.set_cells({"A1": 1, "A2": 2, "A3": 3})
    wb.define_name("Values", "A1:A3")
    wb.set_cell("B1", "=SUM(Values)")
    assert wb.get_value("B1") == 6.0
    wb.set_cell("A2", 20)
    assert wb.get_value("B1") == 24.0
    wb.define_name("values", "A1:A2")
    assert wb.get_value("B1") == 21.0
    assert wb.defined_names() == {"VALUES": "Sheet1!A1:A2"}


def test_name_on_other_sheet_and_removal(wb):
    wb.set_cell("Data!C3", 0.2)
    wb.define_name("Rate", "C3", sheet="Data")
    wb.set_cell("A1", "=100*Rate")
    assert wb.get_value("A1") == 20.0
    wb.remove_name("rate")
    assert wb.get_value("A1") == NAME
    with pytest.raises(NameDefinitionError):
        wb.remove_name("rate")


@pytest.mark.parametrize("bad", ["A1", "TRUE", "has space", "1abc", "xfd100"])
def test_invalid_defined_names_are_rejected(wb, bad):
    with pytest.raises(NameDefinitionError):
        wb.define_name(bad, "A1")


def test_name_pointing_at_formula_cell_forms_cycle(wb):
    wb.define_name("Total", "A1")
    wb.set_cell("A1", "=Total+1")
    assert wb.get_value("A1") == CYCLE


def test_precedents_and_dependents_queries(wb):
    wb.set_cells({"A1": 1, "A2": 2, "B1": "=A1+A2", "C1": "=B1*Data!A1"})
    wb.define_name("First", "A1")
    wb.set_cell("D1", "=First")
    assert wb.precedents("C1") == ["Data!A1", "Sheet1!B1"]
    assert wb.precedents("D1") == ["Sheet1!A1"]
    assert wb.dependents("A1") == ["Sheet1!B1", "Sheet1!D1"]
    assert wb.dependents("A1", transitive=True) == ["Sheet1!B1", "Sheet1!C1", "Sheet1!D1"]
    assert wb.precedents("A1") == []


def test_precedents_through_two_names_for_the_same_cell_are_listed_once(wb):
    wb.define_name("First", "A1")
    wb.define_name("Again", "A1:A2")
    wb.set_cell("B1", "=First+SUM(Again)")
    assert wb.precedents("B1") == ["Sheet1!A1", "Sheet1!A2"]
    assert wb.dependents("A1") == ["Sheet1!B1"]


def test_precedents_of_removed_sheet_keep_their_name(wb):
    wb.set_cell("A1", "=Gone!B2")
    assert wb.precedents("A1") == ["gone!B2"]


def test_number_format_affects_display_only(wb):
    wb.set_cell("A1", 1234.5)
    wb.set_format("A1", "#,##0.00")
    assert wb.get_display("A1") == "1,234.50"
    assert wb.get_value("A1") == 1234.5
    wb.set_cell("A1", 0.25)
    assert wb.get_display("A1") == "0.25"
    wb.set_format("A1", None)
    assert wb.get_display("A1") == "0.25"


def test_format_on_empty_cell_and_errors(wb):
    wb.set_format("B1", "0%")
    assert wb.get_display("B1") == ""
    wb.set_cell("B1", "=1/4")
    assert wb.get_display("B1") == "25%"
    assert wb.get_display("C9") == ""
    with pytest.raises(FormatError):
        wb.set_format("B1", '"open')


def test_evaluate_does_not_store_anything(wb):
    wb.set_cell("A1", 4)
    assert wb.evaluate("=A1^2") == 16.0
    assert wb.evaluate("SUM(A1:A3)", sheet="Data") == 0.0
    assert wb.used_size() == (1, 1)


def test_used_size_ignores_blank_cells_and_formats(wb):
    wb.set_cells({"B3": 1, "D2": "x", "F9": ""})
    wb.set_format("H20", "0.00")
    assert wb.used_size() == (3, 4)
    assert wb.used_size("Data") == (0, 0)
