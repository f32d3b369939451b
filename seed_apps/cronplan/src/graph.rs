//! A directed graph keyed by ordered values, with the algorithms a job
//! scheduler needs: topological order, cycle paths, levels, reachability,
//! transitive reduction and weighted longest paths.
//!
//! Every result that involves a choice is deterministic: ties are broken by key order.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// A cycle found in a graph, as a closed path (the first key is repeated last).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CycleError<K> {
    /// The keys along the cycle.
    pub path: Vec<K>,
}

/// A directed graph; an edge `a -> b` means "a must come before b".
#[derive(Clone, Debug)]
pub struct Graph<K> {
    keys: Vec<K>,
    index: BTreeMap<K, usize>,
    succ: Vec<BTreeSet<usize>>,
    pred: Vec<BTreeSet<usize>>,
}

impl<K: Ord + Clone> Default for Graph<K> {
    fn default() -> Self {
        Graph {
            keys: Vec::new(),
            index: BTreeMap::new(),
            succ: Vec::new(),
            pred: Vec::new(),
        }
    }
}

impl<K: Ord + Clone> Graph<K> {
    /// An empty graph.
    pub fn new() -> Graph<K> {
        Graph::default()
    }

    /// Adds a node if it is not present; returns its internal index.
    pub fn add_node(&mut self, key: K) -> usize {
        if let Some(&i) = self.index.get(&key) {
            return i;
        }
        let i = self.keys.len();
        self.keys.push(key.clone());
        self.index.insert(key, i);
        self.succ.push(BTreeSet::new());
        self.pred.push(BTreeSet::new());
        i
    }

    /// Adds an edge (and any missing node); returns whether the edge is new.
    pub fn add_edge(&mut self, from: K, to: K) -> bool {
        let a = self.add_node(from);
        let b = self.add_node(to);
        self.pred[b].insert(a);
        self.succ[a].insert(b)
    }

    /// Removes an edge; returns whether it existed.
    pub fn remove_edge(&mut self, from: &K, to: &K) -> bool {
        match (self.index.get(from), self.index.get(to)) {
            (Some(&a), Some(&b)) => {
                self.pred[b].remove(&a);
                self.succ[a].remove(&b)
            }
            _ => false,
        }
    }

    /// Whether `key` is a node.
    pub fn contains(&self, key: &K) -> bool {
        self.index.contains_key(key)
    }

    /// Whether the edge `from -> to` exists.
    pub fn has_edge(&self, from: &K, to: &K) -> bool {
        match (self.index.get(from), self.index.get(to)) {
            (Some(a), Some(b)) => self.succ[*a].contains(b),
            _ => false,
        }
    }

    /// The number of nodes.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether the graph has no nodes.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The number of edges.
    pub fn edge_count(&self) -> usize {
        self.succ.iter().map(BTreeSet::len).sum()
    }

