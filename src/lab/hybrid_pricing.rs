//! EKS Hybrid Nodes pricing (seed 004): nodes are billed per vCPU-hour in monthly tiers that
//! get cheaper with use, plus the cluster's own hourly fee. A calculation model, as the seed
//! says, not a bill.

use serde::Serialize;

/// A monthly tier: `vcpu_hours` of use (None: all beyond) at `usd` per vCPU-hour.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Tier {
    pub vcpu_hours: Option<f64>,
    pub usd: f64,
}

/// Seed 004's table: the first 576,000 vCPU-hours of a month at $0.020, the next 576,000 at
/// $0.014, the next 4,608,000 at $0.010, the next 5,760,000 at $0.008, beyond 11,520,000
/// at $0.006.
pub const TIERS: [Tier; 5] = [
    Tier {
        vcpu_hours: Some(576_000.0),
        usd: 0.020,
    },
    Tier {
        vcpu_hours: Some(576_000.0),
        usd: 0.014,
    },
    Tier {
        vcpu_hours: Some(4_608_000.0),
        usd: 0.010,
    },
    Tier {
        vcpu_hours: Some(5_760_000.0),
        usd: 0.008,
    },
    Tier {
        vcpu_hours: None,
        usd: 0.006,
    },
];

/// A cluster on standard support: $0.10 an hour (the seed's assumption).
pub const CLUSTER_USD_PER_HOUR: f64 = 0.10;

/// What is priced: `nodes` of `vcpus_per_node` for `hours_per_month`, the same month
/// `months` times, with `clusters` clusters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HybridUsage {
    pub nodes: u64,
    pub vcpus_per_node: u64,
    pub hours_per_month: f64,
    pub months: u64,
    pub clusters: u64,
}

/// One tier's share of a month.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TierUse {
    pub usd_per_vcpu_hour: f64,
    pub vcpu_hours: f64,
    pub usd: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HybridCost {
    pub vcpu_hours_per_month: f64,
    /// How a month's vCPU-hours fall into the tiers.
    pub tiers: Vec<TierUse>,
    pub nodes_usd_per_month: f64,
    /// Nodes over all the months.
    pub nodes_usd: f64,
    /// Cluster fees over all the months.
    pub clusters_usd: f64,
    pub total_usd: f64,
}

fn cents(usd: f64) -> f64 {
    (usd * 100.0).round() / 100.0
}

pub fn hybrid_cost(usage: &HybridUsage) -> HybridCost {
    let vcpu_hours = (usage.nodes * usage.vcpus_per_node) as f64 * usage.hours_per_month;
    let mut left = vcpu_hours;
    let mut tiers = Vec::new();
    for tier in TIERS {
        if left <= 0.0 {
            break;
        }
        let used = tier.vcpu_hours.map_or(left, |size| left.min(size));
        tiers.push(TierUse {
            usd_per_vcpu_hour: tier.usd,
            vcpu_hours: used,
            usd: cents(used * tier.usd),
        });
        left -= used;
    }
    let per_month = cents(tiers.iter().map(|t| t.usd).sum());
    let months = usage.months as f64;
    let nodes_usd = cents(per_month * months);
    let clusters_usd =
        cents(usage.clusters as f64 * CLUSTER_USD_PER_HOUR * usage.hours_per_month * months);
    HybridCost {
        vcpu_hours_per_month: vcpu_hours,
        tiers,
        nodes_usd_per_month: per_month,
        nodes_usd,
        clusters_usd,
        total_usd: cents(nodes_usd + clusters_usd),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn year(nodes: u64, clusters: u64) -> HybridCost {
        hybrid_cost(&HybridUsage {
            nodes,
            vcpus_per_node: 32,
            hours_per_month: 730.0,
            months: 12,
            clusters,
        })
    }

    #[test]
    fn the_seeds_table_exactly() {
        // nodes, vCPU-hours a month, a year of nodes, and with one cluster (seed 004).
        for (nodes, vcpu_hours, nodes_usd, with_cluster) in [
            (10, 233_600.0, 56_064.0, 56_940.0),
            (50, 1_168_000.0, 236_928.0, 237_804.0),
            (100, 2_336_000.0, 377_088.0, 377_964.0),
        ] {
            assert_eq!(year(nodes, 0).vcpu_hours_per_month, vcpu_hours);
            assert_eq!(year(nodes, 0).total_usd, nodes_usd, "{nodes} nodes");
            assert_eq!(
                year(nodes, 1).total_usd,
                with_cluster,
                "{nodes} nodes and a cluster"
            );
        }
    }

    #[test]
    fn tiers_fill_in_order_and_the_last_takes_the_rest() {
        let cost = year(1000, 0); // 23,360,000 vCPU-hours a month
        let used: Vec<f64> = cost.tiers.iter().map(|t| t.vcpu_hours).collect();
        assert_eq!(
            used,
            [576_000.0, 576_000.0, 4_608_000.0, 5_760_000.0, 11_840_000.0]
        );
        assert!(year(0, 1).tiers.is_empty());
        assert_eq!(year(0, 1).total_usd, 876.0);
    }
}
