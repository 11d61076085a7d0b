//! A recorded run's task tree and its file format.
//!
//! A run starts from its initial tasks, in order; every task may spawn children. For each task
//! the tree keeps its parent, its kind and depth, a place (for a renderer: a pixel), its work
//! as counts of named units (for a renderer: box tests, triangle tests, shadow rays, rays), and
//! how far through its parent's work it was spawned. Tasks are numbered canonically,
//! breadth-first: the initial tasks in order, then the children of task 0 in the order it
//! spawned them, then those of task 1, and so on. So the children of a task are consecutive,
//! parents never decrease along the list, and the same run recorded under any balancer gives
//! the same tree, and, given the same cost model, the same file, byte for byte.
//!
//! # File format, version 1
//!
//! Integers are unsigned LEB128 (seven bits a byte, low first) unless a width is given; all
//! fixed-width numbers are little-endian.
//!
//! ```text
//! "raylbtsk"                 8 bytes
//! version                    u32 (1)
//! description                string: length, then UTF-8
//! kinds                      count, then that many strings
//! features                   count (1 to MAX_FEATURES), then that many strings
//! model                      count (features + 1), then that many f64: the cost of a task,
//!                            then the cost of one unit of each feature, in seconds
//! fit                        0, or 1 then rows, and r_squared, subtree_median_error,
//!                            subtree_p90_error as f64
//! initial tasks              count
//! tasks                      count (at least the initial tasks)
//! every task, in order:
//!   parent                   spawned tasks only: the parent's number minus the previous
//!                            spawned task's parent (0 before the first)
//!   kind, depth, place       three integers
//!   work                     one integer per feature
//!   spawned at               spawned tasks only: u16, the fraction of the parent's work done
//!                            when it spawned this task, in 65535ths
//! "end!"                     4 bytes
//! tasks                      u64, again
//! ```
//!
//! A reader refuses a file without the signature, of another version, cut short, with a
//! number written in more bytes than it needs or with anything after the end mark, naming
//! which: a tree has exactly one file.

use std::collections::HashMap;
use std::fmt;
use std::io::{self, Write};
use std::ops::Range;

use super::model::{CostModel, Fit};

/// The most work counts a task can have.
pub const MAX_FEATURES: usize = 8;

/// The parent of an initial task in a [`RecordedTask`].
pub const NO_PARENT: u64 = u64::MAX;

/// The file's first bytes.
const MAGIC: &[u8; 8] = b"raylbtsk";
/// The version this code writes and reads.
pub const VERSION: u32 = 1;
/// The mark after the last task.
const END: &[u8; 4] = b"end!";
/// The number for "spawned when its parent's work was done".
const SPAWNED_AT_END: u16 = u16::MAX;

/// One task as a recorder saw it run, named by an id of the recorder's choosing (unique in
/// the run; the tree renumbers them).
///
/// ```
/// use balancers::sim::{CostModel, MAX_FEATURES, NO_PARENT, RecordedTask, TaskTree};
///
/// /// A task of kind `depth` at place `id`, with `rays` rays, spawned a quarter of the way
/// /// through its parent.
/// fn task(id: u64, parent: u64, index: u32, depth: u16, rays: u32) -> RecordedTask {
///     let mut work = [0; MAX_FEATURES];
///     work[0] = rays;
///     let (kind, place) = (depth as u8, id as u32);
///     RecordedTask {
///         id, parent, index, kind, depth, place, work, progress_at_spawn: 1, progress: 4,
///     }
/// }
///
/// // Two tiles, ids 7 and 9; tile 7 spawned a reflection, id 8. Ids are the recorder's own.
/// let tasks = [
///     task(7, NO_PARENT, 0, 0, 2),
///     task(9, NO_PARENT, 1, 0, 4),
///     task(8, 7, 0, 1, 6),
/// ];
/// let kinds = vec!["camera".into(), "reflection".into()];
/// let model = CostModel { per_task: 1.0, per_unit: vec![0.5], fit: None };
/// let features = vec!["rays".into()];
/// let tree = TaskTree::from_recorded("two tiles".into(), kinds, features, model, &tasks)?;
/// assert_eq!(tree.len(), 3);
/// // Numbered breadth-first: the tiles, then the reflection.
/// assert_eq!(tree.parent(2), Some(0));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct RecordedTask {
    /// The recorder's id of this task.
    pub id: u64,
    /// The id of the task that spawned this one, or [`NO_PARENT`] for an initial task.
    pub parent: u64,
    /// For an initial task its position in the initial list; for a spawned one its position
    /// among its parent's children, in the order they were spawned.
    pub index: u32,
    /// What kind of task it is, in the recorder's numbering (for a renderer: camera,
    /// reflection, refraction).
    pub kind: u8,
    /// Its generation: 0 for an initial task, its parent's plus one for a spawned one.
    pub depth: u16,
    /// Where in the work it belongs, in the recorder's numbering (for a renderer: a pixel).
    pub place: u32,
    /// Counts of each feature's unit (the first `features.len()` are used).
    pub work: [u32; MAX_FEATURES],
    /// The parent's progress when it spawned this task, in any unit that only grows while a
    /// task runs (the recorder's choice), and this task's own progress at its end in the same
    /// unit: a spawn happened `progress_at_spawn / parent's progress` of the way through.
    pub progress_at_spawn: u64,
    /// This task's own progress at its end.
    pub progress: u64,
}

/// A run's tasks, canonically numbered (see the module's overview).
///
/// ```
/// use balancers::sim::wool;
///
/// // Wool's benchmark tree for one worker: a root and two levels below it.
/// let (tree, _seconds) = wool::tree(1, 7);
/// assert_eq!((tree.len(), tree.initial()), (7, 1));
/// assert_eq!(tree.children(0), 1..3);
/// assert_eq!(tree.children(1), 3..5);
/// assert_eq!(tree.parent(6), Some(2));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct TaskTree {
    /// What was recorded (for a renderer: the scene, the image size, the tile size).
    pub description: String,
    /// The names of the task kinds.
    pub kinds: Vec<String>,
    /// The names of the work counts, in the order each task's [`work`](Self::work) lists them.
    pub features: Vec<String>,
    /// Seconds a task takes, from its work.
    pub model: CostModel,
    initial: usize,
    /// Per spawned task (index `i - initial`): its parent.
    parent: Vec<u32>,
    kind: Vec<u8>,
    depth: Vec<u16>,
    place: Vec<u32>,
    /// `features.len()` counts per task.
    work: Vec<u32>,
    /// Per spawned task: how far through its parent's work it was spawned, in 65535ths.
    spawned_at: Vec<u16>,
    /// Per task and one past the end: the number of its first child. Children are
    /// consecutive, so the children of `i` are `first_child[i]..first_child[i + 1]`.
    first_child: Vec<u32>,
}

impl TaskTree {
    /// A tree of `n` tasks, `initial` of them initial, with its arrays empty and room for
    /// them all; `first_child` is left for the caller's numbering.
    fn with_room(
        description: String,
        kinds: Vec<String>,
        features: Vec<String>,
        model: CostModel,
        (n, initial): (usize, usize),
    ) -> Self {
        let f = features.len();
        Self {
            description,
            kinds,
            features,
            model,
            initial,
            parent: Vec::with_capacity(n - initial),
            kind: Vec::with_capacity(n),
            depth: Vec::with_capacity(n),
            place: Vec::with_capacity(n),
            work: Vec::with_capacity(n * f),
            spawned_at: Vec::with_capacity(n - initial),
            first_child: Vec::new(),
        }
    }

