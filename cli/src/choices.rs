//! What the command line's names of the balancers' settings stand for.

use balancers::{Assignment, DequeKind, StealAmount, VictimPolicy};

use crate::cli::{AssignName, DequeName, StealName, VictimName};

impl From<AssignName> for Assignment {
    fn from(name: AssignName) -> Self {
        match name {
            AssignName::Interleaved => Assignment::Interleaved,
            AssignName::Blocked => Assignment::Blocked,
        }
    }
}

impl From<DequeName> for DequeKind {
    fn from(name: DequeName) -> Self {
        match name {
            DequeName::Abp => DequeKind::Abp,
            DequeName::Locked => DequeKind::Locked,
        }
    }
}

impl From<VictimName> for VictimPolicy {
    fn from(name: VictimName) -> Self {
        match name {
            VictimName::Random => VictimPolicy::Random,
            VictimName::Sample => VictimPolicy::Sample,
            VictimName::Set => VictimPolicy::Set,
        }
    }
}

impl From<StealName> for StealAmount {
    fn from(name: StealName) -> Self {
        match name {
            StealName::One => StealAmount::One,
            StealName::Half => StealAmount::Half,
        }
    }
}
