"""Number-format patterns such as ``0.00``, ``#,##0``, ``0%``, ``0.00E+00``
and ``yyyy-mm-dd``.

A pattern has up to three sections separated by ``;``: the first formats
positive numbers (and every number when it is alone), the second negative
numbers (shown without their minus sign) and the third zero.  Inside a
section, ``0`` is a mandatory digit, ``#`` an optional digit, ``.`` the
decimal point, ``,`` between digit placeholders turns on thousands grouping,
``%`` multiplies by 100 and prints a percent sign, and ``E+``/``E-`` starts an
exponent.  Text in double quotes or after a backslash is literal, as are the
characters ``$ - + ( ) / : `` and space.

A section containing any of the letters ``y m d h s`` is a date/time section
that formats a date serial (see :mod:`sheetcalc.dates`): ``yy``/``yyyy``,
``m``/``mm``/``mmm``/``mmmm``, ``d``/``dd``/``ddd``/``dddd``, ``h``/``hh``,
``s``/``ss``; ``m``/``mm`` right after an hour code or right before a
seconds code means minutes.
"""

import math
from decimal import ROUND_HALF_UP, Decimal

from .dates import DAY_NAMES, MONTH_NAMES, serial_to_date, time_of_day, weekday
from .errors import ErrorSignal, FormatError
from .values import BLANK, ErrorValue, format_general

_LITERAL_CHARS = set("$-+()/: ")
_DATE_LETTERS = set("ymdhs")


def _split_sections(pattern):
    """Split ``pattern`` on ``;`` characters that are not quoted or escaped."""
    sections = [""]
    in_quotes = False
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\" and not in_quotes and index + 1 < len(pattern):
            sections[-1] += pattern[index:index + 2]
            index += 2
            continue
        if char == '"':
            in_quotes = not in_quotes
        if char == ";" and not in_quotes:
            sections.append("")
        else:
            sections[-1] += char
        index += 1
    return sections


def _lex_section(section):
    """Lex one section into ``("lit", text)`` and ``("char", c)`` tokens.

    Raises:
        FormatError: for an unterminated quote or a trailing backslash.
    """
    tokens = []
    index = 0
    while index < len(section):
        char = section[index]
        if char == '"':
            end = section.find('"', index + 1)
            if end < 0:
                raise FormatError(f"unterminated quote in format {section!r}")
            tokens.append(("lit", section[index + 1:end]))
            index = end + 1
        elif char == "\\":
            if index + 1 >= len(section):
                raise FormatError(f"dangling backslash in format {section!r}")
            tokens.append(("lit", section[index + 1]))
            index += 2
        else:
            tokens.append(("char", char))
            index += 1
    return tokens


def _round_decimal(number, places):
    """Round a non-negative float half away from zero to ``places`` decimals."""
    return Decimal(repr(number)).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)


def group_thousands(digits):
    """Insert ``,`` every three digits from the right: ``"1234567"`` -> ``"1,234,567"``."""
    head = len(digits) % 3 or 3
    parts = [digits[:head]] + [digits[i:i + 3] for i in range(head, len(digits), 3)]
    return ",".join(part for part in parts if part)


