//! Guided self-scheduling on simulated workers: the policy `balancers::sim` replays a recorded
//! frame under, written against its public interface as the balancer is against `Balancer`.

use balancers::sim::{Children, Costs, Next, Policy, Simulated, Simulation};

use crate::Guided;

/// [`Guided`] as the simulator runs it: the built-in `counter`'s policy with guided chunks.
/// One counter hands out the initial tasks, serving one worker at a time, each visit taking
/// [`Costs::counter`]; a worker that comes to it when `r` tasks are left takes
/// [`Guided::chunk`]`(r, workers)` of them. Spawned tasks stay on their worker and run newest
/// first, each initial task's subtree before the next initial task, as
/// `LocalQueue::run_initial` runs them on threads.
///
/// Made for one run ([`Simulated::policy`] makes a fresh one); afterwards
/// [`chunks`](Self::chunks) tells what it handed out.
#[derive(Clone, Debug)]
pub struct GuidedPolicy {
    guided: Guided,
    /// The first initial task not yet handed out.
    next_initial: usize,
    /// When the counter is free to serve the next worker.
    free_at: f64,
    /// The chunks handed out so far, in order.
    chunks: Vec<usize>,
}

impl GuidedPolicy {
    /// The policy of `guided`, before its run.
    pub fn new(guided: Guided) -> Self {
        Self {
            guided,
            next_initial: 0,
            free_at: 0.0,
            chunks: Vec::new(),
        }
    }

    /// The size of every chunk the counter has handed out, in the order it handed them out.
    pub fn chunks(&self) -> &[usize] {
        &self.chunks
    }
}

impl Policy for GuidedPolicy {
    /// Nothing: every initial task waits at the counter.
    fn deal(&mut self, _sim: &mut Simulation<'_>, _w: usize) {}

    fn children(&self) -> Children {
        Children::Kept
    }

    fn next_task(&mut self, sim: &mut Simulation<'_>, now: f64, w: usize) -> Next {
        // The newest spawned task, then the rest of the chunk, then the counter.
        if let Some(task) = sim.pop_newest(w).or_else(|| sim.take_held(w)) {
            return Next::Run(task);
        }
        let total = sim.initial_tasks();
        if self.next_initial >= total {
            return Next::Done;
        }
        // The counter serves one worker at a time: this one once it is free, a visit later.
        let served = now.max(self.free_at) + sim.draw(w, sim.costs().counter);
        self.free_at = served;
        let chunk = self.guided.chunk(total - self.next_initial, sim.workers());
        sim.hold(w, self.next_initial..self.next_initial + chunk);
        self.next_initial += chunk;
        self.chunks.push(chunk);
        Next::At(served)
    }
}

impl Simulated for Guided {
    fn policy(&self, _workers: usize, _costs: &Costs) -> Box<dyn Policy> {
        Box::new(GuidedPolicy::new(*self))
    }
}
