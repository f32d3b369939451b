import pytest

from depsolve import CycleError, DependencyGraph, GraphError


@pytest.fixture
def diamond():
    return DependencyGraph(
        {"app": ["web", "cli"], "web": ["http", "json"], "cli": ["json"], "http": ["json"], "json": []},
        roots=["app"],
    )


def test_constructor_adds_nodes_edges_and_roots(diamond):
    assert diamond.nodes() == ["app", "cli", "http", "json", "web"]
    assert diamond.roots == {"app"}
    assert "web" in diamond and "ghost" not in diamond


def test_add_edge_creates_missing_nodes():
    graph = DependencyGraph()
    graph.add_edge("a", "b")
    graph.add_node("a")
    assert graph.nodes() == ["a", "b"]
    assert graph.dependencies("a") == ["b"]


def test_dependencies_and_dependents_are_sorted(diamond):
    assert diamond.dependencies("web") == ["http", "json"]
    assert diamond.dependents("json") == ["cli", "http", "web"]
    assert diamond.dependents("app") == []


def test_unknown_nodes_raise_graph_error(diamond):
    for query in (diamond.dependencies, diamond.dependents, diamond.transitive_dependencies, diamond.why):
        with pytest.raises(GraphError, match="unknown package 'ghost'"):
            query("ghost")


def test_transitive_dependencies(diamond):
    assert diamond.transitive_dependencies("app") == ["cli", "http", "json", "web"]
    assert diamond.transitive_dependencies("json") == []


def test_transitive_dependencies_include_self_on_cycle():
    graph = DependencyGraph({"a": ["b"], "b": ["a"]})
    assert graph.transitive_dependencies("a") == ["a", "b"]


def test_install_order_puts_dependencies_first_with_alphabetical_ties(diamond):
    assert diamond.install_order() == ["json", "cli", "http", "web", "app"]


def test_install_order_of_independent_nodes_is_alphabetical():
    assert DependencyGraph({"c": [], "a": [], "b": []}).install_order() == ["a", "b", "c"]


def test_install_order_raises_cycle_error_with_the_cycle():
    graph = DependencyGraph({"app": ["a"], "a": ["b"], "b": ["c"], "c": ["a"]})
    with pytest.raises(CycleError, match="dependency cycle: a -> b -> c -> a") as info:
        graph.install_order()
    assert info.value.cycle == ["a", "b", "c", "a"]


def test_strongly_connected_components():
    graph = DependencyGraph({"a": ["b"], "b": ["c", "d"], "c": ["a"], "d": ["e"], "e": ["d"], "f": []})
    assert graph.strongly_connected_components() == [["a", "b", "c"], ["d", "e"], ["f"]]


def test_find_cycles_reports_shortest_cycle_per_component():
    graph = DependencyGraph({"a": ["b", "z"], "b": ["c", "a"], "c": ["a"], "d": ["d"], "z": []})
    assert graph.find_cycles() == [["a", "b", "a"], ["d", "d"]]


def test_find_cycles_of_acyclic_graph_is_empty(diamond):
    assert diamond.find_cycles() == []


def test_find_cycles_follows_edges_inside_component_only():
    graph = DependencyGraph({"a": ["b"], "b": ["x", "c"], "c": ["a"], "x": []})
    assert graph.find_cycles() == [["a", "b", "c", "a"]]


def test_why_returns_shortest_path_from_each_root():
    graph = DependencyGraph(
        {"app": ["web", "json"], "tool": ["cli"], "web": ["json"], "cli": ["web"]}, roots=["app", "tool"]
    )
    assert graph.why("json") == [["app", "json"], ["tool", "cli", "web", "json"]]
    assert graph.why("app") == [["app"]]


def test_why_of_unreachable_node_is_empty():
    graph = DependencyGraph({"app": [], "stray": []}, roots=["app"])
    assert graph.why("stray") == []


def test_depths_and_orphans():
    graph = DependencyGraph({"app": ["a", "b"], "a": ["c"], "b": ["c"], "c": [], "stray": ["c"]}, roots=["app"])
    assert graph.depths() == {"app": 0, "a": 1, "b": 1, "c": 2}
    assert graph.orphans() == ["stray"]


def test_render_tree_marks_repeated_nodes(diamond):
    labels = {"app": "app 1.0.0", "json": "json 2.0.0"}
    assert diamond.render_tree(labels).splitlines() == [
        "app 1.0.0",
        "  cli",
        "    json 2.0.0",
        "  web",
        "    http",
        "      json 2.0.0 (*)",
        "    json 2.0.0 (*)",
    ]


def test_render_tree_stops_at_cycles():
    graph = DependencyGraph({"a": ["b"], "b": ["a"]}, roots=["a"])
    assert graph.render_tree() == "a\n  b\n    a (*)"
