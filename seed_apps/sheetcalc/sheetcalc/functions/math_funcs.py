"""Mathematical and statistical built-ins (SUM, AVERAGE, COUNTIF, ROUND...)."""

import math
from decimal import ROUND_DOWN, ROUND_HALF_UP, ROUND_UP, Decimal

from ..criteria import Criterion
from ..errors import ErrorSignal
from ..operators import power
from ..values import BLANK, DIV0, NUM, VALUE, ErrorValue, is_number, normalize_number, parse_number_text, to_number
from .base import FunctionSpec, flatten, grid_arg, int_arg, number_arg, scalar


def aggregate_numbers(args):
    """Return the numbers an aggregate function (SUM, MAX...) should use.

    Values read from references count only when they are numbers (text,
    booleans and blanks are skipped).  Typed-in arguments are coerced with
    :func:`~sheetcalc.values.to_number`.

    Raises:
        ErrorSignal: for any error value, or non-numeric typed-in text.
    """
    numbers = []
    for value, from_reference in flatten(args):
        if isinstance(value, ErrorValue):
            raise ErrorSignal(value)
        if from_reference:
            if is_number(value):
                numbers.append(float(value))
        else:
            numbers.append(to_number(value))
    return numbers


def fn_sum(args):
    """SUM(value, ...): total of the numbers."""
    return normalize_number(math.fsum(aggregate_numbers(args)))


def fn_product(args):
    """PRODUCT(value, ...): product of the numbers; 0 when there are none."""
    numbers = aggregate_numbers(args)
    if not numbers:
        return 0.0
    return normalize_number(math.prod(numbers))


def fn_min(args):
    """MIN(value, ...): smallest number; 0 when there are none."""
    numbers = aggregate_numbers(args)
    return min(numbers) if numbers else 0.0


def fn_max(args):
    """MAX(value, ...): largest number; 0 when there are none."""
    numbers = aggregate_numbers(args)
    return max(numbers) if numbers else 0.0


def fn_average(args):
    """AVERAGE(value, ...): arithmetic mean; #DIV/0! when there are no numbers."""
    numbers = aggregate_numbers(args)
    if not numbers:
        raise ErrorSignal(DIV0)
    return normalize_number(math.fsum(numbers) / len(numbers))


def fn_median(args):
    """MEDIAN(value, ...): middle value (mean of the two middle ones); #NUM! when empty."""
    numbers = sorted(aggregate_numbers(args))
    if not numbers:
        raise ErrorSignal(NUM)
    middle = len(numbers) // 2
    if len(numbers) % 2:
        return numbers[middle]
    return (numbers[middle - 1] + numbers[middle]) / 2


def fn_count(args):
    """COUNT(value, ...): how many values are numbers.

    From references only real numbers count; typed-in booleans and numeric
    text count as well.  Errors are ignored, never propagated.
    """
    count = 0
    for value, from_reference in flatten(args):
        if is_number(value):
            count += 1
        elif not from_reference and (isinstance(value, bool)
                                     or (isinstance(value, str) and parse_number_text(value) is not None)):
            count += 1
    return float(count)


def fn_counta(args):
    """COUNTA(value, ...): how many values are not blank (errors and "" count)."""
    return float(sum(1 for value, _ in flatten(args) if value is not BLANK))


def fn_countblank(args):
    """COUNTBLANK(range): how many cells are blank or hold empty text."""
    grid = grid_arg(args[0])
    return float(sum(1 for value in grid.values() if value is BLANK or value == ""))


def _criterion(arg):
    """Parse a criterion argument (errors propagate)."""
    value = scalar(arg)
    if isinstance(value, ErrorValue):
        raise ErrorSignal(value)
    return Criterion.parse(value)


def _matching_values(args):
    """Yield the values of the sum range whose test-range cell meets the criterion.

    Used by SUMIF/AVERAGEIF: ``args`` is ``(range, criterion[, sum_range])``.

    Raises:
        ErrorSignal: :data:`VALUE` when the sum range has a different shape.
    """
    test_grid = grid_arg(args[0])
    criterion = _criterion(args[1])
    value_grid = grid_arg(args[2]) if len(args) > 2 else test_grid
    if (value_grid.height, value_grid.width) != (test_grid.height, test_grid.width):
        raise ErrorSignal(VALUE)
    for test_value, value in zip(test_grid.values(), value_grid.values()):
        if criterion.matches(test_value):
            yield value


def fn_countif(args):
    """COUNTIF(range, criterion): how many cells meet the criterion."""
    criterion = _criterion(args[1])
    return float(sum(1 for value in grid_arg(args[0]).values() if criterion.matches(value)))


def _cell_numbers(values):
    """Return the numbers among cell ``values``, skipping text, booleans and blanks.

    Raises:
        ErrorSignal: for the first error value encountered.
    """
    numbers = []
    for value in values:
        if isinstance(value, ErrorValue):
            raise ErrorSignal(value)
        if is_number(value):
            numbers.append(float(value))
    return numbers