    /// The tree of the tasks a recorder saw, numbered canonically; `Err` says what does not
    /// make a tree (an id twice, a parent never seen, positions that skip or repeat, a kind
    /// without a name, work counted beyond the features, more than 256 kinds).
    ///
    /// ```
    /// use balancers::sim::{CostModel, MAX_FEATURES, NO_PARENT, RecordedTask, TaskTree};
    ///
    /// # /// A task of kind `depth` at place `id`, with `rays` rays, spawned a quarter of the way
    /// # /// through its parent.
    /// # fn task(id: u64, parent: u64, index: u32, depth: u16, rays: u32) -> RecordedTask {
    /// #     let mut work = [0; MAX_FEATURES];
    /// #     work[0] = rays;
    /// #     let (kind, place) = (depth as u8, id as u32);
    /// #     RecordedTask {
    /// #         id, parent, index, kind, depth, place, work, progress_at_spawn: 1, progress: 4,
    /// #     }
    /// # }
    /// #
    /// // `task(id, parent, index, depth, rays)` makes a `RecordedTask` (see its example).
    /// // Two tiles, ids 7 and 9; tile 7 spawned a reflection, id 8. Ids are the recorder's own.
    /// let tasks = [
    ///     task(7, NO_PARENT, 0, 0, 2),
    ///     task(9, NO_PARENT, 1, 0, 4),
    ///     task(8, 7, 0, 1, 6),
    /// ];
    /// let kinds = vec!["camera".into(), "reflection".into()];
    /// let model = CostModel { per_task: 1.0, per_unit: vec![0.5], fit: None };
    /// let features = vec!["rays".into()];
    /// let tree = TaskTree::from_recorded("two tiles".into(), kinds, features, model, &tasks)?;
    /// assert_eq!(tree.initial(), 2);
    /// assert_eq!(tree.place(2), 8, "the reflection comes after both tiles");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_recorded(
        description: String,
        kinds: Vec<String>,
        features: Vec<String>,
        model: CostModel,
        tasks: &[RecordedTask],
    ) -> Result<Self, String> {
        Self::from_recorded_numbered(description, kinds, features, model, tasks).map(|(t, _)| t)
    }

    /// [`from_recorded`](Self::from_recorded), and the number each of `tasks` has in the
    /// tree.
    ///
    /// ```
    /// # use balancers::sim::{CostModel, MAX_FEATURES, NO_PARENT, RecordedTask, TaskTree};
    /// #
    /// # /// A task of kind `depth` at place `id`, with `rays` rays, spawned a quarter of the way
    /// # /// through its parent.
    /// # fn task(id: u64, parent: u64, index: u32, depth: u16, rays: u32) -> RecordedTask {
    /// #     let mut work = [0; MAX_FEATURES];
    /// #     work[0] = rays;
    /// #     let (kind, place) = (depth as u8, id as u32);
    /// #     RecordedTask {
    /// #         id, parent, index, kind, depth, place, work, progress_at_spawn: 1, progress: 4,
    /// #     }
    /// # }
    /// #
    /// # // Two tiles, ids 7 and 9; tile 7 spawned a reflection, id 8. Ids are the recorder's own.
    /// # let tasks = [
    /// #     task(7, NO_PARENT, 0, 0, 2),
    /// #     task(9, NO_PARENT, 1, 0, 4),
    /// #     task(8, 7, 0, 1, 6),
    /// # ];
    /// # let kinds = vec!["camera".into(), "reflection".into()];
    /// # let model = CostModel { per_task: 1.0, per_unit: vec![0.5], fit: None };
    /// # let features = vec!["rays".into()];
    /// # let tree = TaskTree::from_recorded("two tiles".into(), kinds, features, model, &tasks)?;
    /// // The same run, its tasks listed in another order: the reflection first.
    /// let listed = [tasks[2].clone(), tasks[0].clone(), tasks[1].clone()];
    /// let (kinds, features) = (tree.kinds.clone(), tree.features.clone());
    /// let model = tree.model.clone();
    /// let (again, number) =
    ///     TaskTree::from_recorded_numbered("again".into(), kinds, features, model, &listed)?;
    /// assert_eq!(number, [2, 0, 1]);
    /// assert!(again.same_shape(&tree));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_recorded_numbered(
        description: String,
        kinds: Vec<String>,
        features: Vec<String>,
        model: CostModel,
        tasks: &[RecordedTask],
    ) -> Result<(Self, Vec<u32>), String> {
        check_recorded_sizes(&kinds, &features, &model, tasks)?;
        let position = positions(tasks, &kinds)?;
        let family = Family::of(tasks, &position)?;
        let numbering = Numbering::breadth_first(&family)?;
        let f = features.len();
        let (n, initial) = (tasks.len(), family.initial.len());
        let mut tree = Self::with_room(description, kinds, features, model, (n, initial));
        tree.first_child = numbering.first_child;
        for (i, &k) in numbering.order.iter().enumerate() {
            let task = &tasks[k];
            tree.kind.push(task.kind);
            tree.depth.push(task.depth);
            tree.place.push(task.place);
            tree.work.extend_from_slice(&task.work[..f]);
            if i >= initial {
                let parent = family.parent_of[k];
                tree.parent.push(numbering.number[parent]);
                tree.spawned_at
                    .push(fraction(task.progress_at_spawn, tasks[parent].progress));
            }
        }
        Ok((tree, numbering.number))
    }

    /// For each task, the initial task whose subtree it is in.
    ///
    /// ```
    /// # use balancers::sim::{CostModel, MAX_FEATURES, NO_PARENT, RecordedTask, TaskTree};
    /// #
    /// # /// A task of kind `depth` at place `id`, with `rays` rays, spawned a quarter of the way
    /// # /// through its parent.
    /// # fn task(id: u64, parent: u64, index: u32, depth: u16, rays: u32) -> RecordedTask {
    /// #     let mut work = [0; MAX_FEATURES];
    /// #     work[0] = rays;
    /// #     let (kind, place) = (depth as u8, id as u32);
    /// #     RecordedTask {
    /// #         id, parent, index, kind, depth, place, work, progress_at_spawn: 1, progress: 4,
    /// #     }
    /// # }
    /// #
    /// # // Two tiles, ids 7 and 9; tile 7 spawned a reflection, id 8. Ids are the recorder's own.
    /// # let tasks = [
    /// #     task(7, NO_PARENT, 0, 0, 2),
    /// #     task(9, NO_PARENT, 1, 0, 4),
    /// #     task(8, 7, 0, 1, 6),
    /// # ];
    /// # let kinds = vec!["camera".into(), "reflection".into()];
    /// # let model = CostModel { per_task: 1.0, per_unit: vec![0.5], fit: None };
    /// # let features = vec!["rays".into()];
    /// # let tree = TaskTree::from_recorded("two tiles".into(), kinds, features, model, &tasks)?;
    /// assert_eq!(tree.subtrees(), [0, 1, 0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn subtrees(&self) -> Vec<u32> {
        let mut root = Vec::with_capacity(self.len());
        for i in 0..self.len() {
            let r = match self.parent(i) {
                None => i as u32,
                Some(p) => root[p],
            };
            root.push(r);
        }
        root
    }

    /// Whether `other` has the same tasks in the same places of the same tree, whatever
    /// their work and model.
    ///
    /// ```
    /// # use balancers::sim::{CostModel, MAX_FEATURES, NO_PARENT, RecordedTask, TaskTree};
    /// #
    /// # /// A task of kind `depth` at place `id`, with `rays` rays, spawned a quarter of the way
    /// # /// through its parent.
    /// # fn task(id: u64, parent: u64, index: u32, depth: u16, rays: u32) -> RecordedTask {
    /// #     let mut work = [0; MAX_FEATURES];
    /// #     work[0] = rays;
    /// #     let (kind, place) = (depth as u8, id as u32);
    /// #     RecordedTask {
    /// #         id, parent, index, kind, depth, place, work, progress_at_spawn: 1, progress: 4,
    /// #     }
    /// # }
    /// #
    /// # // Two tiles, ids 7 and 9; tile 7 spawned a reflection, id 8. Ids are the recorder's own.
    /// # let tasks = [
    /// #     task(7, NO_PARENT, 0, 0, 2),
    /// #     task(9, NO_PARENT, 1, 0, 4),
    /// #     task(8, 7, 0, 1, 6),
    /// # ];
    /// # let kinds = vec!["camera".into(), "reflection".into()];
    /// # let model = CostModel { per_task: 1.0, per_unit: vec![0.5], fit: None };
    /// # let features = vec!["rays".into()];
    /// # let tree = TaskTree::from_recorded("two tiles".into(), kinds, features, model, &tasks)?;
    /// let mut other = tree.clone();
    /// other.model.per_task = 2.0;
    /// assert!(tree.same_shape(&other), "a different model, the same tasks");
    /// let (wool_tree, _) = balancers::sim::wool::tree(1, 1);
    /// assert!(!tree.same_shape(&wool_tree));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn same_shape(&self, other: &Self) -> bool {
        self.initial == other.initial
            && self.parent == other.parent
            && self.kind == other.kind
            && self.depth == other.depth
            && self.place == other.place
    }

    /// Tasks in all.
    ///
    /// ```
    /// # use balancers::sim::{CostModel, MAX_FEATURES, NO_PARENT, RecordedTask, TaskTree};
    /// #
    /// # /// A task of kind `depth` at place `id`, with `rays` rays, spawned a quarter of the way
    /// # /// through its parent.
    /// # fn task(id: u64, parent: u64, index: u32, depth: u16, rays: u32) -> RecordedTask {
    /// #     let mut work = [0; MAX_FEATURES];
    /// #     work[0] = rays;
    /// #     let (kind, place) = (depth as u8, id as u32);
    /// #     RecordedTask {
    /// #         id, parent, index, kind, depth, place, work, progress_at_spawn: 1, progress: 4,
    /// #     }
    /// # }
    /// #
    /// # // Two tiles, ids 7 and 9; tile 7 spawned a reflection, id 8. Ids are the recorder's own.
    /// # let tasks = [
    /// #     task(7, NO_PARENT, 0, 0, 2),
    /// #     task(9, NO_PARENT, 1, 0, 4),
    /// #     task(8, 7, 0, 1, 6),
    /// # ];
    /// # let kinds = vec!["camera".into(), "reflection".into()];
    /// # let model = CostModel { per_task: 1.0, per_unit: vec![0.5], fit: None };
    /// # let features = vec!["rays".into()];
    /// # let tree = TaskTree::from_recorded("two tiles".into(), kinds, features, model, &tasks)?;
    /// assert_eq!(tree.len(), 3);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn len(&self) -> usize {
        self.kind.len()
    }

    /// Whether there are no tasks.
    ///
    /// ```
    /// # use balancers::sim::{CostModel, MAX_FEATURES, NO_PARENT, RecordedTask, TaskTree};
    /// #
    /// # /// A task of kind `depth` at place `id`, with `rays` rays, spawned a quarter of the way
    /// # /// through its parent.
    /// # fn task(id: u64, parent: u64, index: u32, depth: u16, rays: u32) -> RecordedTask {
    /// #     let mut work = [0; MAX_FEATURES];
    /// #     work[0] = rays;
    /// #     let (kind, place) = (depth as u8, id as u32);
    /// #     RecordedTask {
    /// #         id, parent, index, kind, depth, place, work, progress_at_spawn: 1, progress: 4,
    /// #     }
    /// # }
    /// #
    /// # // Two tiles, ids 7 and 9; tile 7 spawned a reflection, id 8. Ids are the recorder's own.
    /// # let tasks = [
    /// #     task(7, NO_PARENT, 0, 0, 2),
    /// #     task(9, NO_PARENT, 1, 0, 4),
    /// #     task(8, 7, 0, 1, 6),
    /// # ];
    /// # let kinds = vec!["camera".into(), "reflection".into()];
    /// # let model = CostModel { per_task: 1.0, per_unit: vec![0.5], fit: None };
    /// # let features = vec!["rays".into()];
    /// # let tree = TaskTree::from_recorded("two tiles".into(), kinds, features, model, &tasks)?;
    /// assert!(!tree.is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.kind.is_empty()
    }

    /// The initial tasks: tasks `0..initial()`.
    ///
    /// ```
    /// # use balancers::sim::{CostModel, MAX_FEATURES, NO_PARENT, RecordedTask, TaskTree};
    /// #
    /// # /// A task of kind `depth` at place `id`, with `rays` rays, spawned a quarter of the way
    /// # /// through its parent.
    /// # fn task(id: u64, parent: u64, index: u32, depth: u16, rays: u32) -> RecordedTask {
    /// #     let mut work = [0; MAX_FEATURES];
    /// #     work[0] = rays;
    /// #     let (kind, place) = (depth as u8, id as u32);
    /// #     RecordedTask {
    /// #         id, parent, index, kind, depth, place, work, progress_at_spawn: 1, progress: 4,
    /// #     }
    /// # }
    /// #
    /// # // Two tiles, ids 7 and 9; tile 7 spawned a reflection, id 8. Ids are the recorder's own.
    /// # let tasks = [
    /// #     task(7, NO_PARENT, 0, 0, 2),
    /// #     task(9, NO_PARENT, 1, 0, 4),
    /// #     task(8, 7, 0, 1, 6),
    /// # ];
    /// # let kinds = vec!["camera".into(), "reflection".into()];
    /// # let model = CostModel { per_task: 1.0, per_unit: vec![0.5], fit: None };
    /// # let features = vec!["rays".into()];
    /// # let tree = TaskTree::from_recorded("two tiles".into(), kinds, features, model, &tasks)?;
    /// assert_eq!(tree.initial(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn initial(&self) -> usize {
        self.initial
    }

    /// The task that spawned task `i`; `None` for an initial task.
    ///
    /// ```
    /// # use balancers::sim::{CostModel, MAX_FEATURES, NO_PARENT, RecordedTask, TaskTree};
    /// #
    /// # /// A task of kind `depth` at place `id`, with `rays` rays, spawned a quarter of the way
    /// # /// through its parent.
    /// # fn task(id: u64, parent: u64, index: u32, depth: u16, rays: u32) -> RecordedTask {
    /// #     let mut work = [0; MAX_FEATURES];
    /// #     work[0] = rays;
    /// #     let (kind, place) = (depth as u8, id as u32);
    /// #     RecordedTask {
    /// #         id, parent, index, kind, depth, place, work, progress_at_spawn: 1, progress: 4,
    /// #     }
    /// # }
    /// #
    /// # // Two tiles, ids 7 and 9; tile 7 spawned a reflection, id 8. Ids are the recorder's own.
    /// # let tasks = [
    /// #     task(7, NO_PARENT, 0, 0, 2),
    /// #     task(9, NO_PARENT, 1, 0, 4),
    /// #     task(8, 7, 0, 1, 6),
    /// # ];
    /// # let kinds = vec!["camera".into(), "reflection".into()];
    /// # let model = CostModel { per_task: 1.0, per_unit: vec![0.5], fit: None };
    /// # let features = vec!["rays".into()];
    /// # let tree = TaskTree::from_recorded("two tiles".into(), kinds, features, model, &tasks)?;
    /// assert_eq!(tree.parent(1), None);
    /// assert_eq!(tree.parent(2), Some(0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn parent(&self, i: usize) -> Option<usize> {
        i.checked_sub(self.initial).map(|s| self.parent[s] as usize)
    }

    /// The children of task `i`, in the order it spawned them.
    ///
    /// ```
    /// # use balancers::sim::{CostModel, MAX_FEATURES, NO_PARENT, RecordedTask, TaskTree};
    /// #
    /// # /// A task of kind `depth` at place `id`, with `rays` rays, spawned a quarter of the way
    /// # /// through its parent.
    /// # fn task(id: u64, parent: u64, index: u32, depth: u16, rays: u32) -> RecordedTask {
    /// #     let mut work = [0; MAX_FEATURES];
    /// #     work[0] = rays;
    /// #     let (kind, place) = (depth as u8, id as u32);
    /// #     RecordedTask {
    /// #         id, parent, index, kind, depth, place, work, progress_at_spawn: 1, progress: 4,
    /// #     }
    /// # }
    /// #
    /// # // Two tiles, ids 7 and 9; tile 7 spawned a reflection, id 8. Ids are the recorder's own.
    /// # let tasks = [
    /// #     task(7, NO_PARENT, 0, 0, 2),
    /// #     task(9, NO_PARENT, 1, 0, 4),
    /// #     task(8, 7, 0, 1, 6),
    /// # ];
    /// # let kinds = vec!["camera".into(), "reflection".into()];
    /// # let model = CostModel { per_task: 1.0, per_unit: vec![0.5], fit: None };
    /// # let features = vec!["rays".into()];
    /// # let tree = TaskTree::from_recorded("two tiles".into(), kinds, features, model, &tasks)?;
    /// assert_eq!(tree.children(0), 2..3);
    /// assert!(tree.children(1).is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn children(&self, i: usize) -> Range<usize> {
        self.first_child[i] as usize..self.first_child[i + 1] as usize
    }

    /// The kind of task `i`, as an index into [`kinds`](Self::kinds).
    ///
    /// ```
    /// # use balancers::sim::{CostModel, MAX_FEATURES, NO_PARENT, RecordedTask, TaskTree};
    /// #
    /// # /// A task of kind `depth` at place `id`, with `rays` rays, spawned a quarter of the way
    /// # /// through its parent.
    /// # fn task(id: u64, parent: u64, index: u32, depth: u16, rays: u32) -> RecordedTask {
    /// #     let mut work = [0; MAX_FEATURES];
    /// #     work[0] = rays;
    /// #     let (kind, place) = (depth as u8, id as u32);
    /// #     RecordedTask {
    /// #         id, parent, index, kind, depth, place, work, progress_at_spawn: 1, progress: 4,
    /// #     }
    /// # }
    /// #
    /// # // Two tiles, ids 7 and 9; tile 7 spawned a reflection, id 8. Ids are the recorder's own.
    /// # let tasks = [
    /// #     task(7, NO_PARENT, 0, 0, 2),
    /// #     task(9, NO_PARENT, 1, 0, 4),
    /// #     task(8, 7, 0, 1, 6),
    /// # ];
    /// # let kinds = vec!["camera".into(), "reflection".into()];
    /// # let model = CostModel { per_task: 1.0, per_unit: vec![0.5], fit: None };
    /// # let features = vec!["rays".into()];
    /// # let tree = TaskTree::from_recorded("two tiles".into(), kinds, features, model, &tasks)?;
    /// assert_eq!(tree.kinds[usize::from(tree.kind(2))], "reflection");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn kind(&self, i: usize) -> u8 {
        self.kind[i]
    }

    /// The depth of task `i` in the spawn tree as the recorder counted it.
    ///
    /// ```
    /// # use balancers::sim::{CostModel, MAX_FEATURES, NO_PARENT, RecordedTask, TaskTree};
    /// #
    /// # /// A task of kind `depth` at place `id`, with `rays` rays, spawned a quarter of the way
    /// # /// through its parent.
    /// # fn task(id: u64, parent: u64, index: u32, depth: u16, rays: u32) -> RecordedTask {
    /// #     let mut work = [0; MAX_FEATURES];
    /// #     work[0] = rays;
    /// #     let (kind, place) = (depth as u8, id as u32);
    /// #     RecordedTask {
    /// #         id, parent, index, kind, depth, place, work, progress_at_spawn: 1, progress: 4,
    /// #     }
    /// # }
    /// #
    /// # // Two tiles, ids 7 and 9; tile 7 spawned a reflection, id 8. Ids are the recorder's own.
    /// # let tasks = [
    /// #     task(7, NO_PARENT, 0, 0, 2),
    /// #     task(9, NO_PARENT, 1, 0, 4),
    /// #     task(8, 7, 0, 1, 6),
    /// # ];
    /// # let kinds = vec!["camera".into(), "reflection".into()];
    /// # let model = CostModel { per_task: 1.0, per_unit: vec![0.5], fit: None };
    /// # let features = vec!["rays".into()];
    /// # let tree = TaskTree::from_recorded("two tiles".into(), kinds, features, model, &tasks)?;
    /// assert_eq!((tree.depth(0), tree.depth(2)), (0, 1));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn depth(&self, i: usize) -> u16 {
        self.depth[i]
    }

    /// Where task `i` works (for a renderer: a pixel).
    ///
    /// ```
    /// # use balancers::sim::{CostModel, MAX_FEATURES, NO_PARENT, RecordedTask, TaskTree};
    /// #
    /// # /// A task of kind `depth` at place `id`, with `rays` rays, spawned a quarter of the way
    /// # /// through its parent.
    /// # fn task(id: u64, parent: u64, index: u32, depth: u16, rays: u32) -> RecordedTask {
    /// #     let mut work = [0; MAX_FEATURES];
    /// #     work[0] = rays;
    /// #     let (kind, place) = (depth as u8, id as u32);
    /// #     RecordedTask {
    /// #         id, parent, index, kind, depth, place, work, progress_at_spawn: 1, progress: 4,
    /// #     }
    /// # }
    /// #
    /// # // Two tiles, ids 7 and 9; tile 7 spawned a reflection, id 8. Ids are the recorder's own.
    /// # let tasks = [
    /// #     task(7, NO_PARENT, 0, 0, 2),
    /// #     task(9, NO_PARENT, 1, 0, 4),
    /// #     task(8, 7, 0, 1, 6),
    /// # ];
    /// # let kinds = vec!["camera".into(), "reflection".into()];
    /// # let model = CostModel { per_task: 1.0, per_unit: vec![0.5], fit: None };
    /// # let features = vec!["rays".into()];
    /// # let tree = TaskTree::from_recorded("two tiles".into(), kinds, features, model, &tasks)?;
    /// assert_eq!((tree.place(0), tree.place(1), tree.place(2)), (7, 9, 8));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn place(&self, i: usize) -> u32 {
        self.place[i]
    }

    /// The work of task `i`, one count per feature.
    ///
    /// ```
    /// # use balancers::sim::{CostModel, MAX_FEATURES, NO_PARENT, RecordedTask, TaskTree};
    /// #
    /// # /// A task of kind `depth` at place `id`, with `rays` rays, spawned a quarter of the way
    /// # /// through its parent.
    /// # fn task(id: u64, parent: u64, index: u32, depth: u16, rays: u32) -> RecordedTask {
    /// #     let mut work = [0; MAX_FEATURES];
    /// #     work[0] = rays;
    /// #     let (kind, place) = (depth as u8, id as u32);
    /// #     RecordedTask {
    /// #         id, parent, index, kind, depth, place, work, progress_at_spawn: 1, progress: 4,
    /// #     }
    /// # }
    /// #
    /// # // Two tiles, ids 7 and 9; tile 7 spawned a reflection, id 8. Ids are the recorder's own.
    /// # let tasks = [
    /// #     task(7, NO_PARENT, 0, 0, 2),
    /// #     task(9, NO_PARENT, 1, 0, 4),
    /// #     task(8, 7, 0, 1, 6),
    /// # ];
    /// # let kinds = vec!["camera".into(), "reflection".into()];
    /// # let model = CostModel { per_task: 1.0, per_unit: vec![0.5], fit: None };
    /// # let features = vec!["rays".into()];
    /// # let tree = TaskTree::from_recorded("two tiles".into(), kinds, features, model, &tasks)?;
    /// assert_eq!(tree.work(2), [6], "one feature: rays");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn work(&self, i: usize) -> &[u32] {
        let f = self.features.len();
        &self.work[i * f..(i + 1) * f]
    }

    /// How far through its parent's work task `i` was spawned, from 0 to 1; 0 for an
    /// initial task.
    ///
    /// ```
    /// # use balancers::sim::{CostModel, MAX_FEATURES, NO_PARENT, RecordedTask, TaskTree};
    /// #
    /// # /// A task of kind `depth` at place `id`, with `rays` rays, spawned a quarter of the way
    /// # /// through its parent.
    /// # fn task(id: u64, parent: u64, index: u32, depth: u16, rays: u32) -> RecordedTask {
    /// #     let mut work = [0; MAX_FEATURES];
    /// #     work[0] = rays;
    /// #     let (kind, place) = (depth as u8, id as u32);
    /// #     RecordedTask {
    /// #         id, parent, index, kind, depth, place, work, progress_at_spawn: 1, progress: 4,
    /// #     }
    /// # }
    /// #
    /// # // Two tiles, ids 7 and 9; tile 7 spawned a reflection, id 8. Ids are the recorder's own.
    /// # let tasks = [
    /// #     task(7, NO_PARENT, 0, 0, 2),
    /// #     task(9, NO_PARENT, 1, 0, 4),
    /// #     task(8, 7, 0, 1, 6),
    /// # ];
    /// # let kinds = vec!["camera".into(), "reflection".into()];
    /// # let model = CostModel { per_task: 1.0, per_unit: vec![0.5], fit: None };
    /// # let features = vec!["rays".into()];
    /// # let tree = TaskTree::from_recorded("two tiles".into(), kinds, features, model, &tasks)?;
    /// assert_eq!(tree.spawned_at(0), 0.0);
    /// assert!((tree.spawned_at(2) - 0.25).abs() < 1e-3);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn spawned_at(&self, i: usize) -> f64 {
        i.checked_sub(self.initial).map_or(0.0, |s| {
            f64::from(self.spawned_at[s]) / f64::from(SPAWNED_AT_END)
        })
    }

    /// Seconds each task takes under `model`.
    ///
    /// ```
    /// # use balancers::sim::{CostModel, MAX_FEATURES, NO_PARENT, RecordedTask, TaskTree};
    /// #
    /// # /// A task of kind `depth` at place `id`, with `rays` rays, spawned a quarter of the way
    /// # /// through its parent.
    /// # fn task(id: u64, parent: u64, index: u32, depth: u16, rays: u32) -> RecordedTask {
    /// #     let mut work = [0; MAX_FEATURES];
    /// #     work[0] = rays;
    /// #     let (kind, place) = (depth as u8, id as u32);
    /// #     RecordedTask {
    /// #         id, parent, index, kind, depth, place, work, progress_at_spawn: 1, progress: 4,
    /// #     }
    /// # }
    /// #
    /// # // Two tiles, ids 7 and 9; tile 7 spawned a reflection, id 8. Ids are the recorder's own.
    /// # let tasks = [
    /// #     task(7, NO_PARENT, 0, 0, 2),
    /// #     task(9, NO_PARENT, 1, 0, 4),
    /// #     task(8, 7, 0, 1, 6),
    /// # ];
    /// # let kinds = vec!["camera".into(), "reflection".into()];
    /// # let model = CostModel { per_task: 1.0, per_unit: vec![0.5], fit: None };
    /// # let features = vec!["rays".into()];
    /// # let tree = TaskTree::from_recorded("two tiles".into(), kinds, features, model, &tasks)?;
    /// assert_eq!(tree.costs(&tree.model), [2.0, 3.0, 4.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn costs(&self, model: &CostModel) -> Vec<f64> {
        (0..self.len()).map(|i| model.cost(self.work(i))).collect()
    }

    /// Writes the tree in the format of the module's overview.
    ///
    /// ```
    /// # use balancers::sim::{CostModel, MAX_FEATURES, NO_PARENT, RecordedTask, TaskTree};
    /// #
    /// # /// A task of kind `depth` at place `id`, with `rays` rays, spawned a quarter of the way
    /// # /// through its parent.
    /// # fn task(id: u64, parent: u64, index: u32, depth: u16, rays: u32) -> RecordedTask {
    /// #     let mut work = [0; MAX_FEATURES];
    /// #     work[0] = rays;
    /// #     let (kind, place) = (depth as u8, id as u32);
    /// #     RecordedTask {
    /// #         id, parent, index, kind, depth, place, work, progress_at_spawn: 1, progress: 4,
    /// #     }
    /// # }
    /// #
    /// # // Two tiles, ids 7 and 9; tile 7 spawned a reflection, id 8. Ids are the recorder's own.
    /// # let tasks = [
    /// #     task(7, NO_PARENT, 0, 0, 2),
    /// #     task(9, NO_PARENT, 1, 0, 4),
    /// #     task(8, 7, 0, 1, 6),
    /// # ];
    /// # let kinds = vec!["camera".into(), "reflection".into()];
    /// # let model = CostModel { per_task: 1.0, per_unit: vec![0.5], fit: None };
    /// # let features = vec!["rays".into()];
    /// # let tree = TaskTree::from_recorded("two tiles".into(), kinds, features, model, &tasks)?;
    /// let mut bytes = Vec::new();
    /// tree.write_to(&mut bytes)?;
    /// assert!(bytes.starts_with(b"raylbtsk"));
    /// assert_eq!(TaskTree::read(&bytes)?, tree);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write_to(&self, out: &mut impl Write) -> io::Result<()> {
        let mut w = Writer { out };
        w.bytes(MAGIC)?;
        w.bytes(&VERSION.to_le_bytes())?;
        w.string(&self.description)?;
        w.strings(&self.kinds)?;
        w.strings(&self.features)?;
        w.int(self.model.per_unit.len() as u64 + 1)?;
        w.float(self.model.per_task)?;
        for &c in &self.model.per_unit {
            w.float(c)?;
        }
        match &self.model.fit {
            None => w.int(0)?,
            Some(fit) => {
                w.int(1)?;
                w.int(fit.rows)?;
                w.float(fit.r_squared)?;
                w.float(fit.subtree_median_error)?;
                w.float(fit.subtree_p90_error)?;
            }
        }
        w.int(self.initial as u64)?;
        w.int(self.len() as u64)?;
        let mut previous_parent = 0;
        for i in 0..self.len() {
            if let Some(p) = self.parent(i) {
                w.int((p - previous_parent) as u64)?;
                previous_parent = p;
            }
            w.int(u64::from(self.kind[i]))?;
            w.int(u64::from(self.depth[i]))?;
            w.int(u64::from(self.place[i]))?;
            for &count in self.work(i) {
                w.int(u64::from(count))?;
            }
            if i >= self.initial {
                w.bytes(&self.spawned_at[i - self.initial].to_le_bytes())?;
            }
        }
        w.bytes(END)?;
        w.bytes(&(self.len() as u64).to_le_bytes())
    }

    /// Reads a tree written by [`write_to`](Self::write_to).
    ///
    /// ```
    /// # use balancers::sim::{CostModel, MAX_FEATURES, NO_PARENT, RecordedTask, TaskTree};
    /// #
    /// # /// A task of kind `depth` at place `id`, with `rays` rays, spawned a quarter of the way
    /// # /// through its parent.
    /// # fn task(id: u64, parent: u64, index: u32, depth: u16, rays: u32) -> RecordedTask {
    /// #     let mut work = [0; MAX_FEATURES];
    /// #     work[0] = rays;
    /// #     let (kind, place) = (depth as u8, id as u32);
    /// #     RecordedTask {
    /// #         id, parent, index, kind, depth, place, work, progress_at_spawn: 1, progress: 4,
    /// #     }
    /// # }
    /// #
    /// # // Two tiles, ids 7 and 9; tile 7 spawned a reflection, id 8. Ids are the recorder's own.
    /// # let tasks = [
    /// #     task(7, NO_PARENT, 0, 0, 2),
    /// #     task(9, NO_PARENT, 1, 0, 4),
    /// #     task(8, 7, 0, 1, 6),
    /// # ];
    /// # let kinds = vec!["camera".into(), "reflection".into()];
    /// # let model = CostModel { per_task: 1.0, per_unit: vec![0.5], fit: None };
    /// # let features = vec!["rays".into()];
    /// # let tree = TaskTree::from_recorded("two tiles".into(), kinds, features, model, &tasks)?;
    /// let name = format!("raylb-doc-tree-{}.tasks", std::process::id());
    /// let path = std::env::temp_dir().join(name);
    /// let mut file = std::fs::File::create(&path)?;
    /// tree.write_to(&mut file)?;
    /// let read = TaskTree::read(&std::fs::read(&path)?)?;
    /// std::fs::remove_file(&path)?;
    /// assert_eq!(read, tree);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read(bytes: &[u8]) -> Result<Self, ReadError> {
        let mut r = Reader { bytes, at: 0 };
        read_signature(&mut r)?;
        let (description, kinds, features) = read_names(&mut r)?;
        let f = features.len();
        let model = read_model(&mut r, f)?;
        let (n, initial) = read_task_counts(&mut r, f)?;
        let mut tree = Self::with_room(description, kinds, features, model, (n, initial));
        for i in 0..n {
            tree.read_task(&mut r, i, n)?;
        }
        read_end(&mut r, n)?;
        tree.first_child = first_children(&tree.parent, initial, n);
        Ok(tree)
    }

    /// Reads task `i` of `n` (every task before it read) from `r`, after the header.
    fn read_task(&mut self, r: &mut Reader<'_>, i: usize, n: usize) -> Result<(), ReadError> {
        let at = |e: Malformed| e.into_error(&format!("task {} of {n}", i + 1));
        let spawned = i.checked_sub(self.initial);
        if spawned.is_some() {
            let previous_parent = self.parent.last().map_or(0, |&p| u64::from(p));
            let p = previous_parent
                .checked_add(r.int().map_err(at)?)
                .filter(|&p| p < i as u64)
                .ok_or_else(|| {
                    ReadError::Corrupt(format!(
                        "task {} of {n} names a parent that does not come before it",
                        i + 1
                    ))
                })?;
            self.parent.push(p as u32);
        }
        let k = r.int().map_err(at)?;
        if k >= self.kinds.len() as u64 {
            return Err(ReadError::Corrupt(format!(
                "task {} of {n} has kind {k}, and there are {} kinds",
                i + 1,
                self.kinds.len()
            )));
        }
        self.kind.push(small::<u8>(k, i, n, "kind")?);
        self.depth.push(small(r.int().map_err(at)?, i, n, "depth")?);
        self.place.push(small(r.int().map_err(at)?, i, n, "place")?);
        for _ in 0..self.features.len() {
            self.work
                .push(small(r.int().map_err(at)?, i, n, "work count")?);
        }
        if let Some(s) = spawned {
            let at_spawn = u16::from_le_bytes(r.array().map_err(at)?);
            // A task's children are spawned as its work goes on, never earlier than an elder
            // sibling.
            let elder = s > 0 && self.parent[s - 1] == self.parent[s];
            if elder && at_spawn < self.spawned_at[s - 1] {
                return Err(ReadError::Corrupt(format!(
                    "task {} of {n} is spawned before its elder sibling",
                    i + 1
                )));
            }
            self.spawned_at.push(at_spawn);
        }
        Ok(())
    }
}

