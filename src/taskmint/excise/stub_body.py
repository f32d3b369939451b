"""Strategy `stub_body`: a function's body becomes `raise NotImplementedError`.

The signature, decorators and docstring stay, so the function keeps its place, its name and
its contract, and every importer still imports; only the behaviour is gone. `candidates` offers
one candidate per indexed unit whose body has at least `min_body_lines` lines; abstract and
`@overload` declarations are skipped.
"""

from __future__ import annotations

import random
from typing import Final

import libcst as cst

from taskmint.excise.candidate import make_candidate
from taskmint.excise.context import CandidateStream, ExciseContext, unit_key
from taskmint.index.python import SourceSkipped, parse_module
from taskmint.records import SkippedFile

__all__ = ["STRATEGY", "candidates", "stub_body"]

STRATEGY: Final = "stub_body"
_ABSTRACT = ("overload", "typing.overload", "abstractmethod", "abc.abstractmethod")

_RAISE = cst.SimpleStatementLine(body=[cst.Raise(exc=cst.Name("NotImplementedError"))])


class _Stubber(cst.CSTTransformer):
    def __init__(self, qualname: str) -> None:
        base, _, nth = qualname.partition("#")
        self.target = base
        self.occurrence = int(nth) if nth else 1
        self.scope: list[str] = []
        self.seen = 0
        self.done = False

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.scope.append(node.name.value)

    def leave_ClassDef(
        self, original_node: cst.ClassDef, updated_node: cst.ClassDef
    ) -> cst.ClassDef:
        self.scope.pop()
        return updated_node

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scope.append(node.name.value)

    def leave_FunctionDef(
        self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef
    ) -> cst.FunctionDef:
        qual = ".".join(self.scope)
        self.scope.pop()
        if qual != self.target:
            return updated_node
        self.seen += 1
        if self.seen != self.occurrence:
            return updated_node
        self.done = True
        return _stub(updated_node)


def _stub(node: cst.FunctionDef) -> cst.FunctionDef:
    body = node.body
    if isinstance(body, cst.SimpleStatementSuite):  # def f(x): return x
        return node.with_changes(
            body=body.with_changes(body=[cst.Raise(exc=cst.Name("NotImplementedError"))])
        )
    assert isinstance(body, cst.IndentedBlock)
    keep: list[cst.BaseStatement] = []
    if node.get_docstring(clean=False) is not None:
        keep.append(body.body[0])
    return node.with_changes(body=body.with_changes(body=[*keep, _RAISE], footer=()))


def stub_body(source: bytes, qualname: str) -> bytes:
    """`source` with the body of function `qualname` ("Class.method", "f#2") stubbed.

    Raises `LookupError` if no such function exists. Bytes outside the body are unchanged.
    """
    module = parse_module(source)
    stubber = _Stubber(qualname)
    new = module.visit(stubber)
    if not stubber.done:
        raise LookupError(f"no function {qualname!r} in this file")
    return new.bytes


def candidates(ctx: ExciseContext, *, rng: random.Random) -> CandidateStream:
    """One candidate per eligible unit, in the seeded `rng`'s order (see module doc)."""
    pool = sorted(ctx.index.units, key=lambda u: u.unit_id)
    rng.shuffle(pool)
    for unit in pool:
        key = unit_key(unit)
        if unit.body_lines < ctx.min_body_lines:
            yield SkippedFile(path=key, reason=f"body has {unit.body_lines} line(s)")
            continue
        if any(d.split("(")[0] in _ABSTRACT for d in unit.decorators):
            yield SkippedFile(path=key, reason="an abstract or @overload declaration")
            continue
        if unit.file not in ctx.sources:
            yield SkippedFile(path=key, reason="source file was skipped")
            continue
        try:
            new = stub_body(ctx.sources[unit.file], unit.qualname)
            yield make_candidate(
                ctx,
                strategy=STRATEGY,
                target="body",
                units=(key,),
                edits={unit.file: new},
                spans=((unit.file, unit.body_start_line, unit.end_line),),
                complexity=unit.complexity,
                callers=len(ctx.callers.get(key, ())),
                has_docstring=unit.docstring is not None,
                signature=unit.signature,
                docstring=unit.docstring,
            )
        except (SourceSkipped, LookupError, UnicodeDecodeError) as exc:
            yield SkippedFile(path=key, reason=str(exc))