class _NumberSection:
    """A compiled numeric format section."""

    def __init__(self, tokens):
        """Compile lexed ``tokens`` into placeholder counts and literal affixes.

        Raises:
            FormatError: for digit placeholders after trailing literal text,
                a second decimal point, a malformed exponent or a letter that
                is not quoted.
        """
        self.prefix, self.suffix = "", ""
        self.int_zeros = self.int_digits = 0
        self.dec_zeros = self.dec_digits = 0
        self.has_point = self.grouping = False
        self.percent = 0
        self.exponent_sign = None
        self.exponent_digits = 0
        state = "prefix"
        index = 0
        while index < len(tokens):
            kind, char = tokens[index]
            index += 1
            if kind == "lit" or char == "%" or (char == "," and state != "integer"):
                if kind == "char" and char == "%":
                    self.percent += 1
                state = self._add_literal(state, char)
            elif char in "0#":
                state = self._add_digit(state, char)
            elif char == ".":
                if state not in ("prefix", "integer"):
                    raise FormatError("misplaced decimal point")
                self.has_point = True
                state = "fraction"
            elif char == ",":
                self.grouping = True
            elif char in "Ee" and state in ("integer", "fraction") and index < len(tokens) \
                    and tokens[index] in (("char", "+"), ("char", "-")):
                self.exponent_sign = tokens[index][1]
                index += 1
                state = "exponent"
            elif char in _LITERAL_CHARS:
                state = self._add_literal(state, char)
            else:
                raise FormatError(f"unexpected character {char!r} in number format")
        if self.exponent_sign is not None and self.exponent_digits == 0:
            raise FormatError("exponent needs at least one 0 placeholder")

    def _add_literal(self, state, text):
        """Attach literal ``text`` before or after the digits; return the new state."""
        if state == "prefix":
            self.prefix += text
            return state
        self.suffix += text
        return "suffix"

    def _add_digit(self, state, char):
        """Count one ``0``/``#`` placeholder in the current part; return the new state."""
        if state == "suffix":
            raise FormatError("digit placeholder after literal text")
        if state == "prefix":
            state = "integer"
        if state == "integer":
            self.int_digits += 1
            self.int_zeros += char == "0"
        elif state == "fraction":
            self.dec_digits += 1
            self.dec_zeros += char == "0"
        elif char == "0":
            self.exponent_digits += 1
        else:
            raise FormatError("exponent digits must be 0 placeholders")
        return state

    def _fixed(self, number, grouping):
        """Format non-negative ``number`` as digits; return ``(text, is_zero)``."""
        rounded = _round_decimal(number, self.dec_digits)
        int_part, _, frac = f"{rounded:f}".partition(".")
        while len(frac) > self.dec_zeros and frac.endswith("0"):
            frac = frac[:-1]
        if int_part == "0" and self.int_zeros == 0:
            int_part = ""
        int_part = int_part.zfill(self.int_zeros)
        if grouping:
            int_part = group_thousands(int_part)
        text = int_part + ("." + frac if self.has_point else "")
        return text, rounded == 0

    def _scientific(self, number):
        """Format non-negative ``number`` in exponent form; return ``(text, is_zero)``."""
        int_width = max(1, self.int_digits)
        exponent = 0
        if number != 0:
            exponent = math.floor(math.log10(number)) - (int_width - 1)
            mantissa = _round_decimal(number / 10 ** exponent, self.dec_digits)
            if mantissa >= 10 ** int_width:
                exponent += 1
        mantissa_text, is_zero = self._fixed(number / 10 ** exponent, False)
        sign = "-" if exponent < 0 else ("+" if self.exponent_sign == "+" else "")
        return f"{mantissa_text}E{sign}{str(abs(exponent)).zfill(self.exponent_digits)}", is_zero

    def render(self, number, negative):
        """Render ``number`` (>= 0); prefix ``-`` when ``negative`` and the digits are not all zero."""
        number *= 100 ** self.percent
        if self.int_digits + self.dec_digits == 0 and not self.has_point:
            return self.prefix + self.suffix
        if self.exponent_sign is not None:
            body, is_zero = self._scientific(number)
        else:
            body, is_zero = self._fixed(number, self.grouping)
        sign = "-" if negative and not is_zero else ""
        return sign + self.prefix + body + self.suffix


