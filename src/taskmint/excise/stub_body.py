"""Strategy `stub_body`: a function's body becomes `raise NotImplementedError`.

The signature, decorators and docstring stay, so the function keeps its place, its name and
its contract, and every importer still imports; only the behaviour is gone.
"""

from __future__ import annotations

import libcst as cst

from taskmint.index.python import parse_module

__all__ = ["STRATEGY", "stub_body"]

STRATEGY = "stub_body"

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
