"""Exception hierarchy shared by every layer of sheetcalc.

Spreadsheet *error values* such as ``#DIV/0!`` are ordinary values (see
:mod:`sheetcalc.values`); the exceptions here signal misuse of the API or
malformed input.  :class:`ErrorSignal` is the one exception used internally
to carry an error value out of deeply nested evaluation code.
"""


class SheetCalcError(Exception):
    """Base class of every exception raised by sheetcalc."""


class AddressError(SheetCalcError):
    """Raised for malformed A1 references or coordinates outside the grid."""


class FormulaSyntaxError(SheetCalcError):
    """Raised when formula text cannot be tokenized or parsed.

    Attributes:
        position: zero-based character offset in the formula text where the
            problem was detected (``None`` when unknown).
    """

    def __init__(self, message, position=None):
        """Store ``message`` and the offending ``position``."""
        super().__init__(message if position is None else f"{message} at position {position}")
        self.position = position


class TokenizeError(FormulaSyntaxError):
    """Raised by the tokenizer for characters or literals it cannot lex."""


class ParseError(FormulaSyntaxError):
    """Raised by the parser for token sequences that are not a formula."""


class WorkbookError(SheetCalcError):
    """Raised for invalid workbook operations (bad sheet names, bad counts...)."""


class UnknownSheetError(WorkbookError):
    """Raised when a sheet name does not exist in the workbook."""


class NameDefinitionError(WorkbookError):
    """Raised when a defined name is invalid or clashes with a cell reference."""


class FormatError(SheetCalcError):
    """Raised for number-format patterns that cannot be interpreted."""


class CsvError(SheetCalcError):
    """Raised for malformed CSV input (unterminated or stray quotes)."""


class ErrorSignal(SheetCalcError):
    """Carries a spreadsheet error value out of nested evaluation code.

    The evaluator catches it around every function call and operator and turns
    it back into the carried :class:`~sheetcalc.values.ErrorValue`.

    Attributes:
        error: the :class:`~sheetcalc.values.ErrorValue` being propagated.
    """

    def __init__(self, error):
        """Wrap the spreadsheet error value ``error``."""
        super().__init__(error.code)
        self.error = error