/// The file's signature and version.
fn read_signature(r: &mut Reader<'_>) -> Result<(), ReadError> {
    if r.bytes.len() < MAGIC.len() || &r.bytes[..MAGIC.len()] != MAGIC {
        return Err(ReadError::NotTaskFile);
    }
    r.at = MAGIC.len();
    let version = u32::from_le_bytes(r.array().map_err(|_| ReadError::Truncated {
        part: "header".into(),
    })?);
    if version != VERSION {
        return Err(ReadError::Version(version));
    }
    Ok(())
}

/// What a field of the header that could not be read is reported as.
fn header(e: Malformed) -> ReadError {
    e.into_error("the header")
}

/// The header's description, kinds and features.
fn read_names(r: &mut Reader<'_>) -> Result<(String, Vec<String>, Vec<String>), ReadError> {
    let description = r.string().map_err(header)?;
    let kinds = r.strings().map_err(header)?;
    if kinds.len() > 256 {
        return Err(ReadError::Corrupt(format!(
            "{} kinds; a tree has at most 256",
            kinds.len()
        )));
    }
    let features = r.strings().map_err(header)?;
    let f = features.len();
    if f == 0 || f > MAX_FEATURES {
        return Err(ReadError::Corrupt(format!(
            "{f} features; a tree has 1 to {MAX_FEATURES}"
        )));
    }
    Ok((description, kinds, features))
}

