//! Dependency graphs: ordering, cycles, reachability and path weights.

use cronplan::{parse_spec, Graph, SplitMix64};
use std::collections::BTreeMap;

fn build_graph() -> Graph<String> {
    let mut g = Graph::new();
    for (a, b) in [
        ("checkout", "compile"),
        ("checkout", "lint"),
        ("compile", "unit"),
        ("compile", "package"),
        ("unit", "publish"),
        ("package", "publish"),
        ("lint", "publish"),
        ("docs", "publish"),
    ] {
        g.add_edge(a.to_string(), b.to_string());
    }
    g
}

fn position(order: &[String], key: &str) -> usize {
    order.iter().position(|k| k == key).unwrap()
}

#[test]
fn numeric_keys_order_numerically() {
    let mut g: Graph<u32> = Graph::new();
    g.add_edge(10, 2);
    g.add_edge(3, 2);
    g.add_node(1);
    assert_eq!(g.topo_order().unwrap(), [1, 3, 10, 2]);
}

#[test]
fn build_pipeline_order() {
    let order = build_graph().topo_order().unwrap();
    assert_eq!(
        order,
        ["checkout", "compile", "docs", "lint", "package", "unit", "publish"]
    );
}

#[test]
fn build_pipeline_levels() {
    let levels = build_graph().levels().unwrap();
    assert_eq!(
        levels,
        vec![
            vec!["checkout".to_string(), "docs".to_string()],
            vec!["compile".to_string(), "lint".to_string()],
            vec!["package".to_string(), "unit".to_string()],
            vec!["publish".to_string()],
        ]
    );
}

#[test]
fn cycle_is_reported_as_a_closed_path() {
    let mut g = build_graph();
    g.add_edge("publish".to_string(), "compile".to_string());
    let err = g.topo_order().unwrap_err();
    assert_eq!(err.path, ["compile", "package", "publish", "compile"]);
    assert!(g.levels().is_err());
    assert!(g.critical_path(|_| 1).is_err());
    assert!(g.bottom_levels(|_| 1).is_err());
}

#[test]
fn critical_path_with_durations() {
    let minutes: BTreeMap<&str, u64> = [
        ("checkout", 2),
        ("compile", 15),
        ("lint", 4),
        ("unit", 10),
        ("package", 6),
        ("publish", 3),
        ("docs", 20),
    ]
    .into_iter()
    .collect();
    let (total, path) = build_graph()
        .critical_path(|k| minutes[k.as_str()])
        .unwrap();
    assert_eq!(total, 30);
    assert_eq!(path, ["checkout", "compile", "unit", "publish"]);
}

#[test]
fn complete_dag_reduces_to_a_chain() {
    let mut g: Graph<u8> = Graph::new();
    for a in 0..5 {
        for b in a + 1..5 {
            g.add_edge(a, b);
        }
    }
    assert_eq!(g.edge_count(), 10);
    let r = g.transitive_reduction().unwrap();
    assert_eq!(r.edge_count(), 4);
    for a in 0..4 {
        assert!(r.has_edge(&a, &(a + 1)));
    }
    assert_eq!(r.descendants(&0), g.descendants(&0));
}

#[test]
fn ancestors_and_descendants_mirror_each_other() {
    let g = build_graph();
    let keys: Vec<String> = g.nodes().cloned().collect();
    for a in &keys {
        for b in &keys {
            assert_eq!(
                g.descendants(a).contains(b),
                g.ancestors(b).contains(a),
                "{a} / {b}"
            );
        }
    }
    assert_eq!(g.ancestors(&"publish".to_string()).len(), 6);
}

#[test]
fn removing_a_node_breaks_a_cycle() {
    let mut g: Graph<&str> = Graph::new();
    g.add_edge("a", "b");
    g.add_edge("b", "c");
    g.add_edge("c", "a");
    g.add_edge("c", "d");
    assert!(g.find_cycle().is_some());
    let without_b = g.subgraph(|k| *k != "b");
    assert_eq!(without_b.find_cycle(), None);
    assert_eq!(without_b.topo_order().unwrap(), ["c", "a", "d"]);
}

#[test]
fn bottom_levels_of_the_pipeline() {
    let levels = build_graph().bottom_levels(|_| 1).unwrap();
    assert_eq!(levels["checkout"], 4);
    assert_eq!(levels["docs"], 2);
    assert_eq!(levels["publish"], 1);
}

#[test]
fn random_dags_have_valid_orders() {
    let mut rng = SplitMix64::new(2024);
    for _ in 0..20 {
        let n = 2 + rng.next_below(30) as u32;
        let mut g: Graph<u32> = Graph::new();
        let mut edges = Vec::new();
        for b in 0..n {
            g.add_node(b);
            for a in 0..b {
                if rng.next_below(4) == 0 {
                    // Shuffle labels so the insertion order is not already sorted.
                    edges.push((a * 7 % 101, b * 7 % 101));
                }
            }
        }
        for &(a, b) in &edges {
            g.add_edge(a, b);
        }
        let order = g.topo_order().unwrap();
        assert_eq!(order.len(), g.len());
        let pos: BTreeMap<u32, usize> = order.iter().enumerate().map(|(i, k)| (*k, i)).collect();
        for (a, b) in edges {
            assert!(pos[&a] < pos[&b], "{a} -> {b}");
        }
    }
}

#[test]
fn reversing_twice_restores_edges() {
    let g = build_graph();
    let rr = g.reversed().reversed();
    let keys: Vec<String> = g.nodes().cloned().collect();
    for a in &keys {
        assert_eq!(g.successors(a), rr.successors(a));
        assert_eq!(g.successors(a), g.reversed().predecessors(a));
    }
    let order = g.reversed().topo_order().unwrap();
    assert!(position(&order, "publish") < position(&order, "checkout"));
}

#[test]
fn spec_graph_points_from_dependency_to_dependent() {
    let spec = parse_spec(
        "[job a]\nduration = 1m\n[job b]\nduration = 1m\nafter = a\n[job c]\nduration = 1m\nafter = a, b\n",
    )
    .unwrap();
    let g = spec.graph();
    assert_eq!(g.successors(&"a".to_string()), ["b", "c"]);
    assert_eq!(g.roots(), ["a"]);
    assert_eq!(g.leaves(), ["c"]);
    assert_eq!(g.transitive_reduction().unwrap().edge_count(), 2);
}

#[test]
fn edges_to_or_from_unknown_nodes_do_not_exist() {
    let mut g: Graph<&str> = Graph::new();
    g.add_edge("a", "b");
    assert!(g.has_edge(&"a", &"b"));
    assert!(!g.has_edge(&"a", &"z"));
    assert!(!g.has_edge(&"z", &"b"));
    assert!(!g.has_edge(&"y", &"z"));
    assert!(!Graph::<&str>::new().has_edge(&"a", &"a"));
}
