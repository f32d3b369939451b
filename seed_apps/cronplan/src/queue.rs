//! A binary min-heap and a stable event queue built on it.

/// A binary min-heap: `pop` returns the smallest item.
#[derive(Clone, Debug, Default)]
pub struct MinHeap<T> {
    items: Vec<T>,
}

impl<T: Ord> MinHeap<T> {
    /// An empty heap.
    pub fn new() -> MinHeap<T> {
        MinHeap { items: Vec::new() }
    }

    /// Builds a heap from arbitrary items in linear time.
    pub fn from_vec(items: Vec<T>) -> MinHeap<T> {
        let mut heap = MinHeap { items };
        for i in (0..heap.items.len() / 2).rev() {
            heap.sift_down(i);
        }
        heap
    }

    /// The number of items.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether the heap is empty.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The smallest item, without removing it.
    pub fn peek(&self) -> Option<&T> {
        self.items.first()
    }

    /// Adds an item.
    pub fn push(&mut self, item: T) {
        self.items.push(item);
        self.sift_up(self.items.len() - 1);
    }

    /// Removes and returns the smallest item.
    pub fn pop(&mut self) -> Option<T> {
        if self.items.is_empty() {
            return None;
        }
        let item = self.items.swap_remove(0);
        if !self.items.is_empty() {
            self.sift_down(0);
        }
        Some(item)
    }

    /// All items in ascending order.
    pub fn into_sorted_vec(mut self) -> Vec<T> {
        let mut out = Vec::with_capacity(self.items.len());
        while let Some(item) = self.pop() {
            out.push(item);
        }
        out
    }

    fn sift_up(&mut self, mut i: usize) {
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.items[i] < self.items[parent] {
                self.items.swap(i, parent);
                i = parent;
            } else {
                break;
            }
        }
    }

    fn sift_down(&mut self, mut i: usize) {
        let n = self.items.len();
        loop {
            let left = 2 * i + 1;
            let right = left + 1;
            let mut smallest = i;
            if left < n && self.items[left] < self.items[smallest] {
                smallest = left;
            }
            if right < n && self.items[right] < self.items[smallest] {
                smallest = right;
            }
            if smallest == i {
                return;
            }
            self.items.swap(i, smallest);
            i = smallest;
        }
    }
}

impl<T: Ord> FromIterator<T> for MinHeap<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> MinHeap<T> {
        MinHeap::from_vec(iter.into_iter().collect())
    }
}

impl<T: Ord> Extend<T> for MinHeap<T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        for item in iter {
            self.push(item);
        }
    }
}

/// An entry ordered by time, then by insertion order; the payload is not compared.
#[derive(Debug)]
struct Entry<E> {
    time: i64,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        (self.time, self.seq) == (other.time, other.seq)
    }
}

impl<E> Eq for Entry<E> {}

impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl<E> Ord for Entry<E> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.time, self.seq).cmp(&(other.time, other.seq))
    }
}

/// Timed events; events due at the same time come out in the order they were scheduled.
#[derive(Debug)]
pub struct EventQueue<E> {
    heap: MinHeap<Entry<E>>,
    next_seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: MinHeap { items: Vec::new() },
            next_seq: 0,
        }
    }
}

impl<E> EventQueue<E> {
    /// An empty queue.
    pub fn new() -> EventQueue<E> {
        EventQueue::default()
    }

    /// Schedules `event` at `time`.
    pub fn schedule(&mut self, time: i64, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry { time, seq, event });
    }

    /// The time of the earliest event.
    pub fn peek_time(&self) -> Option<i64> {
        self.heap.peek().map(|e| e.time)
    }

    /// Removes the earliest event.
    pub fn pop(&mut self) -> Option<(i64, E)> {
        self.heap.pop().map(|e| (e.time, e.event))
    }

    /// Removes every event due at or before `now`, earliest first.
    pub fn pop_due(&mut self, now: i64) -> Vec<(i64, E)> {
        let mut out = Vec::new();
        while self.peek_time().is_some_and(|t| t <= now) {
            out.extend(self.pop());
        }
        out
    }

    /// The number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether no events are pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_ascending_order() {
        let mut heap = MinHeap::new();
        for v in [5, 3, 8, 1, 9, 2, 7] {
            heap.push(v);
        }
        assert_eq!(heap.len(), 7);
        assert_eq!(heap.peek(), Some(&1));
        let out: Vec<i32> = std::iter::from_fn(|| heap.pop()).collect();
        assert_eq!(out, vec![1, 2, 3, 5, 7, 8, 9]);
        assert!(heap.is_empty());
        assert_eq!(heap.pop(), None);
    }

    #[test]
    fn heapify_handles_duplicates() {
        let heap = MinHeap::from_vec(vec![4, 4, 1, 9, 1, 0, 4]);
        assert_eq!(heap.into_sorted_vec(), vec![0, 1, 1, 4, 4, 4, 9]);
    }

    #[test]
    fn collects_and_extends() {
        let mut heap: MinHeap<u8> = [3u8, 1, 2].into_iter().collect();
        heap.extend([0, 5]);
        assert_eq!(heap.into_sorted_vec(), vec![0, 1, 2, 3, 5]);
    }

    #[test]
    fn events_at_equal_times_keep_insertion_order() {
        let mut q = EventQueue::new();
        q.schedule(10, "b");
        q.schedule(5, "a");
        q.schedule(10, "c");
        q.schedule(10, "d");
        assert_eq!(q.peek_time(), Some(5));
        assert_eq!(q.pop(), Some((5, "a")));
        let names: Vec<&str> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        assert_eq!(names, vec!["b", "c", "d"]);
    }

    #[test]
    fn pop_due_stops_at_now() {
        let mut q = EventQueue::new();
        for t in [3, 1, 4, 1, 5, 9] {
            q.schedule(t, t * 10);
        }
        let due: Vec<i64> = q.pop_due(4).into_iter().map(|(_, e)| e).collect();
        assert_eq!(due, vec![10, 10, 30, 40]);
        assert_eq!(q.len(), 2);
        assert_eq!(q.peek_time(), Some(5));
    }
}