/// The header's cost model of `f` features, and its fit.
fn read_model(r: &mut Reader<'_>, f: usize) -> Result<CostModel, ReadError> {
    let coefficients = r.int().map_err(header)?;
    if coefficients != f as u64 + 1 {
        return Err(ReadError::Corrupt(format!(
            "{coefficients} cost coefficients for {f} features"
        )));
    }
    let per_task = r.float().map_err(header)?;
    let per_unit = (0..f)
        .map(|_| r.float())
        .collect::<Result<Vec<_>, _>>()
        .map_err(header)?;
    let fit = read_fit(r)?;
    let model = CostModel {
        per_task,
        per_unit,
        fit,
    };
    model.check().map_err(ReadError::Corrupt)?;
    check_one_file(&model)?;
    Ok(model)
}

/// The fit after the model's coefficients: a marker, then, if 1, its figures.
fn read_fit(r: &mut Reader<'_>) -> Result<Option<Fit>, ReadError> {
    match r.int().map_err(header)? {
        0 => Ok(None),
        1 => Ok(Some(Fit {
            rows: r.int().map_err(header)?,
            r_squared: r.float().map_err(header)?,
            subtree_median_error: r.float().map_err(header)?,
            subtree_p90_error: r.float().map_err(header)?,
        })),
        other => Err(ReadError::Corrupt(format!(
            "fit marker {other}, neither 0 nor 1"
        ))),
    }
}

