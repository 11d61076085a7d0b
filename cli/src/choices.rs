//! What the command line's names of the balancers' settings stand for.

use balancers::{Assignment, DequeKind, StealAmount, VictimPolicy};
use experiments::sim::Family;

use crate::cli::{AssignName, BalancerName, DequeName, StealName, VictimName};

impl From<BalancerName> for Family {
    fn from(name: BalancerName) -> Self {
        match name {
            BalancerName::Static => Family::Static,
            BalancerName::Counter => Family::Counter,
            BalancerName::Stealing => Family::Stealing,
            BalancerName::Rayon => Family::Rayon,
            BalancerName::CudaManaged => Family::CudaManaged,
        }
    }
}

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
