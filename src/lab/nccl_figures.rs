//! Published nccl-tests `all_reduce_perf` bus bandwidths per instance type, each with its
//! source: inside one node (NVLink, or PCIe through host memory) and across two nodes over EFA.
//! The twin paces its all-reduce runs by them and a drill's floor derives from them. A type
//! without a published figure borrows the figure of the type named in `source`, which says so.

use super::gpu_catalog::GpuInstanceType;

/// One bus bandwidth, GB/s, at the message size it was read at.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figure {
    pub busbw_gbps: f64,
    pub at_bytes: u64,
    pub source: &'static str,
}

/// The figures of the types in `instance_types`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NcclFigures {
    pub instance_types: &'static [&'static str],
    /// Every GPU of one node in one all-reduce.
    pub in_node: Option<Figure>,
    /// Two nodes, every GPU of each, over EFA.
    pub two_nodes_efa: Option<Figure>,
}

const GIB: u64 = 1 << 30;

const P5_EFA: Figure = Figure {
    busbw_gbps: 487.09,
    at_bytes: 16 * GIB,
    source: "2x p5.48xlarge over EFA, 16 GiB: aws-samples/awsome-distributed-training@7217859f67bc693c52ff175ccc6082c41dbd7a1b:micro-benchmarks/nccl-tests/README.md (Results)",
};

const A100_IN_NODE: Figure = Figure {
    busbw_gbps: 230.77,
    at_bytes: GIB,
    source: "1x p4d.24xlarge, 8x A100 over NVLink, 1 GiB: NVIDIA/nccl#527 (p4dn scaling table)",
};

const L40S_PCIE_IN_NODE: Figure = Figure {
    busbw_gbps: 5.57,
    at_bytes: 32 << 20,
    source: "4x L40S on one EC2 host (ip-172-31-47-40) through host memory, 32 MiB: littlemex/zenn@d73d230a articles/009bb138491dd1.md (tests/fixtures/real/nccl_all_reduce_perf_l40s_x4_single_node_nccltests2.17.9.txt)",
};

pub const FIGURES: &[NcclFigures] = &[
    NcclFigures {
        instance_types: &["p5.48xlarge"],
        in_node: Some(Figure {
            busbw_gbps: 480.0,
            at_bytes: 8 * GIB,
            source: "8x H100 in one node over NVLink: \"a peak busBw of ~480GB/s\" at large sizes, NVIDIA/nccl-tests#212 (NCCL's maintainer)",
        }),
        two_nodes_efa: Some(P5_EFA),
    },
    NcclFigures {
        instance_types: &["p5e.48xlarge", "p5en.48xlarge"],
        in_node: Some(Figure {
            busbw_gbps: 475.0,
            at_bytes: 4 * GIB,
            source: "8x H200 in one node over NVLink 4: \"peak bandwidth of 475 GB/s\" up to 4 GiB, NVIDIA/nccl-tests#272",
        }),
        two_nodes_efa: Some(Figure {
            source: "borrowed from p5.48xlarge (same NVLink 4 baseboard and 3200 Gbps of EFA; no published 2-node p5e/p5en table): 2x p5.48xlarge over EFA, 16 GiB, aws-samples/awsome-distributed-training@7217859f README",
            ..P5_EFA
        }),
    },
    NcclFigures {
        instance_types: &["p4d.24xlarge"],
        in_node: Some(A100_IN_NODE),
        two_nodes_efa: Some(Figure {
            busbw_gbps: 76.21,
            at_bytes: GIB,
            source: "2x p4d.24xlarge over EFA, 1 GiB (aws-ofi-nccl 1.13.2-aws, NCCL 2.23.4): AWS Deep Learning AMI developer guide, Using EFA on the DLAMI",
        }),
    },
    NcclFigures {
        instance_types: &["p4de.24xlarge"],
        in_node: Some(Figure {
            source: "borrowed from p4d.24xlarge (the same 8x A100 NVLink 3 baseboard with 80 GB GPUs): NVIDIA/nccl#527",
            ..A100_IN_NODE
        }),
        two_nodes_efa: Some(Figure {
            busbw_gbps: 78.33,
            at_bytes: 2 * GIB,
            source: "2x p4de.24xlarge over EFA, 2 GiB: aws-samples/awsome-distributed-training@7217859f67bc693c52ff175ccc6082c41dbd7a1b:micro-benchmarks/nccl-tests/README.md (Results)",
        }),
    },
    NcclFigures {
        instance_types: &["g6e.12xlarge"],
        in_node: Some(L40S_PCIE_IN_NODE),
        two_nodes_efa: None,
    },
];