/// One file per tree: no coefficient written as −0, no fit figure that is not a number.
fn check_one_file(model: &CostModel) -> Result<(), ReadError> {
    let coefficients = std::iter::once(&model.per_task).chain(&model.per_unit);
    if coefficients.into_iter().any(|c| c.is_sign_negative()) {
        return Err(ReadError::Corrupt("a cost coefficient of −0".into()));
    }
    if let Some(fit) = &model.fit
        && [
            fit.r_squared,
            fit.subtree_median_error,
            fit.subtree_p90_error,
        ]
        .iter()
        .any(|x| !x.is_finite())
    {
        return Err(ReadError::Corrupt("a fit figure that is not finite".into()));
    }
    Ok(())
}

/// The counts of initial tasks and of all tasks, of `f` features each, as `(tasks,
/// initial)`: refused if the rest of the file could not hold that many.
fn read_task_counts(r: &mut Reader<'_>, f: usize) -> Result<(usize, usize), ReadError> {
    let initial = r.int().map_err(header)?;
    let n = r.int().map_err(header)?;
    if n < initial || n >= u64::from(u32::MAX) {
        return Err(ReadError::Corrupt(format!(
            "{n} tasks, {initial} of them initial"
        )));
    }
    // An initial task takes at least 3 + f bytes, a spawned one 6 + f, and the end mark
    // 12: a count beyond what the rest of the file can hold is refused before anything is
    // allocated for it.
    let least = initial * (3 + f as u64) + (n - initial) * (6 + f as u64) + 12;
    if least > (r.bytes.len() - r.at) as u64 {
        return Err(ReadError::Truncated {
            part: format!("its {n} tasks"),
        });
    }
    Ok((n as usize, initial as usize))
}

