//! The cost model: a price table kept as data, each price with its source, and the report
//! that prices metered resource-hours. The lab's base (control plane, NAT gateway, two
//! t3.medium) comes to about $6/day, as the seed's cost guard says.

use serde::Serialize;

/// One price: what is billed, per hour, and where the number comes from.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Price {
    pub kind: &'static str,
    pub usd_per_hour: f64,
    pub source: &'static str,
}

/// ap-northeast-2 (Seoul), on demand, Linux. Where the seed states a daily cost, its number
/// is used, so the twin's base reproduces the seed; check current list prices before
/// trusting the GPU line for a budget.
pub const PRICES: [Price; 4] = [
    Price {
        kind: "eks-cluster",
        usd_per_hour: 0.10,
        source: "Amazon EKS pricing: $0.10 per cluster-hour (standard support); seed 000: ~$2.4/day",
    },
    Price {
        kind: "nat-gateway",
        usd_per_hour: 1.6 / 24.0,
        source: "seed 000 cost guard: NAT gateway ~$1.6/day",
    },
    Price {
        kind: "t3.medium",
        usd_per_hour: 1.0 / 24.0,
        source: "seed 000 cost guard: 2 x t3.medium ~$2.0/day",
    },
    Price {
        kind: "g5.xlarge",
        usd_per_hour: 1.006,
        source: "EC2 on-demand list price in us-east-1 (the seed gives none; Seoul's is higher)",
    },
];

/// The metered kind of a hybrid node: `eks-hybrid-node/32vcpu` for a host of 32 vCPUs.
pub fn hybrid_node_kind(vcpus: u32) -> String {
    format!("{HYBRID_NODE_KIND}{vcpus}vcpu")
}

const HYBRID_NODE_KIND: &str = "eks-hybrid-node/";

/// The price of a kind: from the table, or for a hybrid node its vCPUs at the first monthly
/// tier's rate (seed 004's $0.020 per vCPU-hour: a lab of a few hosts never leaves the first
/// 576,000 vCPU-hours of a month; `cost::hybrid` prices a whole fleet across the tiers).
pub fn price(kind: &str) -> Option<Price> {
    if let Some(vcpus) = kind
        .strip_prefix(HYBRID_NODE_KIND)
        .and_then(|rest| rest.strip_suffix("vcpu"))
        .and_then(|n| n.parse::<u32>().ok())
    {
        return Some(Price {
            kind: "eks-hybrid-node",
            usd_per_hour: f64::from(vcpus) * super::hybrid_pricing::TIERS[0].usd,
            source: "seed 004: EKS Hybrid Nodes, $0.020 per vCPU-hour for a month's first 576,000 vCPU-hours",
        });
    }
    // The lab's kinds keep the seed's numbers; every other GPU type is the catalog's.
    PRICES.iter().find(|p| p.kind == kind).copied().or_else(|| {
        let row = super::gpu_catalog::find(kind)?;
        let (usd_per_hour, region) = row.lab_price()?;
        Some(Price {
            kind: row.instance_type,
            usd_per_hour,
            source: if region == "ap-northeast-2" {
                "GPU catalog (src/lab/gpu_catalog_rows.rs): EC2 on-demand, ap-northeast-2"
            } else {
                "GPU catalog (src/lab/gpu_catalog_rows.rs): EC2 on-demand, us-east-1 (not offered in ap-northeast-2)"
            },
        })
    })
}