class _DateSection:
    """A compiled date/time format section."""

    def __init__(self, tokens):
        """Group runs of equal date letters into codes and resolve minutes vs months."""
        self.parts = []
        for kind, char in tokens:
            letter = char.lower()
            if kind == "char" and letter in _DATE_LETTERS:
                if self.parts and self.parts[-1][0] == "code" and self.parts[-1][1][0] == letter:
                    self.parts[-1] = ("code", self.parts[-1][1] + letter)
                else:
                    self.parts.append(("code", letter))
            else:
                self.parts.append(("lit", char))
        codes = [i for i, part in enumerate(self.parts) if part[0] == "code"]
        for position, index in enumerate(codes):
            code = self.parts[index][1]
            if code[0] != "m" or len(code) > 2:
                continue
            before = self.parts[codes[position - 1]][1][0] if position > 0 else ""
            after = self.parts[codes[position + 1]][1][0] if position + 1 < len(codes) else ""
            if before == "h" or after == "s":
                self.parts[index] = ("minute", code)

    def render(self, serial, negative):
        """Render date serial ``serial``.

        Raises:
            FormatError: for negative or out-of-range serials.
        """
        if negative:
            raise FormatError("cannot format a negative date")
        try:
            year, month, day = serial_to_date(serial)
        except ErrorSignal as exc:
            raise FormatError("date serial out of range") from exc
        hours, minutes, seconds = time_of_day(serial)
        out = []
        for kind, code in self.parts:
            if kind == "lit":
                out.append(code)
            elif kind == "minute":
                out.append(str(minutes).zfill(len(code)))
            else:
                out.append(self._render_code(code, year, month, day, hours, seconds, serial))
        return "".join(out)

    @staticmethod
    def _render_code(code, year, month, day, hours, seconds, serial):
        """Render one date code such as ``yyyy`` or ``mmm``."""
        letter, width = code[0], len(code)
        if letter == "y":
            return str(year).zfill(4) if width > 2 else str(year % 100).zfill(2)
        if letter == "m":
            if width >= 4:
                return MONTH_NAMES[month - 1]
            return MONTH_NAMES[month - 1][:3] if width == 3 else str(month).zfill(width)
        if letter == "d":
            if width >= 4:
                return DAY_NAMES[weekday(serial) - 1]
            return DAY_NAMES[weekday(serial) - 1][:3] if width == 3 else str(day).zfill(width)
        if letter == "h":
            return str(hours).zfill(min(width, 2))
        return str(seconds).zfill(min(width, 2))


class NumberFormat:
    """A compiled number-format pattern (see the module docstring for the syntax).

    ``"General"`` (any case) or an empty pattern formats like
    :func:`~sheetcalc.values.format_general`.

    Raises:
        FormatError: if the pattern has more than three sections or a section
            is malformed.
    """

    def __init__(self, pattern):
        """Compile ``pattern``."""
        self.pattern = pattern
        self.sections = None
        if pattern.strip().lower() in ("", "general"):
            return
        raw_sections = _split_sections(pattern)
        if len(raw_sections) > 3:
            raise FormatError("a format has at most three sections")
        self.sections = [self._compile(section) for section in raw_sections]

    @staticmethod
    def _compile(section):
        """Compile one section into a number or date section object."""
        tokens = _lex_section(section)
        if any(kind == "char" and char.lower() in _DATE_LETTERS for kind, char in tokens):
            return _DateSection(tokens)
        return _NumberSection(tokens)

    def format(self, value):
        """Return ``value`` formatted as display text.

        Errors show their code, booleans ``TRUE``/``FALSE``, text is returned
        unchanged and blank becomes ``""``.  Numbers pick a section as
        described in the module docstring.

        Raises:
            FormatError: when a date section receives an out-of-range serial.
        """
        if isinstance(value, ErrorValue):
            return value.code
        if isinstance(value, bool):
            return "TRUE" if value else "FALSE"
        if isinstance(value, str):
            return value
        if value is BLANK:
            return ""
        number = float(value)
        if self.sections is None:
            return format_general(number)
        if number < 0 and len(self.sections) >= 2:
            return self.sections[1].render(-number, False)
        if number == 0 and len(self.sections) == 3:
            return self.sections[2].render(number, False)
        return self.sections[0].render(abs(number), number < 0)


def format_value(value, pattern):
    """Format ``value`` with the pattern text ``pattern`` (compiles it each call).

    Raises:
        FormatError: for an invalid pattern or an unformattable date.
    """
    return NumberFormat(pattern).format(value)