/// The end mark after the last of `n` tasks, and nothing after it.
fn read_end(r: &mut Reader<'_>, n: usize) -> Result<(), ReadError> {
    let end: [u8; 4] = r
        .array()
        .map_err(|e: Malformed| e.into_error("the end mark"))?;
    let count = u64::from_le_bytes(
        r.array()
            .map_err(|e: Malformed| e.into_error("the end mark"))?,
    );
    if &end != END || count != n as u64 {
        return Err(ReadError::Corrupt(format!(
            "no end mark for {n} tasks after the last task"
        )));
    }
    if r.at != r.bytes.len() {
        return Err(ReadError::Corrupt(format!(
            "{} bytes after the end mark",
            r.bytes.len() - r.at
        )));
    }
    Ok(())
}

/// Per task and one past the end, the number of its first child, of `n` tasks whose first
/// `initial` are initial and the rest have the parents `parent`: children are consecutive and
/// parents never decrease, so it follows from counting.
fn first_children(parent: &[u32], initial: usize, n: usize) -> Vec<u32> {
    let mut first_child = vec![0u32; n + 1];
    for &p in parent {
        first_child[p as usize + 1] += 1;
    }
    first_child[0] = initial as u32;
    for i in 0..n {
        first_child[i + 1] += first_child[i];
    }
    first_child
}

