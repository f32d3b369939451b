"""Built-in spreadsheet functions, grouped by theme, and the default registry."""

from . import date_funcs, logic_funcs, lookup_funcs, math_funcs, text_funcs
from .base import FunctionRegistry, FunctionSpec

__all__ = ["FunctionRegistry", "FunctionSpec", "default_registry"]


def default_registry():
    """Return a new :class:`FunctionRegistry` holding every built-in function."""
    registry = FunctionRegistry()
    for module in (math_funcs, logic_funcs, text_funcs, lookup_funcs, date_funcs):
        for spec in module.SPECS:
            registry.register(spec)
    return registry
