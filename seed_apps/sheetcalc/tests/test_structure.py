import pytest

from sheetcalc import BLANK, REF, AddressError, WorkbookError


@pytest.fixture
def ledger(wb):
    wb.set_cells({
        "A1": 10, "A2": 20, "A3": 30, "A4": "=SUM(A1:A3)",
        "B1": "=A1*2", "B2": "=$A$3+1", "C1": "=A4",
    })
    wb.set_cell("Data!A1", "=Sheet1!A2+Sheet1!A4")
    return wb


def test_insert_rows_moves_cells_and_rewrites_references(ledger):
    ledger.insert_rows(2, count=2)
    assert ledger.get_value("A4") == 20.0
    assert ledger.get_formula("A6") == "=SUM(A1:A5)"
    assert ledger.get_formula("B4") == "=$A$5+1"
    assert ledger.get_formula("C1") == "=A6"
    assert ledger.get_value("A2") is BLANK
    assert ledger.get_value("C1") == 60.0


def test_insert_rows_rewrites_references_on_other_sheets(ledger):
    ledger.insert_rows(1)
    assert ledger.get_formula("Data!A1") == "=Sheet1!A3+Sheet1!A5"
    assert ledger.get_value("Data!A1") == 80.0


def test_inserted_rows_inside_a_range_are_summed(ledger):
    ledger.insert_rows(3)
    ledger.set_cell("A3", 5)
    assert ledger.get_value("A5") == 65.0


def test_delete_rows_turns_lost_references_into_ref(ledger):
    ledger.delete_rows(3)
    assert ledger.get_formula("A3") == "=SUM(A1:A2)"
    assert ledger.get_value("A3") == 30.0
    assert ledger.get_formula("B2") == "=#REF!+1"
    assert ledger.get_value("B2") == REF
    assert ledger.get_formula("C1") == "=A3"


def test_delete_rows_shifts_later_rows_up(ledger):
    ledger.delete_rows(1, count=2)
    assert ledger.get_value("A1") == 30.0
    assert ledger.get_formula("A2") == "=SUM(A1:A1)"
    assert ledger.get_value("A2") == 30.0
    assert ledger.get_formula("Data!A1") == "=#REF!+Sheet1!A2"


def test_insert_and_delete_columns(wb):
    wb.set_cells({"A1": 1, "B1": 2, "C1": 3, "D1": "=SUM(A1:C1)", "E1": "=$C$1*10"})
    wb.insert_columns("B")
    assert wb.get_formula("E1") == "=SUM(A1:D1)"
    assert wb.get_formula("F1") == "=$D$1*10"
    assert wb.get_value("F1") == 30.0
    wb.delete_columns("C", count=2)
    assert wb.get_formula("C1") == "=SUM(A1:B1)"
    assert wb.get_value("C1") == 1.0
    assert wb.get_formula("D1") == "=#REF!*10"


def test_structural_edit_on_other_sheet_leaves_this_sheet_alone(ledger):
    ledger.insert_rows(1, sheet="Data")
    assert ledger.get_formula("A4") == "=SUM(A1:A3)"
    assert ledger.get_formula("Data!A2") == "=Sheet1!A2+Sheet1!A4"


def test_defined_names_follow_structural_edits(wb):
    wb.set_cells({"A1": 1, "A2": 2, "A3": 3, "B1": "=SUM(Nums)"})
    wb.define_name("Nums", "A2:A3")
    wb.insert_rows(1)
    assert wb.defined_names() == {"NUMS": "Sheet1!A3:A4"}
    assert wb.get_value("B2") == 5.0
    wb.delete_rows(3, count=2)
    assert wb.defined_names() == {"NUMS": "#REF!"}
    assert wb.get_value("B2") == REF


def test_structural_edit_validation(wb):
    with pytest.raises(WorkbookError):
        wb.insert_rows(0)
    with pytest.raises(WorkbookError):
        wb.delete_columns("A", count=0)


def test_copy_range_shifts_relative_references(wb):
    wb.set_cells({"A1": 1, "A2": 2, "B1": "=A1*$A$1", "C1": 5})
    wb.copy_range("B1", "B2")
    assert wb.get_formula("B2") == "=A2*$A$1"
    assert wb.get_value("B2") == 2.0


def test_copy_range_block_with_values_formats_and_blanks(wb):
    wb.set_cells({"A1": 1, "B1": "=A1+1", "A2": 3, "D2": "old"})
    wb.set_format("A1", "0.00")
    wb.copy_range("A1:B2", "C1")
    assert wb.get_display("C1") == "1.00"
    assert wb.get_formula("D1") == "=C1+1"
    assert wb.get_value("D1") == 2.0
    assert wb.get_value("C2") == 3.0
    assert wb.get_value("D2") is BLANK


def test_copy_range_to_other_sheet_keeps_unqualified_refs_local(wb):
    wb.set_cells({"A1": 1, "B1": "=A1*2"})
    wb.set_cell("Data!A5", 7)
    wb.copy_range("B1", "B5", dest_sheet="Data")
    assert wb.get_formula("Data!B5") == "=A5*2"
    assert wb.get_value("Data!B5") == 14.0


def test_copy_range_reference_off_grid_becomes_ref(wb):
    wb.set_cells({"A2": 1, "B2": "=A1+A2"})
    wb.copy_range("B2", "B1")
    assert wb.get_formula("B1") == "=#REF!+A1"


def test_copy_range_overlapping_move_down(wb):
    wb.set_cells({"A1": 1, "A2": 2, "A3": 3})
    wb.copy_range("A1:A3", "A2")
    assert [wb.get_value(f"A{i}") for i in range(1, 5)] == [1.0, 1.0, 2.0, 3.0]


def test_copy_range_rejects_paste_off_grid(wb):
    wb.set_cell("A1", 1)
    with pytest.raises(AddressError):
        wb.copy_range("A1:B2", "XFD1")


def test_copy_updates_dependents_of_destination(wb):
    wb.set_cells({"A1": 9, "C1": "=B1*2"})
    wb.copy_range("A1", "B1")
    assert wb.get_value("C1") == 18.0
