import pytest

from sheetcalc import BLANK, NA, AddressError, CsvError, FormulaSyntaxError, Workbook
from sheetcalc.csvio import (
    export_csv, format_csv, import_csv, load_csv_file, parse_csv, quote_field, save_csv_file,
)


@pytest.mark.parametrize("text, rows", [
    ("a,b\nc,d\n", [["a", "b"], ["c", "d"]]),
    ("a,b\r\nc,d", [["a", "b"], ["c", "d"]]),
    ("a\rb", [["a"], ["b"]]),
    ('"x,y",z', [["x,y", "z"]]),
    ('"say ""hi""",2', [['say "hi"', "2"]]),
    ('"multi\nline",3\n', [["multi\nline", "3"]]),
    ("a,\n", [["a", ""]]),
    (",", [["", ""]]),
    ('""', [[""]]),
    ("a\n\nb\n", [["a"], [""], ["b"]]),
    ("", []),
])
def test_parse_csv(text, rows):
    assert parse_csv(text) == rows


def test_parse_csv_with_semicolon_delimiter():
    assert parse_csv("1;2,5\n", delimiter=";") == [["1", "2,5"]]


@pytest.mark.parametrize("text, message", [
    ('a"b,c', "stray quote in unquoted field on line 1"),
    ('x\n"abc"d', "unexpected character after closing quote on line 2"),
    ('a\n"open\nstill', "unterminated quoted field on line 3"),
])
def test_parse_csv_errors_name_the_line(text, message):
    with pytest.raises(CsvError, match=message):
        parse_csv(text)


@pytest.mark.parametrize("field, expected", [
    ("plain", "plain"), ("a,b", '"a,b"'), ('q"q', '"q""q"'), ("two\nlines", '"two\nlines"'), (" pad", '" pad"'), ("", ""),
])
def test_quote_field(field, expected):
    assert quote_field(field) == expected


def test_format_csv_round_trips_through_parser():
    rows = [["name", "note"], ["Ann", 'said "hi", left'], ["Bob", "line\nbreak"]]
    text = format_csv(rows)
    assert text == 'name,note\nAnn,"said ""hi"", left"\nBob,"line\nbreak"\n'
    assert parse_csv(text) == rows


def test_import_csv_interprets_fields(wb):
    size = import_csv(wb, "item,qty,ok\nbolt,12,TRUE\nnut,,#N/A\n")
    assert size == (3, 3)
    assert wb.get_value("B2") == 12.0
    assert wb.get_value("C2") is True
    assert wb.get_value("B3") is BLANK
    assert wb.get_value("C3") == NA


def test_import_csv_at_origin_on_other_sheet(wb):
    import_csv(wb, "1,2\n3,4\n", origin="Data!C2")
    assert wb.get_value("Data!D3") == 4.0
    assert wb.get_value("Data!C2") == 1.0


def test_import_csv_keeps_formulas_as_text_unless_asked(wb):
    import_csv(wb, "2,=A1*3\n")
    assert wb.get_value("B1") == "=A1*3"
    import_csv(wb, "2,=A1*3\n", formulas=True)
    assert wb.get_value("B1") == 6.0
    with pytest.raises(FormulaSyntaxError):
        import_csv(wb, "=1+\n", formulas=True)


def test_import_csv_rejects_range_origin(wb):
    with pytest.raises(AddressError):
        import_csv(wb, "1\n", origin="A1:B2")


def test_export_csv_values_formulas_and_formats(wb):
    wb.set_cells({"A1": "name", "B1": "total", "A2": "x, y", "B2": "=1/3", "C3": "=1/0"})
    wb.set_format("B2", "0.00")
    assert export_csv(wb) == 'name,total,\n"x, y",0.333333333333333,\n,,#DIV/0!\n'
    assert export_csv(wb, formatted=True) == 'name,total,\n"x, y",0.33,\n,,#DIV/0!\n'
    assert export_csv(wb, formulas=True, delimiter=";") == "name;total;\nx, y;=1/3;\n;;=1/0\n"


def test_export_empty_sheet_is_empty_text(wb):
    assert export_csv(wb, sheet="Data") == ""


def test_csv_files_round_trip(wb, tmp_path):
    wb.set_cells({"A1": 1, "A2": 2, "A3": "=SUM(A1:A2)", "B1": "é ü"})
    path = tmp_path / "out.csv"
    save_csv_file(wb, path, formulas=True)
    assert path.read_text(encoding="utf-8") == "1,é ü\n2,\n=SUM(A1:A2),\n"
    other = Workbook()
    assert load_csv_file(other, path, formulas=True) == (3, 2)
    assert other.get_value("A3") == 3.0
    assert other.get_value("B1") == "é ü"