/// A metered resource: billed from `started_s` to `stopped_s` (or now), in virtual seconds.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
pub struct Usage {
    pub resource: String,
    pub kind: String,
    pub started_s: f64,
    pub stopped_s: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CostLine {
    pub resource: String,
    pub kind: String,
    pub hours: f64,
    pub usd_per_hour: f64,
    pub usd: f64,
    pub running: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CostReport {
    pub currency: &'static str,
    /// Virtual hours the meter covers.
    pub hours: f64,
    pub lines: Vec<CostLine>,
    pub total_usd: f64,
    /// What a day costs at the rate of what runs now.
    pub daily_rate_usd: f64,
    /// Kinds with no price in the table (billed at 0 here).
    pub unpriced: Vec<String>,
}

fn round(value: f64, places: i32) -> f64 {
    let scale = 10f64.powi(places);
    (value * scale).round() / scale
}

/// Prices the meter's records at `now_s`.
pub fn report(records: &[Usage], now_s: f64) -> CostReport {
    let mut lines = Vec::new();
    let mut unpriced = Vec::new();
    let mut daily = 0.0;
    for record in records {
        let end = record.stopped_s.unwrap_or(now_s).min(now_s);
        let hours = ((end - record.started_s) / 3600.0).max(0.0);
        let rate = match price(&record.kind) {
            Some(p) => p.usd_per_hour,
            None => {
                if !unpriced.contains(&record.kind) {
                    unpriced.push(record.kind.clone());
                }
                0.0
            }
        };
        let running = record.stopped_s.is_none();
        if running {
            daily += rate * 24.0;
        }
        lines.push(CostLine {
            resource: record.resource.clone(),
            kind: record.kind.clone(),
            hours: round(hours, 4),
            usd_per_hour: round(rate, 4),
            usd: round(hours * rate, 4),
            running,
        });
    }
    let total = lines.iter().map(|l| l.usd).sum::<f64>();
    CostReport {
        currency: "USD",
        hours: round(now_s / 3600.0, 4),
        lines,
        total_usd: round(total, 4),
        daily_rate_usd: round(daily, 2),
        unpriced,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(resource: &str, kind: &str, started_s: f64, stopped_s: Option<f64>) -> Usage {
        Usage {
            resource: resource.into(),
            kind: kind.into(),
            started_s,
            stopped_s,
        }
    }

    #[test]
    fn a_hybrid_node_costs_its_vcpus_at_the_first_tier() {
        let report = report(&[usage("mi-1", &hybrid_node_kind(32), 0.0, None)], 3600.0);
        assert_eq!(report.lines[0].usd_per_hour, 0.64);
        assert_eq!(report.total_usd, 0.64);
        assert!(report.unpriced.is_empty());
        assert!(price("eks-hybrid-node/xvcpu").is_none());
    }

    #[test]
    fn the_lab_base_is_about_six_dollars_a_day() {
        let records = [
            usage("myeks5w", "eks-cluster", 0.0, None),
            usage("nat-1", "nat-gateway", 0.0, None),
            usage("i-1", "t3.medium", 0.0, None),
            usage("i-2", "t3.medium", 0.0, None),
        ];
        let day = report(&records, 86_400.0);
        assert_eq!(day.daily_rate_usd, 6.0);
        assert!((day.total_usd - 6.0).abs() < 0.001, "{}", day.total_usd);
    }

    #[test]
    fn stopped_resources_bill_until_they_stop_and_leave_the_rate() {
        let records = [usage("i-gpu", "g5.xlarge", 3600.0, Some(5400.0))];
        let r = report(&records, 7200.0);
        assert_eq!(r.lines[0].hours, 0.5);
        assert_eq!(r.lines[0].usd, 0.503);
        assert_eq!(r.daily_rate_usd, 0.0);
    }

    #[test]
    fn unknown_kinds_are_named_not_guessed() {
        let r = report(&[usage("i-x", "trn1.32xlarge", 0.0, None)], 3600.0);
        assert_eq!(r.unpriced, vec!["trn1.32xlarge".to_string()]);
        assert_eq!(r.total_usd, 0.0);
    }

    #[test]
    fn catalog_types_are_priced_in_seoul_or_else_us_east_1_saying_which() {
        let p4d = price("p4d.24xlarge").expect("priced");
        assert_eq!(p4d.usd_per_hour, 30.41028);
        assert!(p4d.source.contains("ap-northeast-2"), "{}", p4d.source);
        // p5.48xlarge has no Seoul price in the sources: us-east-1's, said so.
        let p5 = price("p5.48xlarge").expect("priced");
        assert_eq!(p5.usd_per_hour, 55.04);
        assert!(p5.source.contains("us-east-1"), "{}", p5.source);
        // The lab's own kinds keep the seed's numbers.
        assert_eq!(price("g5.xlarge").map(|p| p.usd_per_hour), Some(1.006));
        let r = report(&[usage("i-x", "p5.48xlarge", 0.0, None)], 1800.0);
        assert_eq!(r.total_usd, 27.52);
    }
}
