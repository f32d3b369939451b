"""Text built-ins (CONCAT, LEFT, SUBSTITUTE, FIND, TEXT...).

Positions are 1-based, as in every spreadsheet program.
"""

from ..criteria import has_wildcards, wildcard_match
from ..errors import ErrorSignal, FormatError
from ..formatting import format_value
from ..values import BLANK, VALUE, ErrorValue, is_number, parse_number_text, to_text
from .base import FunctionSpec, bool_arg, flatten, int_arg, scalar, text_arg


def _count_arg(args, index, default):
    """Return the optional non-negative count argument ``args[index]``.

    Raises:
        ErrorSignal: :data:`VALUE` for a negative count.
    """
    count = int_arg(args[index]) if len(args) > index else default
    if count < 0:
        raise ErrorSignal(VALUE)
    return count


def fn_concat(args):
    """CONCAT(value, ...): join the text of every value, ranges included."""
    parts = []
    for value, _ in flatten(args):
        parts.append(to_text(value))
    return "".join(parts)


def fn_concatenate(args):
    """CONCATENATE(value, ...): join scalar values; a multi-cell range is #VALUE!."""
    return "".join(text_arg(arg) for arg in args)


def fn_textjoin(args):
    """TEXTJOIN(delimiter, ignore_empty, value, ...): join with a delimiter.

    When ``ignore_empty`` is true, blank cells and empty texts are skipped.
    """
    delimiter = text_arg(args[0])
    ignore_empty = bool_arg(args[1])
    parts = [to_text(value) for value, _ in flatten(args[2:])]
    if ignore_empty:
        parts = [part for part in parts if part != ""]
    return delimiter.join(parts)


def fn_left(args):
    """LEFT(text, [count=1]): the first ``count`` characters."""
    text = text_arg(args[0])
    return text[:_count_arg(args, 1, 1)]


def fn_right(args):
    """RIGHT(text, [count=1]): the last ``count`` characters."""
    text = text_arg(args[0])
    count = _count_arg(args, 1, 1)
    return text[len(text) - count:] if count < len(text) else text


def fn_mid(args):
    """MID(text, start, count): ``count`` characters from 1-based ``start``; #VALUE! if start < 1."""
    text = text_arg(args[0])
    start = int_arg(args[1])
    count = _count_arg(args, 2, 0)
    if start < 1:
        raise ErrorSignal(VALUE)
    return text[start - 1:start - 1 + count]


def fn_len(args):
    """LEN(text): number of characters."""
    return float(len(text_arg(args[0])))


def fn_upper(args):
    """UPPER(text): upper-case text."""
    return text_arg(args[0]).upper()


def fn_lower(args):
    """LOWER(text): lower-case text."""
    return text_arg(args[0]).lower()


def fn_trim(args):
    """TRIM(text): strip leading/trailing spaces and collapse inner runs of spaces."""
    return " ".join(part for part in text_arg(args[0]).split(" ") if part)


def fn_substitute(args):
    """SUBSTITUTE(text, old, new, [instance]): replace all (or only the n-th) occurrence.

    An empty ``old`` leaves the text unchanged; ``instance`` below 1 is #VALUE!.
    """
    text, old, new = text_arg(args[0]), text_arg(args[1]), text_arg(args[2])
    if old == "":
        return text
    if len(args) < 4:
        return text.replace(old, new)
    instance = int_arg(args[3])
    if instance < 1:
        raise ErrorSignal(VALUE)
    position = -1
    for _ in range(instance):
        position = text.find(old, position + 1)
        if position < 0:
            return text
    return text[:position] + new + text[position + len(old):]


def _start_arg(args, within):
    """Return the 0-based start offset from the optional 1-based start argument.

    Raises:
        ErrorSignal: :data:`VALUE` when start is below 1 or past the text end.
    """
    start = int_arg(args[2]) if len(args) > 2 else 1
    if start < 1 or start > len(within) + 1:
        raise ErrorSignal(VALUE)
    return start - 1


def fn_find(args):
    """FIND(needle, haystack, [start]): case-sensitive 1-based position; #VALUE! if absent."""
    needle, within = text_arg(args[0]), text_arg(args[1])
    position = within.find(needle, _start_arg(args, within))
    if position < 0:
        raise ErrorSignal(VALUE)
    return float(position + 1)


def fn_search(args):
    """SEARCH(needle, haystack, [start]): case-insensitive, wildcard-aware FIND.

    With wildcards, returns the first position from which some prefix of the
    remaining text matches the pattern.
    """
    needle, within = text_arg(args[0]), text_arg(args[1])
    start = _start_arg(args, within)
    if not has_wildcards(needle):
        position = within.casefold().find(needle.casefold(), start)
        if position < 0:
            raise ErrorSignal(VALUE)
        return float(position + 1)
    for begin in range(start, len(within) + 1):
        for end in range(begin, len(within) + 1):
            if wildcard_match(needle, within[begin:end]):
                return float(begin + 1)
    raise ErrorSignal(VALUE)


def fn_rept(args):
    """REPT(text, times): the text repeated; #VALUE! for negative counts."""
    return text_arg(args[0]) * _count_arg(args, 1, 0)


def fn_exact(args):
    """EXACT(a, b): case-sensitive comparison of the two texts."""
    return text_arg(args[0]) == text_arg(args[1])


def fn_value(args):
    """VALUE(text): convert numeric text to a number; numbers pass through; else #VALUE!."""
    value = scalar(args[0])
    if isinstance(value, ErrorValue):
        raise ErrorSignal(value)
    if is_number(value):
        return float(value)
    if value is BLANK:
        return 0.0
    number = parse_number_text(value) if isinstance(value, str) else None
    if number is None:
        raise ErrorSignal(VALUE)
    return number


def fn_text(args):
    """TEXT(value, format): format a value with a number format; a bad format is #VALUE!."""
    value = scalar(args[0])
    if isinstance(value, ErrorValue):
        raise ErrorSignal(value)
    try:
        return format_value(value, text_arg(args[1]))
    except FormatError as exc:
        raise ErrorSignal(VALUE) from exc


SPECS = (
    FunctionSpec("CONCAT", fn_concat, 1),
    FunctionSpec("CONCATENATE", fn_concatenate, 1),
    FunctionSpec("TEXTJOIN", fn_textjoin, 3),
    FunctionSpec("LEFT", fn_left, 1, 2),
    FunctionSpec("RIGHT", fn_right, 1, 2),
    FunctionSpec("MID", fn_mid, 3, 3),
    FunctionSpec("LEN", fn_len, 1, 1),
    FunctionSpec("UPPER", fn_upper, 1, 1),
    FunctionSpec("LOWER", fn_lower, 1, 1),
    FunctionSpec("TRIM", fn_trim, 1, 1),
    FunctionSpec("SUBSTITUTE", fn_substitute, 3, 4),
    FunctionSpec("FIND", fn_find, 2, 3),
    FunctionSpec("SEARCH", fn_search, 2, 3),
    FunctionSpec("REPT", fn_rept, 2, 2),
    FunctionSpec("EXACT", fn_exact, 2, 2),
    FunctionSpec("VALUE", fn_value, 1, 1),
    FunctionSpec("TEXT", fn_text, 2, 2),
)
