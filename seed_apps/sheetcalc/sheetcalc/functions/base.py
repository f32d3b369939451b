"""Function registry and argument-coercion helpers shared by all built-ins.

A built-in receives its arguments already evaluated.  References arrive as
:class:`~sheetcalc.values.Grid` objects (a single-cell reference is a 1x1
grid), everything else as a scalar.  This lets aggregate functions apply the
usual rule that *typed-in* arguments are coerced (``SUM("3", TRUE)`` is 4)
while values read from cells only count when they are numbers.

Lazy functions (``IF``, ``IFERROR``...) instead receive zero-argument
callables ("thunks") and evaluate only the arguments they need.

Built-ins report spreadsheet errors by raising
:class:`~sheetcalc.errors.ErrorSignal`; the coercion helpers below do so
automatically for error values.
"""

import math
from dataclasses import dataclass

from ..errors import ErrorSignal
from ..values import VALUE, ErrorValue, Grid, to_bool, to_number, to_text


@dataclass(frozen=True)
class FunctionSpec:
    """Description of one built-in function.

    Attributes:
        name: upper-case function name.
        impl: callable taking the list of arguments (or thunks when lazy).
        min_args: minimum number of arguments.
        max_args: maximum number of arguments, ``None`` for unlimited.
        lazy: when ``True`` the implementation receives thunks.
    """

    name: str
    impl: object
    min_args: int
    max_args: int = None
    lazy: bool = False

    def accepts(self, count):
        """Return ``True`` when ``count`` arguments are allowed."""
        return count >= self.min_args and (self.max_args is None or count <= self.max_args)


class FunctionRegistry:
    """Case-insensitive mapping from function names to :class:`FunctionSpec`."""

    def __init__(self, specs=()):
        """Create a registry pre-filled with ``specs``."""
        self._specs = {}
        for spec in specs:
            self.register(spec)

    def register(self, spec):
        """Add ``spec``.

        Raises:
            ValueError: if a function with the same name is already registered.
        """
        key = spec.name.upper()
        if key in self._specs:
            raise ValueError(f"function {key} is already registered")
        self._specs[key] = spec

    def get(self, name):
        """Return the spec called ``name`` (any case), or ``None``."""
        return self._specs.get(name.upper())

    def names(self):
        """Return all registered names, sorted."""
        return sorted(self._specs)

    def __contains__(self, name):
        """Support ``"SUM" in registry``."""
        return name.upper() in self._specs


def scalar(arg):
    """Return the single value of ``arg``: a 1x1 grid is unwrapped, scalars pass through.

    Raises:
        ErrorSignal: :data:`VALUE` for a grid with more than one cell.
    """
    if isinstance(arg, Grid):
        if arg.height == 1 and arg.width == 1:
            return arg.at(0, 0)
        raise ErrorSignal(VALUE)
    return arg


def scalar_or_error(arg):
    """Like :func:`scalar`, but return :data:`VALUE` instead of raising for larger grids."""
    try:
        return scalar(arg)
    except ErrorSignal as signal:
        return signal.error


def number_arg(arg):
    """Return ``arg`` as a float (see :func:`~sheetcalc.values.to_number`)."""
    return to_number(scalar(arg))


def int_arg(arg):
    """Return ``arg`` as an int, truncating towards zero."""
    return int(math.trunc(number_arg(arg)))


def text_arg(arg):
    """Return ``arg`` as text (see :func:`~sheetcalc.values.to_text`)."""
    return to_text(scalar(arg))


def bool_arg(arg):
    """Return ``arg`` as a bool (see :func:`~sheetcalc.values.to_bool`)."""
    return to_bool(scalar(arg))


def grid_arg(arg):
    """Return ``arg`` as a grid; a scalar becomes a 1x1 grid.

    Raises:
        ErrorSignal: when ``arg`` is an error value.
    """
    if isinstance(arg, ErrorValue):
        raise ErrorSignal(arg)
    return arg if isinstance(arg, Grid) else Grid([[arg]])


def flatten(args):
    """Yield ``(value, from_reference)`` for every value in ``args``.

    Grid arguments contribute each of their cells with ``from_reference``
    true; scalar arguments contribute themselves with it false.
    """
    for arg in args:
        if isinstance(arg, Grid):
            for value in arg.values():
                yield value, True
        else:
            yield arg, False