/// Checks what a recorder's tasks can be, whatever their tree: 1 to [`MAX_FEATURES`]
/// features, a cost model for as many, at most 256 kinds, no work counted beyond the
/// features, fewer than 2^32 tasks.
fn check_recorded_sizes(
    kinds: &[String],
    features: &[String],
    model: &CostModel,
    tasks: &[RecordedTask],
) -> Result<(), String> {
    let f = features.len();
    if f == 0 || f > MAX_FEATURES {
        return Err(format!("{f} features; a tree has 1 to {MAX_FEATURES}"));
    }
    if model.per_unit.len() != f {
        return Err(format!(
            "a cost model of {} features for {f} features",
            model.per_unit.len()
        ));
    }
    if kinds.len() > 256 {
        return Err(format!("{} kinds; a tree has at most 256", kinds.len()));
    }
    if let Some(t) = tasks.iter().find(|t| t.work[f..].iter().any(|&w| w != 0)) {
        return Err(format!(
            "task id {} has work counted beyond the {f} features",
            t.id
        ));
    }
    if tasks.len() >= u32::MAX as usize {
        return Err(format!(
            "{} tasks; a tree holds fewer than 2^32",
            tasks.len()
        ));
    }
    Ok(())
}

/// Each recorded task's position in `tasks`, by its id; `Err` for an id recorded twice or a
/// kind without a name.
fn positions(tasks: &[RecordedTask], kinds: &[String]) -> Result<HashMap<u64, usize>, String> {
    let mut position = HashMap::with_capacity(tasks.len());
    for (k, task) in tasks.iter().enumerate() {
        if position.insert(task.id, k).is_some() {
            return Err(format!("task id {} recorded twice", task.id));
        }
        if usize::from(task.kind) >= kinds.len() {
            return Err(format!(
                "task id {} has kind {}, and there are {} kinds",
                task.id,
                task.kind,
                kinds.len()
            ));
        }
    }
    Ok(position)
}

/// Recorded tasks as parents and children, each task named by its position in the recorder's
/// list.
struct Family {
    /// The initial tasks as (position among the initial tasks, task), in that order.
    initial: Vec<(u32, usize)>,
    /// Each task's parent; `usize::MAX` for an initial task.
    parent_of: Vec<usize>,
    /// Every task's children as (spawn index, task) in a flat list grouped by parent, each
    /// parent's in spawn order: the children of `p` are `grouped[start[p]..start[p + 1]]`.
    grouped: Vec<(u32, usize)>,
    start: Vec<usize>,
}

impl Family {
    /// The family of `tasks` (whose positions by id are `position`): each parent's children
    /// counted, then placed, then sorted and checked to be numbered `0, 1, 2, …`, as the
    /// initial tasks are.
    fn of(tasks: &[RecordedTask], position: &HashMap<u64, usize>) -> Result<Self, String> {
        let n = tasks.len();
        let mut initial: Vec<(u32, usize)> = Vec::new();
        let mut parent_of = vec![usize::MAX; n];
        let mut count = vec![0u32; n + 1];
        for (k, task) in tasks.iter().enumerate() {
            if task.parent == NO_PARENT {
                initial.push((task.index, k));
            } else {
                let &p = position.get(&task.parent).ok_or_else(|| {
                    format!(
                        "task id {} names parent {}, which was never recorded",
                        task.id, task.parent
                    )
                })?;
                parent_of[k] = p;
                count[p] += 1;
            }
        }
        let mut start = vec![0usize; n + 1];
        for p in 0..n {
            start[p + 1] = start[p] + count[p] as usize;
        }
        let mut grouped = vec![(0u32, 0usize); start[n]];
        let mut fill = start.clone();
        for (k, &p) in parent_of.iter().enumerate() {
            if p != usize::MAX {
                grouped[fill[p]] = (tasks[k].index, k);
                fill[p] += 1;
            }
        }
        initial.sort_unstable();
        check_positions(
            initial.iter().map(|&(i, _)| i),
            "initial task",
            "initial tasks",
        )?;
        for p in 0..n {
            let children = &mut grouped[start[p]..start[p + 1]];
            children.sort_unstable();
            check_positions(children.iter().map(|&(i, _)| i), "child", "children")
                .map_err(|e| format!("{e} of task id {}", tasks[p].id))?;
        }
        Ok(Self {
            initial,
            parent_of,
            grouped,
            start,
        })
    }

    /// The children of task `k`, in spawn order.
    fn children(&self, k: usize) -> impl Iterator<Item = usize> {
        self.grouped[self.start[k]..self.start[k + 1]]
            .iter()
            .map(|&(_, c)| c)
    }
}

/// The canonical numbering of a family's tasks.
struct Numbering {
    /// The tasks, by position in the recorder's list, in canonical order.
    order: Vec<usize>,
    /// Each task's canonical number, by position in the recorder's list.
    number: Vec<u32>,
    /// Per task in canonical order and one past the end: the number of its first child (the
    /// tree's `first_child`).
    first_child: Vec<u32>,
}

impl Numbering {
    /// Breadth-first from the initial tasks: the canonical order. `Err` when a task is not a
    /// descendant of an initial task (a cycle of parents).
    fn breadth_first(family: &Family) -> Result<Self, String> {
        let n = family.parent_of.len();
        let mut order: Vec<usize> = family.initial.iter().map(|&(_, k)| k).collect();
        let mut number = vec![u32::MAX; n];
        let mut first_child = Vec::with_capacity(n + 1);
        let mut next = 0;
        while next < order.len() {
            let k = order[next];
            number[k] = next as u32;
            first_child.push(order.len() as u32);
            order.extend(family.children(k));
            next += 1;
        }
        first_child.push(order.len() as u32);
        if order.len() != n {
            return Err(format!(
                "{} of the {n} tasks are not descendants of an initial task",
                n - order.len()
            ));
        }
        Ok(Self {
            order,
            number,
            first_child,
        })
    }
}

/// Checks that sorted positions are exactly `0, 1, 2, …`.
fn check_positions(
    positions: impl Iterator<Item = u32>,
    what: &str,
    plural: &str,
) -> Result<(), String> {
    for (expected, got) in positions.enumerate() {
        if got as usize != expected {
            return Err(if (got as usize) < expected {
                format!("two {plural} at position {got}")
            } else {
                format!("no {what} at position {expected}")
            });
        }
    }
    Ok(())
}

/// `done / total` in 65535ths, rounded down; the end for a parent that did no work.
fn fraction(done: u64, total: u64) -> u16 {
    if total == 0 || done >= total {
        return SPAWNED_AT_END;
    }
    (u128::from(done) * u128::from(SPAWNED_AT_END) / u128::from(total)) as u16
}

/// `value` if it fits the field, else the error that names it.
fn small<T: TryFrom<u64>>(value: u64, i: usize, n: usize, field: &str) -> Result<T, ReadError> {
    T::try_from(value).map_err(|_| {
        ReadError::Corrupt(format!(
            "task {} of {n} has {field} {value}, too large",
            i + 1
        ))
    })
}

/// Why a task file could not be read.
///
/// ```
/// use balancers::sim::{ReadError, TaskTree};
///
/// assert_eq!(TaskTree::read(b"not a tree"), Err(ReadError::NotTaskFile));
/// let mut bytes = b"raylbtsk".to_vec();
/// bytes.extend(2u32.to_le_bytes());
/// assert_eq!(TaskTree::read(&bytes), Err(ReadError::Version(2)));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadError {
    /// It does not start with the signature.
    NotTaskFile,
    /// It is of another version of the format.
    Version(u32),
    /// It ends inside `part`.
    Truncated {
        /// The part of the file it ends in.
        part: String,
    },
    /// Its contents contradict the format.
    Corrupt(String),
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::NotTaskFile => {
                write!(f, "not a raylb task file (no \"raylbtsk\" signature)")
            }
            ReadError::Version(v) => write!(
                f,
                "a task file of version {v}; this raylb reads version {VERSION} (record it again)"
            ),
            ReadError::Truncated { part } => {
                write!(f, "the file is cut short: it ends inside {part}")
            }
            ReadError::Corrupt(what) => write!(f, "not a valid task file: {what}"),
        }
    }
}

impl std::error::Error for ReadError {}

