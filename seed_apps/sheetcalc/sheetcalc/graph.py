"""Dependency graph between formula cells with cycle-aware recalculation order.

Nodes are hashable, mutually comparable keys (the workbook uses
``(sheet, row, col)`` tuples for cells and ``("", NAME)`` for defined
names).  An edge ``a -> b`` means "``a`` reads ``b``" (``b`` is a precedent
of ``a``).  Recalculation order comes from Tarjan's strongly-connected-
components algorithm, which emits components precedents-first; components with
more than one node, or a node reading itself, are cycles.
"""

from collections import defaultdict


class DependencyGraph:
    """Directed graph of precedent/dependent relations between keys."""

    def __init__(self):
        """Create an empty graph."""
        self._precedents = {}
        self._dependents = defaultdict(set)

    def set_precedents(self, key, precedents):
        """Replace the outgoing edges of ``key`` with ``precedents`` (an iterable of keys)."""
        self.remove(key)
        precedents = frozenset(precedents)
        if not precedents:
            return
        self._precedents[key] = precedents
        for precedent in precedents:
            self._dependents[precedent].add(key)

    def remove(self, key):
        """Drop all outgoing edges of ``key`` (edges pointing at it are kept)."""
        for precedent in self._precedents.pop(key, ()):
            dependents = self._dependents[precedent]
            dependents.discard(key)
            if not dependents:
                del self._dependents[precedent]

    def clear(self):
        """Remove every edge."""
        self._precedents.clear()
        self._dependents.clear()

    def precedents(self, key):
        """Return the keys ``key`` reads directly, sorted."""
        return sorted(self._precedents.get(key, ()))

    def dependents(self, key):
        """Return the keys that read ``key`` directly, sorted."""
        return sorted(self._dependents.get(key, ()))

    def transitive_dependents(self, keys):
        """Return every key that reads any of ``keys``, directly or indirectly.

        The start keys themselves are included only when reached through a
        cycle.
        """
        seen = set()
        stack = list(keys)
        while stack:
            for dependent in self._dependents.get(stack.pop(), ()):
                if dependent not in seen:
                    seen.add(dependent)
                    stack.append(dependent)
        return seen

    def strongly_connected_components(self, nodes):
        """Return the strongly connected components of the subgraph induced by ``nodes``.

        Uses an iterative version of Tarjan's algorithm (no recursion limit).
        Components come out precedents-first, each sorted, with roots visited
        in sorted order so the result is deterministic.
        """
        nodes = set(nodes)
        index_of, low = {}, {}
        stack, on_stack, components = [], set(), []
        counter = 0

        def successors(node):
            """Iterate the in-set precedents of ``node`` in sorted order."""
            return iter(sorted(p for p in self._precedents.get(node, ()) if p in nodes))

        for root in sorted(nodes):
            if root in index_of:
                continue
            index_of[root] = low[root] = counter
            counter += 1
            stack.append(root)
            on_stack.add(root)
            work = [(root, successors(root))]
            while work:
                node, pending = work[-1]
                descended = False
                for successor in pending:
                    if successor not in index_of:
                        index_of[successor] = low[successor] = counter
                        counter += 1
                        stack.append(successor)
                        on_stack.add(successor)
                        work.append((successor, successors(successor)))
                        descended = True
                        break
                    if successor in on_stack:
                        low[node] = min(low[node], index_of[successor])
                if descended:
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
        return components

    def is_cyclic_component(self, component):
        """Return ``True`` if ``component`` is a cycle (size > 1 or a self-reading node)."""
        if len(component) > 1:
            return True
        node = component[0]
        return node in self._precedents.get(node, ())

    def recalculation_plan(self, changed):
        """Plan the recalculation after the keys in ``changed`` were modified.

        Returns ``(order, cyclic)``: ``order`` lists the changed keys and all of
        their transitive dependents so that every key comes after the keys it
        reads (cycle members are grouped together); ``cyclic`` is the set of
        keys that belong to a cycle.
        """
        affected = set(changed) | self.transitive_dependents(changed)
        order, cyclic = [], set()
        for component in self.strongly_connected_components(affected):
            if self.is_cyclic_component(component):
                cyclic.update(component)
            order.extend(component)
        return order, cyclic