    /// The nodes in insertion order.
    pub fn nodes(&self) -> impl Iterator<Item = &K> + '_ {
        self.keys.iter()
    }

    fn sorted_keys<'a>(&self, indices: impl Iterator<Item = &'a usize>) -> Vec<K> {
        let mut out: Vec<K> = indices.map(|&i| self.keys[i].clone()).collect();
        out.sort();
        out
    }

    /// Direct successors of `key`, sorted.
    pub fn successors(&self, key: &K) -> Vec<K> {
        self.index
            .get(key)
            .map(|&i| self.sorted_keys(self.succ[i].iter()))
            .unwrap_or_default()
    }

    /// Direct predecessors of `key`, sorted.
    pub fn predecessors(&self, key: &K) -> Vec<K> {
        self.index
            .get(key)
            .map(|&i| self.sorted_keys(self.pred[i].iter()))
            .unwrap_or_default()
    }

    /// Nodes without predecessors, sorted.
    pub fn roots(&self) -> Vec<K> {
        let idx: Vec<usize> = (0..self.len())
            .filter(|&i| self.pred[i].is_empty())
            .collect();
        self.sorted_keys(idx.iter())
    }

    /// Nodes without successors, sorted.
    pub fn leaves(&self) -> Vec<K> {
        let idx: Vec<usize> = (0..self.len())
            .filter(|&i| self.succ[i].is_empty())
            .collect();
        self.sorted_keys(idx.iter())
    }

    /// A topological order; among nodes that are ready together, the smallest key
    /// comes first. Fails with a cycle if there is none.
    ///
    /// ```
    /// use cronplan::Graph;
    /// let mut g = Graph::new();
    /// g.add_edge("fetch", "build");
    /// g.add_edge("lint", "build");
    /// g.add_edge("build", "deploy");
    /// assert_eq!(g.topo_order().unwrap(), ["fetch", "lint", "build", "deploy"]);
    /// g.add_edge("deploy", "fetch");
    /// assert_eq!(g.topo_order().unwrap_err().path, ["build", "deploy", "fetch", "build"]);
    /// ```
    pub fn topo_order(&self) -> Result<Vec<K>, CycleError<K>> {
        let n = self.len();
        let mut indegree: Vec<usize> = self.pred.iter().map(BTreeSet::len).collect();
        let mut ready: BTreeMap<&K, usize> = (0..n)
            .filter(|&i| indegree[i] == 0)
            .map(|i| (&self.keys[i], i))
            .collect();
        let mut order = Vec::with_capacity(n);
        while let Some((_, i)) = ready.pop_first() {
            order.push(self.keys[i].clone());
            for &j in &self.succ[i] {
                indegree[j] -= 1;
                if indegree[j] == 0 {
                    ready.insert(&self.keys[j], j);
                }
            }
        }
        if order.len() == n {
            Ok(order)
        } else {
            let path = self
                .find_cycle()
                .expect("a graph without a topological order has a cycle");
            Err(CycleError { path })
        }
    }

    fn successors_descending(&self, i: usize) -> Vec<usize> {
        let mut out: Vec<usize> = self.succ[i].iter().copied().collect();
        out.sort_by(|&a, &b| self.keys[b].cmp(&self.keys[a]));
        out
    }

    /// Some cycle, as a closed path, or `None` for an acyclic graph. The search
    /// starts from the smallest key and follows successors in key order.
    pub fn find_cycle(&self) -> Option<Vec<K>> {
        const WHITE: u8 = 0;
        const GREY: u8 = 1;
        const BLACK: u8 = 2;
        let n = self.len();
        let mut colour = vec![WHITE; n];
        let mut starts: Vec<usize> = (0..n).collect();
        starts.sort_by(|&a, &b| self.keys[a].cmp(&self.keys[b]));
        for start in starts {
            if colour[start] != WHITE {
                continue;
            }
            colour[start] = GREY;
            // Each frame holds a node and its unvisited successors (smallest last).
            let mut stack: Vec<(usize, Vec<usize>)> =
                vec![(start, self.successors_descending(start))];
            while let Some(top) = stack.last_mut() {
                let node = top.0;
                match top.1.pop() {
                    Some(next) if colour[next] == WHITE => {
                        colour[next] = GREY;
                        stack.push((next, self.successors_descending(next)));
                    }
                    Some(next) if colour[next] == GREY => {
                        let pos = stack
                            .iter()
                            .position(|(v, _)| *v == next)
                            .expect("grey nodes are on the stack");
                        let mut path: Vec<K> = stack[pos..]
                            .iter()
                            .map(|(v, _)| self.keys[*v].clone())
                            .collect();
                        path.push(self.keys[next].clone());
                        return Some(path);
                    }
                    Some(_) => {}
                    None => {
                        colour[node] = BLACK;
                        stack.pop();
                    }
                }
            }
        }
        None
    }

    fn reach(&self, start: usize, adjacency: &[BTreeSet<usize>]) -> BTreeSet<usize> {
        let mut seen = BTreeSet::new();
        let mut queue: VecDeque<usize> = adjacency[start].iter().copied().collect();
        while let Some(i) = queue.pop_front() {
            if seen.insert(i) {
                queue.extend(adjacency[i].iter().copied());
            }
        }
        seen
    }

    /// Every node from which `key` can be reached.
    pub fn ancestors(&self, key: &K) -> BTreeSet<K> {
        match self.index.get(key) {
            Some(&i) => self
                .reach(i, &self.pred)
                .into_iter()
                .map(|j| self.keys[j].clone())
                .collect(),
            None => BTreeSet::new(),
        }
    }

    /// Every node reachable from `key`.
    pub fn descendants(&self, key: &K) -> BTreeSet<K> {
        match self.index.get(key) {
            Some(&i) => self
                .reach(i, &self.succ)
                .into_iter()
                .map(|j| self.keys[j].clone())
                .collect(),
            None => BTreeSet::new(),
        }
    }

    /// Nodes grouped by depth: roots first, then each node one level below its
    /// deepest predecessor. Each level is sorted.
    pub fn levels(&self) -> Result<Vec<Vec<K>>, CycleError<K>> {
        let order = self.topo_order()?;
        let mut depth = vec![0usize; self.len()];
        let mut levels: Vec<Vec<K>> = Vec::new();
        for key in order {
            let i = self.index[&key];
            depth[i] = self.pred[i]
                .iter()
                .map(|&p| depth[p] + 1)
                .max()
                .unwrap_or(0);
            if levels.len() <= depth[i] {
                levels.resize_with(depth[i] + 1, Vec::new);
            }
            levels[depth[i]].push(key);
        }
        for level in &mut levels {
            level.sort();
        }
        Ok(levels)
    }

    /// The smallest graph with the same reachability: every edge implied by a
    /// longer path is dropped. Nodes keep their insertion order.
    pub fn transitive_reduction(&self) -> Result<Graph<K>, CycleError<K>> {
        self.topo_order()?;
        let mut out = Graph::new();
        for key in &self.keys {
            out.add_node(key.clone());
        }
        for u in 0..self.len() {
            let mut indirect = BTreeSet::new();
            for &w in &self.succ[u] {
                indirect.extend(self.reach(w, &self.succ));
            }
            for &v in &self.succ[u] {
                if !indirect.contains(&v) {
                    out.add_edge(self.keys[u].clone(), self.keys[v].clone());
                }
            }
        }
        Ok(out)
    }

    /// The heaviest path, where a path weighs the sum of its nodes' weights.
    /// Ties prefer smaller keys. Returns the weight and the path from its root.
    pub fn critical_path<F: Fn(&K) -> u64>(
        &self,
        weight: F,
    ) -> Result<(u64, Vec<K>), CycleError<K>> {
        let order = self.topo_order()?;
        let n = self.len();
        let mut dist = vec![0u64; n];
        let mut via: Vec<Option<usize>> = vec![None; n];
        for key in &order {
            let i = self.index[key];
            let mut best: Option<usize> = None;
            for &p in &self.pred[i] {
                best = match best {
                    Some(b)
                        if dist[b] > dist[p]
                            || (dist[b] == dist[p] && self.keys[b] < self.keys[p]) =>
                    {
                        Some(b)
                    }
                    _ => Some(p),
                };
            }
            dist[i] = weight(key) + best.map_or(0, |b| dist[b]);
            via[i] = best;
        }
        let mut end: Option<usize> = None;
        for i in 0..n {
            end = match end {
                Some(e)
                    if dist[e] > dist[i] || (dist[e] == dist[i] && self.keys[e] < self.keys[i]) =>
                {
                    Some(e)
                }
                _ => Some(i),
            };
        }
        let Some(end) = end else {
            return Ok((0, Vec::new()));
        };
        let mut path = vec![self.keys[end].clone()];
        let mut cursor = end;
        while let Some(p) = via[cursor] {
            path.push(self.keys[p].clone());
            cursor = p;
        }
        path.reverse();
        Ok((dist[end], path))
    }

    /// For every node, its own weight plus the heaviest chain of successors
    /// below it (the "bottom level" list schedulers prioritise by).
    pub fn bottom_levels<F: Fn(&K) -> u64>(
        &self,
        weight: F,
    ) -> Result<BTreeMap<K, u64>, CycleError<K>> {
        let order = self.topo_order()?;
        let mut level = vec![0u64; self.len()];
        for key in order.iter().rev() {
            let i = self.index[key];
            let below = self.succ[i].iter().map(|&s| level[s]).max().unwrap_or(0);
            level[i] = weight(key) + below;
        }
        Ok(order
            .into_iter()
            .map(|k| {
                let l = level[self.index[&k]];
                (k, l)
            })
            .collect())
    }

    /// The graph restricted to the nodes `keep` accepts.
    pub fn subgraph<F: Fn(&K) -> bool>(&self, keep: F) -> Graph<K> {
        let mut out = Graph::new();
        for key in self.keys.iter().filter(|k| keep(k)) {
            out.add_node(key.clone());
        }
        for (a, succs) in self.succ.iter().enumerate() {
            for &b in succs {
                if out.contains(&self.keys[a]) && out.contains(&self.keys[b]) {
                    out.add_edge(self.keys[a].clone(), self.keys[b].clone());
                }
            }
        }
        out
    }

    /// The same graph with every edge reversed.
    pub fn reversed(&self) -> Graph<K> {
        Graph {
            keys: self.keys.clone(),
            index: self.index.clone(),
            succ: self.pred.clone(),
            pred: self.succ.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[(&'static str, &'static str)]) -> Graph<&'static str> {
        let mut g = Graph::new();
        for &(a, b) in edges {
            g.add_edge(a, b);
        }
        g
    }

    #[test]
    fn nodes_and_edges_are_deduplicated() {
        let mut g = graph(&[("a", "b"), ("a", "c")]);
        assert!(!g.add_edge("a", "b"));
        assert_eq!(g.len(), 3);
        assert_eq!(g.edge_count(), 2);
        assert!(g.has_edge(&"a", &"b"));
        assert!(!g.has_edge(&"b", &"a"));
        assert!(g.remove_edge(&"a", &"b"));
        assert!(!g.remove_edge(&"a", &"b"));
        assert_eq!(g.predecessors(&"b"), Vec::<&str>::new());
        assert_eq!(g.nodes().copied().collect::<Vec<_>>(), ["a", "b", "c"]);
    }

    #[test]
    fn roots_and_leaves_are_sorted() {
        let g = graph(&[("z", "m"), ("a", "m"), ("m", "q"), ("m", "b")]);
        assert_eq!(g.roots(), ["a", "z"]);
        assert_eq!(g.leaves(), ["b", "q"]);
        assert_eq!(g.successors(&"m"), ["b", "q"]);
        assert_eq!(g.predecessors(&"m"), ["a", "z"]);
        assert!(g.successors(&"nope").is_empty());
    }

    #[test]
    fn topo_order_prefers_small_keys() {
        let g = graph(&[("c", "d"), ("b", "d"), ("a", "c")]);
        assert_eq!(g.topo_order().unwrap(), ["a", "b", "c", "d"]);
        let empty: Graph<&str> = Graph::new();
        assert!(empty.topo_order().unwrap().is_empty());
    }

    #[test]
    fn self_loop_is_a_cycle() {
        let g = graph(&[("a", "a")]);
        assert_eq!(g.find_cycle(), Some(vec!["a", "a"]));
        assert_eq!(g.topo_order().unwrap_err().path, ["a", "a"]);
    }

    #[test]
    fn cycle_path_is_closed_and_minimal_from_the_first_key() {
        let g = graph(&[("a", "b"), ("b", "c"), ("c", "d"), ("d", "b"), ("x", "a")]);
        assert_eq!(g.find_cycle(), Some(vec!["b", "c", "d", "b"]));
        assert_eq!(graph(&[("a", "b")]).find_cycle(), None);
    }

    #[test]
    fn diamond_is_not_a_cycle() {
        let g = graph(&[("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")]);
        assert_eq!(g.find_cycle(), None);
    }

    #[test]
    fn ancestors_and_descendants() {
        let g = graph(&[("a", "b"), ("b", "c"), ("x", "c"), ("c", "d")]);
        assert_eq!(
            g.ancestors(&"c").into_iter().collect::<Vec<_>>(),
            ["a", "b", "x"]
        );
        assert_eq!(
            g.descendants(&"a").into_iter().collect::<Vec<_>>(),
            ["b", "c", "d"]
        );
        assert!(g.descendants(&"d").is_empty());
        assert!(g.ancestors(&"missing").is_empty());
    }

    #[test]
    fn levels_use_the_deepest_predecessor() {
        let g = graph(&[("a", "b"), ("b", "c"), ("a", "c"), ("x", "c")]);
        assert_eq!(
            g.levels().unwrap(),
            vec![vec!["a", "x"], vec!["b"], vec!["c"]]
        );
    }

    #[test]
    fn transitive_reduction_drops_implied_edges() {
        let g = graph(&[("a", "b"), ("b", "c"), ("a", "c"), ("a", "d"), ("c", "d")]);
        let r = g.transitive_reduction().unwrap();
        assert_eq!(r.edge_count(), 3);
        assert!(r.has_edge(&"a", &"b") && r.has_edge(&"b", &"c") && r.has_edge(&"c", &"d"));
        assert!(!r.has_edge(&"a", &"c"));
        assert!(graph(&[("a", "b"), ("b", "a")])
            .transitive_reduction()
            .is_err());
    }

    #[test]
    fn critical_path_follows_the_heaviest_chain() {
        let g = graph(&[("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")]);
        let w = |k: &&str| match *k {
            "a" => 1,
            "b" => 5,
            "c" => 2,
            _ => 1,
        };
        assert_eq!(g.critical_path(w).unwrap(), (7, vec!["a", "b", "d"]));
        let ties = graph(&[("a", "c"), ("b", "c")]);
        assert_eq!(ties.critical_path(|_| 1).unwrap(), (2, vec!["a", "c"]));
        let empty: Graph<&str> = Graph::new();
        assert_eq!(empty.critical_path(|_| 1).unwrap(), (0, vec![]));
    }

    #[test]
    fn bottom_levels_accumulate_downwards() {
        let g = graph(&[("a", "b"), ("a", "c"), ("b", "d")]);
        let levels = g.bottom_levels(|k| if *k == "b" { 10 } else { 1 }).unwrap();
        assert_eq!(levels[&"a"], 12);
        assert_eq!(levels[&"b"], 11);
        assert_eq!(levels[&"c"], 1);
        assert_eq!(levels[&"d"], 1);
    }

    #[test]
    fn subgraph_and_reverse() {
        let g = graph(&[("a", "b"), ("b", "c"), ("a", "c")]);
        let s = g.subgraph(|k| *k != "b");
        assert_eq!(s.len(), 2);
        assert!(s.has_edge(&"a", &"c"));
        assert_eq!(s.edge_count(), 1);
        let r = g.reversed();
        assert!(r.has_edge(&"c", &"a"));
        assert_eq!(r.topo_order().unwrap(), ["c", "b", "a"]);
    }
}