/// What went wrong reading one field.
enum Malformed {
    /// The bytes ran out.
    Short,
    /// A number longer than 64 bits, or text that is not UTF-8.
    Bad(&'static str),
}

impl Malformed {
    fn into_error(self, part: &str) -> ReadError {
        match self {
            Malformed::Short => ReadError::Truncated { part: part.into() },
            Malformed::Bad(what) => ReadError::Corrupt(format!("{what} in {part}")),
        }
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn array<const N: usize>(&mut self) -> Result<[u8; N], Malformed> {
        let end = self.at.checked_add(N).ok_or(Malformed::Short)?;
        let slice = self.bytes.get(self.at..end).ok_or(Malformed::Short)?;
        self.at = end;
        Ok(slice.try_into().expect("N bytes"))
    }

    /// An unsigned LEB128 integer, in its shortest form only. Our own rather than a crate's
    /// (`leb128`, `integer-encoding`): those accept a number padded with empty bytes, which
    /// would give one tree many files, and report a short read without the offset this
    /// reader's errors name.
    fn int(&mut self) -> Result<u64, Malformed> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let [byte] = self.array::<1>()?;
            let bits = u64::from(byte & 0x7f);
            if shift == 63 && bits > 1 {
                return Err(Malformed::Bad("a number of more than 64 bits"));
            }
            value |= bits << shift;
            if byte & 0x80 == 0 {
                // A last byte of 0 after others only lengthens the number: refused, so that
                // every tree has one file.
                if byte == 0 && shift > 0 {
                    return Err(Malformed::Bad(
                        "a number written with more bytes than it needs",
                    ));
                }
                return Ok(value);
            }
        }
        Err(Malformed::Bad("a number of more than 64 bits"))
    }

    fn float(&mut self) -> Result<f64, Malformed> {
        Ok(f64::from_le_bytes(self.array()?))
    }

    fn string(&mut self) -> Result<String, Malformed> {
        let len = self.int()?;
        let end = usize::try_from(len)
            .ok()
            .and_then(|len| self.at.checked_add(len))
            .ok_or(Malformed::Short)?;
        let slice = self.bytes.get(self.at..end).ok_or(Malformed::Short)?;
        self.at = end;
        String::from_utf8(slice.to_vec()).map_err(|_| Malformed::Bad("text that is not UTF-8"))
    }

    fn strings(&mut self) -> Result<Vec<String>, Malformed> {
        let count = self.int()?;
        // Each string takes at least its length byte.
        if count > (self.bytes.len() - self.at) as u64 {
            return Err(Malformed::Short);
        }
        (0..count).map(|_| self.string()).collect()
    }
}

struct Writer<'a, W: Write> {
    out: &'a mut W,
}

impl<W: Write> Writer<'_, W> {
    fn bytes(&mut self, b: &[u8]) -> io::Result<()> {
        self.out.write_all(b)
    }

    fn int(&mut self, mut value: u64) -> io::Result<()> {
        let mut buf = [0u8; 10];
        let mut len = 0;
        loop {
            let byte = (value & 0x7f) as u8;
            value >>= 7;
            if value == 0 {
                buf[len] = byte;
                len += 1;
                break;
            }
            buf[len] = byte | 0x80;
            len += 1;
        }
        self.out.write_all(&buf[..len])
    }

    fn float(&mut self, value: f64) -> io::Result<()> {
        self.out.write_all(&value.to_le_bytes())
    }

    fn string(&mut self, s: &str) -> io::Result<()> {
        self.int(s.len() as u64)?;
        self.out.write_all(s.as_bytes())
    }

    fn strings(&mut self, list: &[String]) -> io::Result<()> {
        self.int(list.len() as u64)?;
        list.iter().try_for_each(|s| self.string(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(id: u64, parent: u64, index: u32, work: u32, at: u64, progress: u64) -> RecordedTask {
        let mut w = [0; MAX_FEATURES];
        w[0] = work;
        w[1] = work * 2;
        RecordedTask {
            id,
            parent,
            index,
            kind: u8::from(parent != NO_PARENT),
            depth: 0,
            place: id as u32,
            work: w,
            progress_at_spawn: at,
            progress,
        }
    }

    fn model() -> CostModel {
        CostModel {
            per_task: 1e-7,
            per_unit: vec![1e-8, 2e-8],
            fit: None,
        }
    }

    fn build(tasks: &[RecordedTask]) -> Result<TaskTree, String> {
        TaskTree::from_recorded(
            "test".into(),
            vec!["tile".into(), "ray".into()],
            vec!["boxes".into(), "triangles".into()],
            model(),
            tasks,
        )
    }

    /// Two initial tasks; the second spawns two children, the first of which spawns one.
    fn recorded() -> Vec<RecordedTask> {
        vec![
            task(70, NO_PARENT, 1, 10, 0, 100),
            task(90, 70, 1, 3, 100, 30),
            task(80, 70, 0, 4, 50, 40),
            task(60, NO_PARENT, 0, 5, 0, 50),
            task(100, 80, 0, 1, 40, 10),
        ]
    }

    #[test]
    fn numbers_breadth_first_whatever_the_recorded_order() {
        let tree = build(&recorded()).unwrap();
        // 0: id 60, 1: id 70, 2: id 80 (70's first child), 3: id 90, 4: id 100 (80's child).
        let places: Vec<u32> = (0..tree.len()).map(|i| tree.place(i)).collect();
        assert_eq!(places, vec![60, 70, 80, 90, 100]);
        assert_eq!(tree.initial(), 2);
        assert_eq!(tree.children(0), 2..2);
        assert_eq!(tree.children(1), 2..4);
        assert_eq!(tree.children(2), 4..5);
        assert_eq!(tree.parent(4), Some(2));
        assert_eq!(tree.parent(1), None);
        assert_eq!(tree.work(2), &[4, 8]);
        assert!((tree.spawned_at(2) - 0.5).abs() < 1e-4);
        assert_eq!(tree.spawned_at(3), 1.0);
        let mut shuffled = recorded();
        shuffled.reverse();
        assert_eq!(build(&shuffled).unwrap(), tree);
    }

    #[test]
    fn refuses_what_is_not_a_tree() {
        let mut twice = recorded();
        twice[1].id = 80;
        assert!(build(&twice).unwrap_err().contains("recorded twice"));
        let mut orphan = recorded();
        orphan[4].parent = 5;
        assert!(build(&orphan).unwrap_err().contains("never recorded"));
        let mut gap = recorded();
        gap[1].index = 2;
        assert!(build(&gap).unwrap_err().contains("no child at position 1"));
        let mut same = recorded();
        same[0].index = 0;
        assert!(build(&same).unwrap_err().contains("two initial tasks"));
    }

    #[test]
    fn the_file_reads_back_as_written() {
        let tree = build(&recorded()).unwrap();
        let mut bytes = Vec::new();
        tree.write_to(&mut bytes).unwrap();
        assert_eq!(TaskTree::read(&bytes).unwrap(), tree);
    }

    #[test]
    fn a_cut_short_or_foreign_file_is_refused_by_name() {
        let tree = build(&recorded()).unwrap();
        let mut bytes = Vec::new();
        tree.write_to(&mut bytes).unwrap();
        for len in 0..bytes.len() {
            let err = TaskTree::read(&bytes[..len]).unwrap_err();
            assert!(
                matches!(
                    err,
                    ReadError::NotTaskFile | ReadError::Truncated { .. } | ReadError::Corrupt(_)
                ),
                "{len}: {err}"
            );
        }
        assert!(
            TaskTree::read(&bytes[..bytes.len() - 13])
                .unwrap_err()
                .to_string()
                .contains("cut short")
        );
        let mut other = bytes.clone();
        other[8] = 2;
        assert_eq!(TaskTree::read(&other).unwrap_err(), ReadError::Version(2));
        assert_eq!(
            TaskTree::read(b"P6\n1 1\n255\n").unwrap_err(),
            ReadError::NotTaskFile
        );
        // Version, then the description's length, 4 ("test"), as two bytes instead of one.
        let mut overlong = bytes[..12].to_vec();
        overlong.extend([0x84, 0x00]);
        overlong.extend(&bytes[13..]);
        assert!(
            TaskTree::read(&overlong)
                .unwrap_err()
                .to_string()
                .contains("more bytes than it needs")
        );
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(
            TaskTree::read(&longer)
                .unwrap_err()
                .to_string()
                .contains("after the end mark")
        );
    }
}
