//! In which order a worker runs the tasks it holds: the newest first (depth-first, the
//! default) or the oldest first (breadth-first).

/// The order in which a worker runs the tasks waiting on it.
///
/// A task tree can be run newest-first or oldest-first, and the choice decides how much waits
/// at once (the memory footprint the GRAMPS dissertation measures, ch. 6). Newest-first walks
/// each spawned subtree to its leaves before its siblings start: what waits is one task's
/// children plus, per level of depth, the siblings not yet begun. Oldest-first runs a
/// worker's initial tasks before anything they spawn, then their children generation by
/// generation: what waits is a whole generation of the worker's share of the work.
///
/// Neither changes what a task computes, so the output of a run does not depend on the order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Order {
    /// The newest task first: each spawned subtree to its end before the next (a LIFO).
    #[default]
    DepthFirst,
    /// The oldest task first: every initial task of the worker's share before their
    /// children, then each generation before the next (a FIFO).
    BreadthFirst,
}

impl Order {
    /// `""` for depth-first, the default; `"/breadth-first"` otherwise: what a balancer's name
    /// ends with.
    pub(crate) fn suffix(self) -> &'static str {
        match self {
            Order::DepthFirst => "",
            Order::BreadthFirst => "/breadth-first",
        }
    }
}