def fn_sumif(args):
    """SUMIF(range, criterion, [sum_range]): total of the matching numbers."""
    return normalize_number(math.fsum(_cell_numbers(_matching_values(args))))


def fn_averageif(args):
    """AVERAGEIF(range, criterion, [average_range]): mean of the matching numbers."""
    numbers = _cell_numbers(_matching_values(args))
    if not numbers:
        raise ErrorSignal(DIV0)
    return normalize_number(math.fsum(numbers) / len(numbers))


def fn_sumproduct(args):
    """SUMPRODUCT(array, ...): sum of element-wise products of equally shaped arrays.

    Non-numeric cells count as 0; errors propagate; shape mismatch is #VALUE!.
    """
    grids = [grid_arg(arg) for arg in args]
    shape = (grids[0].height, grids[0].width)
    if any((grid.height, grid.width) != shape for grid in grids):
        raise ErrorSignal(VALUE)
    total = 0.0
    for cells in zip(*(grid.values() for grid in grids)):
        product = 1.0
        for value in cells:
            if isinstance(value, ErrorValue):
                raise ErrorSignal(value)
            product *= float(value) if is_number(value) else 0.0
        total += product
    return normalize_number(total)


def round_number(number, digits, mode):
    """Round ``number`` to ``digits`` decimals (negative digits round to tens, hundreds...).

    ``mode`` is a :mod:`decimal` rounding constant; the value is rounded from
    its shortest decimal representation so ``2.675`` rounds half-up to
    ``2.68``.
    """
    quantum = Decimal(1).scaleb(-digits)
    return normalize_number(Decimal(repr(number)).quantize(quantum, rounding=mode))


def fn_round(args):
    """ROUND(number, digits): round half away from zero."""
    return round_number(number_arg(args[0]), int_arg(args[1]), ROUND_HALF_UP)


def fn_roundup(args):
    """ROUNDUP(number, digits): round away from zero."""
    return round_number(number_arg(args[0]), int_arg(args[1]), ROUND_UP)


def fn_rounddown(args):
    """ROUNDDOWN(number, digits): round towards zero."""
    return round_number(number_arg(args[0]), int_arg(args[1]), ROUND_DOWN)


def fn_int(args):
    """INT(number): round down to the nearest integer (INT(-1.5) is -2)."""
    return normalize_number(math.floor(number_arg(args[0])))


def fn_abs(args):
    """ABS(number): absolute value."""
    return abs(number_arg(args[0]))


def fn_mod(args):
    """MOD(number, divisor): remainder with the sign of the divisor; #DIV/0! for 0."""
    number, divisor = number_arg(args[0]), number_arg(args[1])
    if divisor == 0:
        raise ErrorSignal(DIV0)
    return normalize_number(number - divisor * math.floor(number / divisor))


def fn_power(args):
    """POWER(base, exponent): same rules as the ``^`` operator."""
    return power(number_arg(args[0]), number_arg(args[1]))


def fn_sqrt(args):
    """SQRT(number): square root; #NUM! for negative numbers."""
    number = number_arg(args[0])
    if number < 0:
        raise ErrorSignal(NUM)
    return math.sqrt(number)


def fn_sign(args):
    """SIGN(number): -1, 0 or 1."""
    number = number_arg(args[0])
    return float((number > 0) - (number < 0))


SPECS = (
    FunctionSpec("SUM", fn_sum, 1),
    FunctionSpec("PRODUCT", fn_product, 1),
    FunctionSpec("MIN", fn_min, 1),
    FunctionSpec("MAX", fn_max, 1),
    FunctionSpec("AVERAGE", fn_average, 1),
    FunctionSpec("MEDIAN", fn_median, 1),
    FunctionSpec("COUNT", fn_count, 1),
    FunctionSpec("COUNTA", fn_counta, 1),
    FunctionSpec("COUNTBLANK", fn_countblank, 1, 1),
    FunctionSpec("COUNTIF", fn_countif, 2, 2),
    FunctionSpec("SUMIF", fn_sumif, 2, 3),
    FunctionSpec("AVERAGEIF", fn_averageif, 2, 3),
    FunctionSpec("SUMPRODUCT", fn_sumproduct, 1),
    FunctionSpec("ROUND", fn_round, 2, 2),
    FunctionSpec("ROUNDUP", fn_roundup, 2, 2),
    FunctionSpec("ROUNDDOWN", fn_rounddown, 2, 2),
    FunctionSpec("INT", fn_int, 1, 1),
    FunctionSpec("ABS", fn_abs, 1, 1),
    FunctionSpec("MOD", fn_mod, 2, 2),
    FunctionSpec("POWER", fn_power, 2, 2),
    FunctionSpec("SQRT", fn_sqrt, 1, 1),
    FunctionSpec("SIGN", fn_sign, 1, 1),
)