/// The PCIe GPUs of a multi-GPU g type, with no figure of their own (and an NVLink type's GPUs
/// with their links down), go through host memory like the measured 4x L40S host: its figure,
/// said to be borrowed.
pub const THROUGH_HOST_MEMORY: Figure = Figure {
    source: "borrowed from 4x L40S on a g6e.12xlarge (no published figure for this type; its GPUs, like those, have no NVLink and reach each other through host memory): littlemex/zenn@d73d230a articles/009bb138491dd1.md",
    ..L40S_PCIE_IN_NODE
};

fn figures_of(instance_type: &str) -> Option<&'static NcclFigures> {
    FIGURES
        .iter()
        .find(|f| f.instance_types.contains(&instance_type))
}

/// The bus bandwidth of an all-reduce over every GPU of one node of `row`; `None` for a type
/// with NVLink and no published figure (p6-b200: the twin does not guess one).
pub fn in_node(row: &GpuInstanceType) -> Option<Figure> {
    if let Some(figure) = figures_of(row.instance_type).and_then(|f| f.in_node) {
        return Some(figure);
    }
    (!row.gpu.has_nvlink()).then_some(THROUGH_HOST_MEMORY)
}

/// The bus bandwidth of an all-reduce across two nodes of `row` over EFA, where published.
pub fn two_nodes_efa(row: &GpuInstanceType) -> Option<Figure> {
    figures_of(row.instance_type).and_then(|f| f.two_nodes_efa)
}

/// What NCCL's socket transport reaches between two nodes of `row`: the lab's g5.xlarge
/// measure (1.1 GB/s of bus bandwidth on its 10 Gbps ENA, 88 % of line rate) applied to the
/// line rate of one of the type's network cards (sockets use the pod's one `eth0`). No
/// published socket figure exists for p4d or p5; this is the model, not a measurement.
pub fn socket_busbw_gbps(row: &GpuInstanceType) -> f64 {
    const LAB_EFFICIENCY: f64 = 1.1 / 1.25;
    let gbits = line_rate_gbits(row.network_performance) / f64::from(row.network_cards.max(1));
    gbits / 8.0 * LAB_EFFICIENCY
}

/// `Up to 10 Gigabit` -> 10, `3200 Gigabit` -> 3200, `4x 100 Gigabit` -> 400.
pub fn line_rate_gbits(network_performance: &str) -> f64 {
    let words: Vec<&str> = network_performance.split_whitespace().collect();
    let mut factor = 1.0;
    let mut rate = None;
    for word in words {
        if let Some(times) = word.strip_suffix('x').and_then(|n| n.parse::<f64>().ok()) {
            factor = times;
        } else if let Ok(number) = word.parse::<f64>() {
            rate.get_or_insert(number);
        }
    }
    rate.map_or(10.0, |r| r * factor)
}

#[cfg(test)]
mod tests {
    use super::super::gpu_catalog::find;
    use super::*;

    #[test]
    fn every_figure_names_its_source_and_its_types_are_in_the_catalog() {
        for figures in FIGURES {
            for name in figures.instance_types {
                assert!(find(name).is_some(), "{name}");
            }
            for figure in [figures.in_node, figures.two_nodes_efa]
                .into_iter()
                .flatten()
            {
                assert!(!figure.source.is_empty() && figure.busbw_gbps > 0.0);
            }
        }
    }

    #[test]
    fn the_training_types_have_figures_and_sockets_are_far_below_efa() {
        let p5 = find("p5.48xlarge").unwrap();
        assert_eq!(two_nodes_efa(p5).unwrap().busbw_gbps, 487.09);
        assert_eq!(in_node(p5).unwrap().busbw_gbps, 480.0);
        assert!(
            socket_busbw_gbps(p5) * 40.0 < 487.09,
            "{}",
            socket_busbw_gbps(p5)
        );
        let g5 = find("g5.xlarge").unwrap();
        assert!((socket_busbw_gbps(g5) - 1.1).abs() < 1e-9);
        assert_eq!(line_rate_gbits("4x 100 Gigabit"), 400.0);
        assert_eq!(line_rate_gbits("Up to 25 Gigabit"), 25.0);
        assert!(in_node(find("p6-b200.48xlarge").unwrap()).is_none());
        assert!(
            in_node(find("g5.48xlarge").unwrap())
                .unwrap()
                .source
                .starts_with("borrowed")
        );
    }
}
