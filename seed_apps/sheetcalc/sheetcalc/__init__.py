"""sheetcalc: a small spreadsheet formula engine.

Layers, from the bottom up: :mod:`~sheetcalc.addressing` (A1 references),
:mod:`~sheetcalc.values` (value model), :mod:`~sheetcalc.tokenizer` ->
:mod:`~sheetcalc.parser` -> :mod:`~sheetcalc.nodes` /
:mod:`~sheetcalc.printer` (formula syntax), :mod:`~sheetcalc.operators` and
:mod:`~sheetcalc.functions` (semantics), :mod:`~sheetcalc.evaluator`,
:mod:`~sheetcalc.graph` and :mod:`~sheetcalc.rewrite` (recalculation and
reference maintenance), and :mod:`~sheetcalc.workbook` on top, with
:mod:`~sheetcalc.formatting` and :mod:`~sheetcalc.csvio` for presentation
and interchange.
"""

from .errors import (AddressError, CsvError, ErrorSignal, FormatError, FormulaSyntaxError, NameDefinitionError,
                     ParseError, SheetCalcError, TokenizeError, UnknownSheetError, WorkbookError)
from .parser import parse_formula
from .printer import to_formula
from .values import BLANK, CYCLE, DIV0, NA, NAME, NUM, REF, VALUE, ErrorValue, Grid
from .workbook import Workbook

__all__ = [
    "AddressError", "CsvError", "ErrorSignal", "FormatError", "FormulaSyntaxError", "NameDefinitionError",
    "ParseError", "SheetCalcError", "TokenizeError", "UnknownSheetError", "WorkbookError",
    "parse_formula", "to_formula",
    "BLANK", "CYCLE", "DIV0", "NA", "NAME", "NUM", "REF", "VALUE", "ErrorValue", "Grid",
    "Workbook",
]
