//! How NCCL's bus bandwidth falls as a collective spans more nodes, from one published dataset
//! measured the same way at every node count: p5.48xlarge on SageMaker HyperPod, NCCL 2.27.7,
//! aws-ofi-nccl 1.16.3, nccl-tests 2.16.9, 2 to 32 nodes (crazyguitar/aws-gpu-communication-
//! benchmark@a77f70db668034b75db9a430b3cd718f59a6c232, data/nccl_all_reduce.csv,
//! nccl_all_gather.csv, nccl_alltoall.csv; out-of-place busbw at the largest size measured:
//! 8 GiB for all_reduce, 2 GiB for the others). A figure for n nodes is the one published for
//! the largest count at most n; past 32 nodes nothing is published, so the 32-node figure
//! holds (said in `source`) rather than a guess.

/// The collectives the dataset measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Collective {
    AllReduce,
    AllGather,
    AllToAll,
}

impl Collective {
    /// Every collective, in the order a run takes them.
    pub const ALL: [Self; 3] = [Self::AllReduce, Self::AllGather, Self::AllToAll];

    /// The name scripts and the dataset's files use (`nccl_all_gather.csv`).
    pub fn name(self) -> &'static str {
        match self {
            Self::AllReduce => "all_reduce",
            Self::AllGather => "all_gather",
            Self::AllToAll => "alltoall",
        }
    }

    /// The nccl-tests binary that measures it (NVIDIA/nccl-tests src/Makefile builds
    /// `<name>_perf` from each `<name>.cu`).
    pub fn program(self) -> &'static str {
        match self {
            Self::AllReduce => "all_reduce_perf",
            Self::AllGather => "all_gather_perf",
            Self::AllToAll => "alltoall_perf",
        }
    }

    /// The collective a name or a binary names.
    pub fn of_name(name: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|c| c.name() == name || c.program() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|c| c.name()).collect();
                format!(
                    "collective `{name}` is not one the at-scale figures cover: one of {}",
                    names.join(", ")
                )
            })
    }

    /// Whether nccl-tests prints a reduction op for it (its RunTest passes "none" otherwise).
    pub fn reduces(self) -> bool {
        self == Self::AllReduce
    }

    /// busbw by node count, GB/s.
    fn by_nodes(self) -> &'static [(u32, f64)] {
        match self {
            Self::AllReduce => &[
                (2, 477.71),
                (4, 356.99),
                (8, 355.36),
                (16, 356.27),
                (32, 321.10),
            ],
            Self::AllGather => &[
                (2, 328.58),
                (4, 330.92),
                (8, 293.71),
                (16, 265.15),
                (32, 262.77),
            ],
            Self::AllToAll => &[(2, 79.25), (4, 54.07), (8, 49.63), (16, 44.23), (32, 40.78)],
        }
    }
}

/// The instance types the dataset speaks for: p5.48xlarge measured; p5e and p5en borrow it
/// (the same NVLink 4 baseboard and 3200 Gbps of EFA), as nccl_figures does.
const P5_FAMILY: &[&str] = &["p5.48xlarge", "p5e.48xlarge", "p5en.48xlarge"];

const SOURCE: &str = "p5.48xlarge, 2-32 nodes, out-of-place busbw: crazyguitar/aws-gpu-communication-benchmark@a77f70db668034b75db9a430b3cd718f59a6c232 data/nccl_*.csv (NCCL 2.27.7, aws-ofi-nccl 1.16.3)";

/// The published busbw of `collective` across `nodes` nodes of `instance_type` over EFA, and
/// where it comes from; None for a type or count (under 2) the dataset does not cover.
pub fn expected(instance_type: &str, collective: Collective, nodes: u32) -> Option<(f64, String)> {
    if nodes < 2 || !P5_FAMILY.contains(&instance_type) {
        return None;
    }
    let table = collective.by_nodes();
    let (count, busbw) = table.iter().rev().find(|(count, _)| *count <= nodes)?;
    let mut source = format!("{count} nodes: {SOURCE}");
    if instance_type != "p5.48xlarge" {
        source = format!("borrowed from p5.48xlarge ({source})");
    }
    let last = table.last().map_or(0, |(count, _)| *count);
    if nodes > last {
        source = format!("{source}; nothing is published past {last} nodes, so its figure holds");
    }
    Some((*busbw, source))
}

/// What `nodes` nodes running `collective` get of what an all-reduce between two gets, for the
/// twin's pace (whose base is the two-node all-reduce figure, lab/nccl_figures.rs): each
/// collective then runs at its own published figure. 1 where nothing is published.
pub fn share_of_two_nodes(instance_type: &str, collective: Collective, nodes: u32) -> f64 {
    let two = expected(instance_type, Collective::AllReduce, 2);
    match (two, expected(instance_type, collective, nodes)) {
        (Some((two, _)), Some((here, _))) => here / two,
        _ => 1.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_programs_round_trip_and_others_are_refused() {
        for c in Collective::ALL {
            assert_eq!(Collective::of_name(c.name()), Ok(c));
            assert_eq!(Collective::of_name(c.program()), Ok(c));
        }
        let refused = Collective::of_name("broadcast").unwrap_err();
        assert!(refused.contains("`broadcast`"), "{refused}");
        assert!(
            refused.contains("all_reduce, all_gather, alltoall"),
            "{refused}"
        );
    }

    #[test]
    fn figures_fall_with_the_node_count_as_published_and_hold_past_32() {
        let at = |n| expected("p5.48xlarge", Collective::AllReduce, n).map(|(b, _)| b);
        assert_eq!(at(2), Some(477.71));
        assert_eq!(at(3), Some(477.71));
        assert_eq!(at(4), Some(356.99));
        assert_eq!(at(32), Some(321.10));
        let (busbw, source) = expected("p5.48xlarge", Collective::AllReduce, 256).unwrap();
        assert_eq!(busbw, 321.10);
        assert!(
            source.contains("nothing is published past 32 nodes"),
            "{source}"
        );
        assert!(expected("p5.48xlarge", Collective::AllReduce, 1).is_none());
        assert!(expected("p4d.24xlarge", Collective::AllReduce, 8).is_none());
        assert!(
            expected("p5en.48xlarge", Collective::AllToAll, 8)
                .unwrap()
                .1
                .starts_with("borrowed")
        );
        let share = share_of_two_nodes("p5.48xlarge", Collective::AllReduce, 32);
        assert!((share - 321.10 / 477.71).abs() < 1e-12);
        let share = share_of_two_nodes("p5.48xlarge", Collective::AllToAll, 4);
        assert!((share - 54.07 / 477.71).abs() < 1e-12);
        assert_eq!(
            share_of_two_nodes("g5.xlarge", Collective::AllReduce, 8),
            1.0
        );
    }
}
