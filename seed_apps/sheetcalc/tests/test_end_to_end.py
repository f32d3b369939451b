"""Scenario tests that exercise the whole stack through the public API."""

from sheetcalc import CYCLE, DIV0, REF, Workbook
from sheetcalc.csvio import export_csv, import_csv


def test_invoice_with_lookup_tax_and_formatting():
    wb = Workbook(["Invoice", "Prices"])
    import_csv(wb, "sku,price\nA-1,2.50\nB-7,10\nC-3,0.99\n", sheet="Prices")
    wb.define_name("PriceTable", "Prices!A2:B4")
    wb.set_cells({
        "A1": "A-1", "B1": 4, "C1": "=VLOOKUP(A1, PriceTable, 2, FALSE)*B1",
        "A2": "C-3", "B2": 10, "C2": "=VLOOKUP(A2, PriceTable, 2, FALSE)*B2",
        "A3": "Z-9", "B3": 1, "C3": '=IFERROR(VLOOKUP(A3, PriceTable, 2, FALSE)*B3, 0)',
        "C4": "=SUM(C1:C3)", "C5": "=ROUND(C4*8%, 2)", "C6": "=C4+C5",
    })
    wb.set_format("C6", "$#,##0.00")
    assert wb.get_value("C4") == 19.9
    assert wb.get_value("C5") == 1.59
    assert wb.get_display("C6") == "$21.49"
    wb.set_cell("Prices!B3", 12)
    wb.set_cell("A3", "B-7")
    assert wb.get_display("C6") == "$34.45"


def test_grade_book_with_countif_and_averages():
    wb = Workbook()
    scores = [55, 72, 91, 64, 88]
    for row, score in enumerate(scores, start=1):
        wb.set_cell(f"A{row}", score)
        wb.set_cell(f"B{row}", f'=IF(A{row}>=70, "pass", "fail")')
    wb.set_cells({
        "D1": '=COUNTIF(B1:B5, "pass")', "D2": "=AVERAGE(A1:A5)", "D3": '=AVERAGEIF(B1:B5, "fail", A1:A5)',
        "D4": '=TEXTJOIN(",", TRUE, B1:B5)', "D5": "=MAX(A1:A5)-MIN(A1:A5)",
    })
    assert [wb.get_value(f"D{i}") for i in range(1, 6)] == [3.0, 74.0, 59.5, "fail,pass,pass,fail,pass", 36.0]


def test_copy_fill_down_running_total_then_insert_row():
    wb = Workbook()
    wb.set_cells({"A1": 5, "A2": 7, "A3": 9, "B1": "=A1", "B2": "=B1+A2"})
    wb.copy_range("B2", "B3")
    assert [wb.get_value(f"B{i}") for i in (1, 2, 3)] == [5.0, 12.0, 21.0]
    wb.insert_rows(2)
    wb.set_cell("A2", 100)
    assert wb.get_formula("B4") == "=B3+A4"
    assert wb.get_value("B4") == 21.0


def test_cycle_detection_and_recovery_across_sheets():
    wb = Workbook(["One", "Two"])
    wb.set_cell("One!A1", "=Two!A1+1")
    wb.set_cell("Two!A1", "=One!A1+1")
    wb.set_cell("One!B1", "=One!A1*2")
    assert (wb.get_value("One!A1"), wb.get_value("Two!A1"), wb.get_value("One!B1")) == (CYCLE, CYCLE, CYCLE)
    wb.set_cell("Two!A1", 10)
    assert (wb.get_value("One!A1"), wb.get_value("One!B1")) == (11.0, 22.0)


def test_error_propagation_through_a_model():
    wb = Workbook()
    wb.set_cells({"A1": 0, "A2": "=10/A1", "A3": "=A2*2", "A4": '=IFERROR(A3, "n/a")', "A5": "=ISERROR(A3)"})
    assert [wb.get_value(f"A{i}") for i in range(2, 6)] == [DIV0, DIV0, "n/a", True]
    wb.set_cell("A1", 4)
    assert [wb.get_value(f"A{i}") for i in range(2, 6)] == [2.5, 5.0, 5.0, False]


def test_deleting_a_column_used_by_a_report():
    wb = Workbook()
    import_csv(wb, "q1,q2,q3\n10,20,30\n")
    wb.set_cell("E2", "=SUM(A2:C2)")
    wb.set_cell("F2", "=B2/E2")
    wb.delete_columns("B")
    assert wb.get_formula("D2") == "=SUM(A2:B2)"
    assert wb.get_value("D2") == 40.0
    assert wb.get_value("E2") == REF
    assert export_csv(wb) == "q1,q3,,,\n10,30,,40,#REF!\n"


def test_date_schedule_with_text_formatting():
    wb = Workbook()
    wb.set_cells({"A1": "=DATE(2024, 1, 31)", "A2": "=DATE(YEAR(A1), MONTH(A1)+1, DAY(A1))",
                  "B2": '=TEXT(A2, "yyyy-mm-dd")', "C2": '=TEXT(A2, "dddd")'})
    assert wb.get_value("B2") == "2024-03-02"
    assert wb.get_value("C2") == "Saturday"
