"""Criteria used by COUNTIF/SUMIF/AVERAGEIF and wildcard text matching.

A criterion is either a plain value (``5``, ``"apple"``) meaning "equal to",
or text starting with a comparison operator (``">=10"``, ``"<>red"``).
Text equality supports the wildcards ``*`` (any run of characters) and ``?``
(exactly one character); ``~`` escapes the next character (``"~*"`` is a
literal star).  All text matching is case-insensitive.
"""

from .values import BLANK, ErrorValue, is_number, parse_number_text

_OPERATORS = ("<=", ">=", "<>", "<", ">", "=")


def _compile_pattern(pattern):
    """Split a wildcard pattern into items: ``"*"``, ``"?"`` or ``("lit", char)``."""
    items = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "~" and index + 1 < len(pattern):
            items.append(("lit", pattern[index + 1].casefold()))
            index += 2
            continue
        items.append(char if char in "*?" else ("lit", char.casefold()))
        index += 1
    return items


def wildcard_match(pattern, text):
    """Return ``True`` when all of ``text`` matches the wildcard ``pattern``.

    Uses the greedy two-pointer algorithm with backtracking to the most recent
    ``*``, so it runs in O(len(pattern) * len(text)) worst case.  Matching is
    case-insensitive.
    """
    items = _compile_pattern(pattern)
    text = text.casefold()
    p_index = t_index = 0
    star_index = -1
    star_text = 0
    while t_index < len(text):
        if p_index < len(items) and items[p_index] == "*":
            star_index = p_index
            star_text = t_index
            p_index += 1
        elif p_index < len(items) and (items[p_index] == "?" or items[p_index] == ("lit", text[t_index])):
            p_index += 1
            t_index += 1
        elif star_index >= 0:
            star_text += 1
            t_index = star_text
            p_index = star_index + 1
        else:
            return False
    while p_index < len(items) and items[p_index] == "*":
        p_index += 1
    return p_index == len(items)


def has_wildcards(pattern):
    """Return ``True`` when ``pattern`` contains an unescaped ``*`` or ``?``."""
    return any(item in ("*", "?") for item in _compile_pattern(pattern))


class Criterion:
    """A parsed criterion that can test cell values.

    Attributes:
        op: one of ``= <> < > <= >=``.
        operand: a float, bool, str, or :data:`~sheetcalc.values.BLANK`.
    """

    def __init__(self, op, operand):
        """Store the comparison operator and its operand."""
        self.op = op
        self.operand = operand

    @classmethod
    def parse(cls, criterion):
        """Build a criterion from a cell value.

        Numbers and booleans mean "equal to".  Text may start with an
        operator; the remainder is read as a number if numeric, as a boolean
        if ``TRUE``/``FALSE``, and as (wildcard) text otherwise.  A blank
        criterion, like ``"="`` or ``""``, matches empty cells.
        """
        if criterion is BLANK:
            return cls("=", BLANK)
        if not isinstance(criterion, str):
            return cls("=", criterion)
        op = "="
        rest = criterion
        for candidate in _OPERATORS:
            if criterion.startswith(candidate):
                op, rest = candidate, criterion[len(candidate):]
                break
        if rest == "":
            return cls(op, BLANK)
        number = parse_number_text(rest)
        if number is not None:
            return cls(op, number)
        if rest.upper() in ("TRUE", "FALSE"):
            return cls(op, rest.upper() == "TRUE")
        return cls(op, rest)

    def matches(self, value):
        """Return ``True`` when ``value`` satisfies the criterion (errors never do)."""
        if isinstance(value, ErrorValue):
            return False
        if self.op == "=":
            return self._equals(value)
        if self.op == "<>":
            return not self._equals(value)
        return self._ordered(value)

    def _equals(self, value):
        """Equality test used by ``=`` and ``<>``."""
        operand = self.operand
        if operand is BLANK:
            return value is BLANK or value == ""
        if isinstance(operand, bool):
            return isinstance(value, bool) and value == operand
        if is_number(operand):
            return is_number(value) and float(value) == operand
        return isinstance(value, str) and wildcard_match(operand, value)

    def _ordered(self, value):
        """Ordering test used by ``< > <= >=``; types must agree."""
        operand = self.operand
        if is_number(operand) and is_number(value):
            left, right = float(value), operand
        elif isinstance(operand, str) and isinstance(value, str):
            left, right = value.casefold(), operand.casefold()
        else:
            return False
        if self.op == "<":
            return left < right
        if self.op == ">":
            return left > right
        if self.op == "<=":
            return left <= right
        return left >= right
