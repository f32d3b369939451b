"""Human readable explanations of resolution failures.

A failed resolution ends with a derived incompatibility whose causes form a
binary tree (a derivation graph, since subtrees can be shared). The
explainer walks that tree depth first and emits one sentence per derived
incompatibility, in the order a reader needs them::

    Because a >=1.0.0 depends on b >=2.0.0 and b >=2.0.0 depends on c <1.0.0, a >=1.0.0 requires c <1.0.0.
    So, because the project requires a >=1.0.0 and c >=1.0.0, version solving failed.

Derived incompatibilities referenced more than once (and the final
conclusion) get a line number such as ``(1)`` so later sentences can refer
back to them instead of repeating their derivation.
"""

from __future__ import annotations

from collections import Counter

from .terms import DEPENDENCY, ROOT, Incompatibility, describe_package, describe_subject


class Explainer:
    """Builds the explanation text for one failure incompatibility.

    Args:
        failure: the incompatibility returned by conflict resolution.
    """

    def __init__(self, failure: Incompatibility) -> None:
        self.failure = failure
        self.references: Counter[int] = Counter()
        self.line_numbers: dict[int, int] = {}
        self.lines: list[tuple[str, int | None]] = []
        self._count_references(failure)

    def _count_references(self, root: Incompatibility) -> None:
        """Count how many derived parents refer to each derived incompatibility."""
        seen: set[int] = set()
        stack = [root]
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            for child in (node.left, node.right):
                if child is not None and child.is_derived:
                    self.references[id(child)] += 1
                    stack.append(child)

    def explain(self) -> str:
        """Return the explanation, one sentence per line.

        Numbered lines are prefixed with ``(N)``; unnumbered lines are
        indented to align with them. When only the conclusion is numbered,
        nothing refers back to it and the numbering is left out. An external
        (non-derived) failure is rendered as a single sentence.
        """
        if not self.failure.is_derived:
            return _sentence(str(self.failure)) + "."
        self._visit(self.failure, conclusion=True)
        if len(self.line_numbers) == 1:
            return "\n".join(text for text, _ in self.lines)
        width = len(str(len(self.line_numbers))) + 3
        rendered = []
        for text, number in self.lines:
            if number is None:
                rendered.append(" " * width + text if text else "")
            else:
                rendered.append(f"({number}) ".ljust(width) + text)
        return "\n".join(rendered)

    def _write(self, incompatibility: Incompatibility, text: str, numbered: bool) -> None:
        if numbered:
            number = len(self.line_numbers) + 1
            self.line_numbers[id(incompatibility)] = number
            self.lines.append((text, number))
        else:
            self.lines.append((text, None))

    def _line(self, incompatibility: Incompatibility) -> int | None:
        return self.line_numbers.get(id(incompatibility))

    def _visit(self, incompatibility: Incompatibility, conclusion: bool = False) -> None:
        """Emit the sentences deriving ``incompatibility`` (a derived one).

        Three shapes are handled: both causes derived, exactly one derived,
        and both external. Causes that already have a line number are cited
        as ``(N)`` instead of being derived again.
        """
        numbered = conclusion or self.references[id(incompatibility)] > 1
        lead = "So," if numbered else "And"
        claim = str(incompatibility)
        left, right = incompatibility.left, incompatibility.right
        assert left is not None and right is not None
        if left.is_derived and right.is_derived:
            left_line, right_line = self._line(left), self._line(right)
            if left_line is not None and right_line is not None:
                text = f"Because {left} ({left_line}) and {right} ({right_line}), {claim}."
                self._write(incompatibility, text, numbered)
                return
            if left_line is not None or right_line is not None:
                cited, other = (left, right) if left_line is not None else (right, left)
                self._visit(other)
                self._write(incompatibility, f"{lead} because {cited} ({self._line(cited)}), {claim}.", numbered)
                return
            self._visit(left, conclusion=True)
            right_line = self._line(right)
            if right_line is None:
                self.lines.append(("", None))
                self._visit(right)
                text = f"{lead} because {left} ({self._line(left)}), {claim}."
            else:
                text = f"{lead} because {left} ({self._line(left)}) and {right} ({right_line}), {claim}."
            self._write(incompatibility, text, numbered)
            return
        if left.is_derived or right.is_derived:
            derived, external = _split_causes(incompatibility)
            derived_line = self._line(derived)
            if derived_line is not None:
                text = f"Because {external} and {derived} ({derived_line}), {claim}."
            elif self._collapsible(derived):
                inner_derived, inner_external = _split_causes(derived)
                self._visit(inner_derived)
                text = f"{lead} because {conjoin(inner_external, external)}, {claim}."
            else:
                self._visit(derived)
                text = f"{lead} because {external}, {claim}."
            self._write(incompatibility, text, numbered)
            return
        self._write(incompatibility, f"Because {conjoin(left, right)}, {claim}.", numbered)

    def _collapsible(self, incompatibility: Incompatibility) -> bool:
        """True when ``incompatibility`` can be merged into its parent's sentence.

        That requires it to be referenced once, to have exactly one derived
        cause, and that derived cause not to be numbered already.
        """
        if self.references[id(incompatibility)] > 1:
            return False
        left, right = incompatibility.left, incompatibility.right
        if left is None or right is None or left.is_derived == right.is_derived:
            return False
        derived = left if left.is_derived else right
        return self._line(derived) is None


def _split_causes(incompatibility: Incompatibility) -> tuple[Incompatibility, Incompatibility]:
    """Return ``(derived cause, external cause)`` of an incompatibility with one of each."""
    left, right = incompatibility.left, incompatibility.right
    assert left is not None and right is not None
    return (left, right) if left.is_derived else (right, left)


def conjoin(first: Incompatibility, second: Incompatibility) -> str:
    """Join two incompatibility clauses with "and".

    Two dependencies of the same depender (same positive term) are merged:
    "the project requires both a >=1.0.0 and b" or "every version of x
    depends on both a and b". Anything else is ``"{first} and {second}"``.
    """
    if (
        first.kind == DEPENDENCY
        and second.kind == DEPENDENCY
        and len(first.terms) == len(second.terms) == 2
        and first.terms[0] == second.terms[0]
    ):
        depender = first.terms[0]
        targets = [describe_package(term.package, term.allowed) for term in (first.terms[1], second.terms[1])]
        if depender.package == ROOT:
            return f"the project requires both {targets[0]} and {targets[1]}"
        return f"{describe_subject(depender)} depends on both {targets[0]} and {targets[1]}"
    return f"{first} and {second}"


def _sentence(text: str) -> str:
    """Capitalize the first letter of a clause."""
    return text[:1].upper() + text[1:]


def explain_failure(failure: Incompatibility) -> str:
    """Return the multi-line explanation for a failure incompatibility."""
    return Explainer(failure).explain()
