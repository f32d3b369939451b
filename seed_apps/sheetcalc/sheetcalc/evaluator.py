"""Evaluates formula ASTs against a workbook-like data source.

The data source must provide:

* ``resolve_sheet(name)`` -> the canonical sheet name, or ``None`` if absent;
* ``cell_value(sheet, row, col)`` -> the current value of a cell;
* ``lookup_name(name)`` -> the reference a defined name stands for, an
  :class:`~sheetcalc.values.ErrorValue` for a name whose target was
  deleted, or ``None`` for an undefined name.

References evaluate to :class:`~sheetcalc.values.Grid` objects.  Operators
need scalars: a 1x1 grid is unwrapped and a larger one is ``#VALUE!``
(implicit intersection is not performed).
"""

from .addressing import CellRef
from .errors import ErrorSignal
from .nodes import Binary, Boolean, Call, CellNode, ErrorLiteral, Name, Number, Percent, RangeNode, Text, Unary
from .operators import apply_binary, apply_percent, apply_unary
from .values import BLANK, NAME, REF, VALUE, ErrorValue, Grid, is_number


class Evaluator:
    """Evaluates formula trees.

    Args:
        source: the data source described in the module docstring.
        registry: a :class:`~sheetcalc.functions.FunctionRegistry`.
    """

    def __init__(self, source, registry):
        """Bind the evaluator to ``source`` and the function ``registry``."""
        self.source = source
        self.registry = registry

    def evaluate(self, node, sheet):
        """Evaluate ``node`` as written on ``sheet``; errors come back as error values.

        The result may be a :class:`Grid` when the expression is a reference
        or a function returning an array.
        """
        try:
            return self._eval(node, sheet)
        except ErrorSignal as signal:
            return signal.error

    def evaluate_formula(self, node, sheet):
        """Evaluate ``node`` to the scalar a cell would display.

        A single-cell result is unwrapped, a blank result becomes 0 (as ``=A1``
        shows 0 for an empty ``A1``), and a multi-cell result is ``#VALUE!``.
        """
        result = self.evaluate(node, sheet)
        if isinstance(result, Grid):
            if result.height != 1 or result.width != 1:
                return VALUE
            result = result.at(0, 0)
        return 0.0 if result is BLANK else result

    def _eval(self, node, sheet):
        """Evaluate one node, raising :class:`ErrorSignal` for errors that must propagate."""
        if isinstance(node, (Number, Text, Boolean)):
            return node.value
        if isinstance(node, ErrorLiteral):
            return node.error
        if isinstance(node, (CellNode, RangeNode)):
            return self.read_reference(node.ref, sheet)
        if isinstance(node, Name):
            target = self.source.lookup_name(node.name)
            if target is None:
                raise ErrorSignal(NAME)
            if isinstance(target, ErrorValue):
                raise ErrorSignal(target)
            return self.read_reference(target, sheet)
        if isinstance(node, Unary):
            return apply_unary(node.op, self._scalar(self._eval(node.operand, sheet)))
        if isinstance(node, Percent):
            return apply_percent(self._scalar(self._eval(node.operand, sheet)))
        if isinstance(node, Binary):
            left = self._scalar(self._eval(node.left, sheet))
            right = self._scalar(self._eval(node.right, sheet))
            return apply_binary(node.op, left, right)
        if isinstance(node, Call):
            return self._call(node, sheet)
        raise TypeError(f"cannot evaluate {node!r}")

    @staticmethod
    def _scalar(value):
        """Unwrap a 1x1 grid; raise ``#VALUE!`` for larger grids; pass scalars through."""
        if isinstance(value, Grid):
            if value.height == 1 and value.width == 1:
                return value.at(0, 0)
            raise ErrorSignal(VALUE)
        return value

    def read_reference(self, ref, sheet):
        """Return the :class:`Grid` of values a cell or range reference points at.

        Unqualified references read from ``sheet``.

        Raises:
            ErrorSignal: ``#REF!`` when the referenced sheet does not exist.
        """
        target = self.source.resolve_sheet(ref.sheet or sheet)
        if target is None:
            raise ErrorSignal(REF)
        if isinstance(ref, CellRef):
            return Grid([[self.source.cell_value(target, ref.row, ref.col)]])
        return Grid([
            [self.source.cell_value(target, row, col) for col in range(ref.left, ref.right + 1)]
            for row in range(ref.top, ref.bottom + 1)
        ])

    def _call(self, node, sheet):
        """Evaluate a function call: look it up, check arity, evaluate arguments, invoke.

        Unknown functions give ``#NAME?`` and a wrong argument count ``#VALUE!``.
        Lazy functions receive thunks instead of values.
        """
        spec = self.registry.get(node.name)
        if spec is None:
            raise ErrorSignal(NAME)
        if not spec.accepts(len(node.args)):
            raise ErrorSignal(VALUE)
        if spec.lazy:
            args = [self._thunk(arg, sheet) for arg in node.args]
        else:
            args = [self.evaluate(arg, sheet) for arg in node.args]
        result = spec.impl(args)
        if is_number(result):
            return float(result)
        return result

    def _thunk(self, node, sheet):
        """Return a zero-argument callable that evaluates ``node`` on demand."""
        return lambda: self.evaluate(node, sheet)
