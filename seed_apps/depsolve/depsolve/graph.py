"""Dependency graph queries over a resolved package set.

Nodes are package names; an edge ``a -> b`` means "a depends on b". Root
nodes are the packages the project asked for directly. All query results
are deterministic: ties are always broken by name.
"""

from __future__ import annotations

import heapq
from collections import deque
from typing import Iterable, Mapping

from .errors import CycleError, GraphError


class DependencyGraph:
    """A directed graph of package dependencies.

    Args:
        edges: optional mapping of node to the nodes it depends on; every
            mentioned node is added.
        roots: the directly requested nodes (added as nodes too).
    """

    def __init__(self, edges: Mapping[str, Iterable[str]] | None = None, roots: Iterable[str] = ()) -> None:
        self._edges: dict[str, set[str]] = {}
        self.roots: set[str] = set()
        for node, targets in (edges or {}).items():
            self.add_node(node)
            for target in targets:
                self.add_edge(node, target)
        for root in roots:
            self.add_root(root)

    def add_node(self, name: str) -> None:
        """Add ``name`` if it is not present yet."""
        self._edges.setdefault(name, set())

    def add_root(self, name: str) -> None:
        """Add ``name`` as a node and mark it as directly requested."""
        self.add_node(name)
        self.roots.add(name)

    def add_edge(self, source: str, target: str) -> None:
        """Record that ``source`` depends on ``target`` (adding both nodes)."""
        self.add_node(source)
        self.add_node(target)
        self._edges[source].add(target)

    def _require(self, name: str) -> None:
        if name not in self._edges:
            raise GraphError(f"unknown package {name!r}")

    def __contains__(self, name: object) -> bool:
        """True when ``name`` is a node of the graph."""
        return name in self._edges

    def nodes(self) -> list[str]:
        """Return every node, sorted."""
        return sorted(self._edges)

    def dependencies(self, name: str) -> list[str]:
        """Return the direct dependencies of ``name``, sorted.

        Raises:
            GraphError: if ``name`` is not in the graph.
        """
        self._require(name)
        return sorted(self._edges[name])

    def dependents(self, name: str) -> list[str]:
        """Return the nodes that directly depend on ``name``, sorted.

        Raises:
            GraphError: if ``name`` is not in the graph.
        """
        self._require(name)
        return sorted(node for node, targets in self._edges.items() if name in targets)

    def transitive_dependencies(self, name: str) -> list[str]:
        """Return every node reachable from ``name`` (excluding itself unless on a cycle), sorted.

        Raises:
            GraphError: if ``name`` is not in the graph.
        """
        self._require(name)
        seen: set[str] = set()
        stack = list(self._edges[name])
        while stack:
            node = stack.pop()
            if node in seen:
                continue
            seen.add(node)
            stack.extend(self._edges[node])
        return sorted(seen)

    def install_order(self) -> list[str]:
        """Return all nodes ordered so that dependencies precede their dependents.

        Uses Kahn's algorithm with a min-heap, so among the nodes that are
        ready at any point the alphabetically smallest comes first.

        Raises:
            CycleError: if the graph contains a cycle (reporting one of them).
        """
        remaining = {node: len(targets) for node, targets in self._edges.items()}
        dependents: dict[str, list[str]] = {node: [] for node in self._edges}
        for node, targets in self._edges.items():
            for target in targets:
                dependents[target].append(node)
        ready = [node for node, count in remaining.items() if count == 0]
        heapq.heapify(ready)
        order: list[str] = []
        while ready:
            node = heapq.heappop(ready)
            order.append(node)
            for dependent in dependents[node]:
                remaining[dependent] -= 1
                if remaining[dependent] == 0:
                    heapq.heappush(ready, dependent)
        if len(order) != len(self._edges):
            raise CycleError(self.find_cycles()[0])
        return order

    def strongly_connected_components(self) -> list[list[str]]:
        """Return the strongly connected components (Tarjan's algorithm).

        Each component is sorted; components are sorted by their first node.
        Implemented iteratively so deep graphs do not hit the recursion limit.
        """
        index_of: dict[str, int] = {}
        low: dict[str, int] = {}
        on_stack: set[str] = set()
        stack: list[str] = []
        components: list[list[str]] = []
        counter = 0
        for start in self.nodes():
            if start in index_of:
                continue
            work = [(start, iter(sorted(self._edges[start])))]
            index_of[start] = low[start] = counter
            counter += 1
            stack.append(start)
            on_stack.add(start)
            while work:
                node, children = work[-1]
                advanced = False
                for child in children:
                    if child not in index_of:
                        index_of[child] = low[child] = counter
                        counter += 1
                        stack.append(child)
                        on_stack.add(child)
                        work.append((child, iter(sorted(self._edges[child]))))
                        advanced = True
                        break
                    if child in on_stack:
                        low[node] = min(low[node], index_of[child])
                if advanced:
                    continue
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index_of[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(sorted(component))
        return sorted(components)

    def find_cycles(self) -> list[list[str]]:
        """Return one cycle per cyclic strongly connected component.

        Each cycle is a shortest cycle through the component's smallest
        node, found by breadth-first search that follows edges inside the
        component in alphabetical order. It starts and ends with that node
        (``["a", "b", "a"]``); a self-dependency gives ``["a", "a"]``.
        Cycles are listed in component order.
        """
        cycles = []
        for component in self.strongly_connected_components():
            start = component[0]
            if len(component) == 1 and start not in self._edges[start]:
                continue
            members = set(component)
            parents: dict[str, str | None] = {start: None}
            queue = deque([start])
            closing: str | None = None
            while queue and closing is None:
                node = queue.popleft()
                for child in sorted(self._edges[node] & members):
                    if child == start:
                        closing = node
                        break
                    if child not in parents:
                        parents[child] = node
                        queue.append(child)
            path: list[str] = [start]
            node_on_path = closing
            while node_on_path is not None:
                path.append(node_on_path)
                node_on_path = parents[node_on_path]
            cycles.append(list(reversed(path)))
        return cycles

    def why(self, target: str) -> list[list[str]]:
        """Explain why ``target`` is present: one shortest path from each root that reaches it.

        Paths start at a root and end at ``target``; a root that is the target
        yields ``[target]``. Breadth-first search visits dependencies in
        alphabetical order, so the chosen shortest path is the
        lexicographically smallest one. Paths are sorted.

        Raises:
            GraphError: if ``target`` is not in the graph.
        """
        self._require(target)
        paths = []
        for root in sorted(self.roots):
            parents: dict[str, str | None] = {root: None}
            queue = deque([root])
            while queue and target not in parents:
                node = queue.popleft()
                for child in sorted(self._edges[node]):
                    if child not in parents:
                        parents[child] = node
                        queue.append(child)
            if target not in parents:
                continue
            path = [target]
            while parents[path[-1]] is not None:
                path.append(parents[path[-1]])  # type: ignore[arg-type]
            paths.append(list(reversed(path)))
        return sorted(paths)

    def depths(self) -> dict[str, int]:
        """Return the shortest distance from any root for every reachable node (roots are 0)."""
        depth = {root: 0 for root in self.roots}
        queue = deque(sorted(self.roots))
        while queue:
            node = queue.popleft()
            for child in sorted(self._edges[node]):
                if child not in depth:
                    depth[child] = depth[node] + 1
                    queue.append(child)
        return depth

    def orphans(self) -> list[str]:
        """Return the nodes unreachable from every root, sorted."""
        reachable = self.depths()
        return [node for node in self.nodes() if node not in reachable]

    def render_tree(self, labels: Mapping[str, str] | None = None) -> str:
        """Render the graph as an indented tree below each root (roots sorted).

        Each line is two spaces per depth followed by the node's label
        (``labels[node]`` or the name). A node already expanded earlier is
        shown once more with the suffix `` (*)`` and not expanded again, which
        also stops cycles.
        """
        labels = labels or {}
        lines: list[str] = []
        expanded: set[str] = set()
        for root in sorted(self.roots):
            stack = [(root, 0)]
            while stack:
                node, depth = stack.pop()
                label = labels.get(node, node)
                if node in expanded:
                    lines.append("  " * depth + label + " (*)")
                    continue
                expanded.add(node)
                lines.append("  " * depth + label)
                for child in sorted(self._edges[node], reverse=True):
                    stack.append((child, depth + 1))
        return "\n".join(lines)
