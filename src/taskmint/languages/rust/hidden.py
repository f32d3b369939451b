"""Hidden tests for Rust: integration tests (`tests/<target>.rs`, `#[test] fn` at the top of the
file) held out of the policy's view, graded with the rest.

The ids are `test:<package>/<target>::<name>` (`adapter.split_id`); the file is
`tests/<target>.rs` of the seed's root package (a workspace member's tests are not hidden: their
folder is not known from the id). A seeded fraction of the FAIL_TO_PASS integration tests (one
FAIL_TO_PASS test always stays visible) and a smaller one of PASS_TO_PASS are hidden; only
tests whose function `strip_hidden` finds, with its test attribute, at the top of the file are
candidates. Unit tests and doctests live in source files, which the policy edits: they are never
hidden. The verifier restores the whole test folder from the seed, so the hidden tests run.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable

from taskmint.languages.rust.testcode import is_test_attribute
from taskmint.languages.rust.tree import RustSourceError, attributes_before, parse

__all__ = ["choose_hidden", "strip_hidden", "test_file"]

_ID = re.compile(r"^test:[^/]+/(?P<target>[A-Za-z0-9_-]+)::(?P<name>[A-Za-z_][A-Za-z0-9_]*)$")
_LEADING = ("attribute_item", "line_comment", "block_comment")


def test_file(test_id: str) -> str | None:
    """`tests/<target>.rs` of an integration test at the top of its file, else None."""
    m = _ID.match(test_id)
    return f"tests/{m.group('target')}.rs" if m else None


def _top_tests(text: str) -> dict[str, tuple[int, int]] | None:
    """name -> byte span (from its first attribute or comment to the end of its line) of each
    top-level `#[test]` function; None when the file does not parse."""
    data = text.encode("utf-8")
    try:
        root = parse(data).root_node
    except RustSourceError:
        return None
    out: dict[str, tuple[int, int]] = {}
    for node in root.named_children:
        if node.type != "function_item":
            continue
        if not any(is_test_attribute(a) for a in attributes_before(data, node)):
            continue
        name = node.child_by_field_name("name")
        if name is None:
            continue
        start = node.start_byte
        prev = node.prev_named_sibling
        while prev is not None and prev.type in _LEADING:
            start = prev.start_byte
            prev = prev.prev_named_sibling
        start = data.rfind(b"\n", 0, start) + 1
        end = data.find(b"\n", node.end_byte)
        end = len(data) if end == -1 else end + 1
        key = data[name.start_byte : name.end_byte].decode("utf-8")
        out.setdefault(key, (start, end))
    return out


def choose_hidden(
    fail_to_pass: tuple[str, ...],
    pass_to_pass: tuple[str, ...],
    *,
    seed: str,
    fraction: float,
    pass_fraction: float,
    source_of: Callable[[str], str | None] | None = None,
) -> tuple[str, ...]:
    """The ids to hide, the same for the same inputs (`seed` names the task): `fraction` of
    the FAIL_TO_PASS integration tests (rounded up, one FAIL_TO_PASS test always visible) and
    `pass_fraction` of the PASS_TO_PASS ones (rounded down). Without `source_of` (test file ->
    its text) nothing is hidden: a test is hidden only where the cut is known to work."""
    if source_of is None:
        return ()
    spans: dict[str, dict[str, tuple[int, int]] | None] = {}

    def hideable(test_id: str) -> bool:
        path = test_file(test_id)
        if path is None:
            return False
        if path not in spans:
            text = source_of(path)
            spans[path] = _top_tests(text) if text is not None else None
        found = spans[path]
        return found is not None and test_id.rsplit("::", 1)[1] in found

    rng = random.Random(f"hidden|{seed}")
    f2p = sorted({t for t in fail_to_pass if hideable(t)})
    p2p = sorted({t for t in pass_to_pass if t not in set(fail_to_pass) and hideable(t)})
    chosen: list[str] = []
    if fraction > 0 and f2p:
        visible = len(set(fail_to_pass)) - len(f2p)
        count = min(len(f2p) - (0 if visible else 1), math.ceil(fraction * len(f2p)))
        chosen += rng.sample(f2p, count) if count > 0 else []
    count = math.floor(pass_fraction * len(p2p))
    chosen += rng.sample(p2p, count) if count else []
    return tuple(sorted(chosen))


def strip_hidden(path: str, text: str, hidden: tuple[str, ...]) -> str:
    """Test file `path` (`text`) without the top-level test functions of `hidden` that live in
    it (their attributes and doc comments too). A file that does not parse is left whole."""
    names = {t.rsplit("::", 1)[1] for t in hidden if test_file(t) == path}
    if not names:
        return text
    found = _top_tests(text)
    if found is None:
        return text
    data = text.encode("utf-8")
    cuts = sorted(span for name, span in found.items() if name in names)
    out = bytearray()
    pos = 0
    for start, end in cuts:
        out += data[pos:start]
        pos = end
    out += data[pos:]
    return out.decode("utf-8")
