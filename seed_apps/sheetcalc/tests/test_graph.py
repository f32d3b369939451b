from sheetcalc.graph import DependencyGraph


def build(edges):
    graph = DependencyGraph()
    for key, precedents in edges.items():
        graph.set_precedents(key, precedents)
    return graph


def test_precedents_and_dependents_are_sorted():
    graph = build({"c": ["b", "a"], "d": ["a"]})
    assert graph.precedents("c") == ["a", "b"]
    assert graph.dependents("a") == ["c", "d"]
    assert graph.dependents("zzz") == []


def test_set_precedents_replaces_old_edges():
    graph = build({"c": ["a"]})
    graph.set_precedents("c", ["b"])
    assert graph.dependents("a") == []
    assert graph.dependents("b") == ["c"]


def test_set_precedents_with_nothing_removes_the_node():
    graph = build({"c": ["a"]})
    graph.set_precedents("c", [])
    assert graph.precedents("c") == []
    assert graph.dependents("a") == []


def test_remove_keeps_incoming_edges():
    graph = build({"b": ["a"], "c": ["b"]})
    graph.remove("b")
    assert graph.precedents("b") == []
    assert graph.dependents("b") == ["c"]


def test_clear_drops_everything():
    graph = build({"b": ["a"]})
    graph.clear()
    assert graph.dependents("a") == [] and graph.precedents("b") == []


def test_transitive_dependents_follows_chains():
    graph = build({"b": ["a"], "c": ["b"], "d": ["c", "x"], "y": ["x"]})
    assert graph.transitive_dependents(["a"]) == {"b", "c", "d"}
    assert graph.transitive_dependents(["x"]) == {"d", "y"}


def test_transitive_dependents_includes_start_only_via_cycle():
    graph = build({"a": ["b"], "b": ["a"]})
    assert graph.transitive_dependents(["a"]) == {"a", "b"}


def test_scc_orders_precedents_first():
    graph = build({"c": ["b"], "b": ["a"]})
    assert graph.strongly_connected_components({"a", "b", "c"}) == [["a"], ["b"], ["c"]]


def test_scc_groups_cycles():
    graph = build({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["c"], "e": []})
    assert graph.strongly_connected_components({"a", "b", "c", "d", "e"}) == [["a", "b", "c"], ["d"], ["e"]]


def test_scc_handles_two_separate_cycles_and_bridge():
    graph = build({"a": ["b"], "b": ["a"], "c": ["d", "a"], "d": ["c"]})
    assert graph.strongly_connected_components({"a", "b", "c", "d"}) == [["a", "b"], ["c", "d"]]


def test_scc_ignores_edges_leaving_the_node_set():
    graph = build({"b": ["a"], "c": ["b"]})
    assert graph.strongly_connected_components({"b", "c"}) == [["b"], ["c"]]


def test_scc_deep_chain_does_not_hit_recursion_limit():
    graph = build({i: [i - 1] for i in range(1, 5000)})
    components = graph.strongly_connected_components(set(range(5000)))
    assert components[:3] == [[0], [1], [2]]
    assert len(components) == 5000


def test_is_cyclic_component_detects_self_reference():
    graph = build({"a": ["a"], "b": ["c"]})
    assert graph.is_cyclic_component(["a"]) is True
    assert graph.is_cyclic_component(["b"]) is False
    assert graph.is_cyclic_component(["x", "y"]) is True


def test_recalculation_plan_orders_dirty_cells_and_flags_cycles():
    graph = build({"b": ["a"], "c": ["b", "d"], "d": ["c"], "e": ["d"], "z": ["y"]})
    order, cyclic = graph.recalculation_plan(["a"])
    assert order == ["a", "b", "c", "d", "e"]
    assert cyclic == {"c", "d"}


def test_recalculation_plan_for_unrelated_change():
    graph = build({"b": ["a"]})
    assert graph.recalculation_plan(["q"]) == (["q"], set())
