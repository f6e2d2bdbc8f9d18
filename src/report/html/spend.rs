//! What the resources the run started cost over the run: each resource's spend stacked on
//! the run's clock as an inline SVG, and the same in a table (the numbers read without it).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::escape::html;
use crate::report::{Report, readable_millis};

const W: f64 = 720.0;
const H: f64 = 160.0;
const COLORS: [&str; 6] = [
    "#0969da", "#8250df", "#bc4c00", "#1a7f37", "#cf222e", "#57606a",
];

/// Each resource's dollars spent by `at_ms`, from its rates (each holds until the next).
fn spent_by(report: &Report, resource: &str, at_ms: u64) -> f64 {
    let rates: Vec<_> = report
        .spend
        .iter()
        .filter(|r| r.resource == resource)
        .collect();
    let mut total = 0.0;
    for (i, rate) in rates.iter().enumerate() {
        let until = rates
            .get(i + 1)
            .map_or(u64::MAX, |next| next.from_ms)
            .min(at_ms);
        if until > rate.from_ms {
            total += rate.usd_per_hour * (until - rate.from_ms) as f64 / 3_600_000.0;
        }
    }
    total
}

pub(super) fn spend(report: &Report) -> String {
    if report.spend.is_empty() {
        return String::new();
    }
    let end = report.virtual_ms.max(1);
    let resources = resource_kinds(report);
    let total = resources
        .keys()
        .map(|r| spent_by(report, r, end))
        .sum::<f64>();
    let svg = chart(report, &resources, end, total);
    let mut out = format!(
        "<figure id=\"spend-chart\">{svg}<figcaption>Spend over the run, by resource (on its clock)</figcaption></figure>\n"
    );
    out.push_str(&table(report, &resources, end, total));
    out
}

/// Each resource by name, with the last kind a rate named for it.
fn resource_kinds(report: &Report) -> BTreeMap<&str, &str> {
    let mut resources: BTreeMap<&str, &str> = BTreeMap::new();
    for rate in &report.spend {
        let kind = resources.entry(rate.resource.as_str()).or_insert("");
        if !rate.kind.is_empty() {
            *kind = rate.kind.as_str();
        }
    }
    resources
}

/// The times where some rate changes, and the start and end of the run.
fn change_times(report: &Report, end: u64) -> Vec<u64> {
    let mut times: Vec<u64> = report.spend.iter().map(|r| r.from_ms.min(end)).collect();
    times.extend([0, end]);
    times.sort_unstable();
    times.dedup();
    times
}

/// The chart's axes: the run's time across, dollars up to `top`.
struct Scale {
    end: u64,
    top: f64,
}

impl Scale {
    fn point(&self, ms: u64, usd: f64) -> String {
        let x = 40.0 + (W - 50.0) * ms as f64 / self.end as f64;
        let y = H - 20.0 - (H - 30.0) * usd / self.top;
        format!("{x:.1},{y:.1}")
    }
}

/// Each resource's spend as a band stacked on those before it, and the axes' labels.
fn chart(report: &Report, resources: &BTreeMap<&str, &str>, end: u64, total: f64) -> String {
    let times = change_times(report, end);
    let scale = Scale {
        end,
        top: if total > 0.0 { total } else { 1.0 },
    };
    let mut svg = format!(
        "<svg class=\"spend\" viewBox=\"0 0 {W} {H}\" width=\"{W}\" height=\"{H}\" role=\"img\" aria-label=\"spend over the run\">\
         <title>What the resources the run started cost over its {} (${total:.4} in all)</title>",
        readable_millis(end)
    );
    let mut below: Vec<f64> = vec![0.0; times.len()];
    for (n, resource) in resources.keys().enumerate() {
        let above: Vec<f64> = times
            .iter()
            .zip(&below)
            .map(|(t, b)| b + spent_by(report, resource, *t))
            .collect();
        let _ = write!(
            svg,
            "<polygon points=\"{}\" fill=\"{}\" fill-opacity=\"0.75\"><title>{}: ${:.4}</title></polygon>",
            outline(&scale, &times, &below, &above),
            COLORS[n % COLORS.len()],
            html(resource),
            spent_by(report, resource, end)
        );
        below = above;
    }
    let _ = write!(
        svg,
        "<text class=\"axis\" x=\"40\" y=\"{}\">0</text><text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\
         <text class=\"axis\" x=\"2\" y=\"14\">${total:.2}</text></svg>",
        H - 4.0,
        W - 10.0,
        H - 4.0,
        readable_millis(end)
    );
    svg
}

/// A band's outline: along its top from the run's start, then back along its bottom.
fn outline(scale: &Scale, times: &[u64], below: &[f64], above: &[f64]) -> String {
    let top = times.iter().zip(above).map(|(t, v)| scale.point(*t, *v));
    let bottom = times
        .iter()
        .zip(below)
        .rev()
        .map(|(t, v)| scale.point(*t, *v));
    top.chain(bottom).collect::<Vec<String>>().join(" ")
}

/// The same spend as a table: each resource's, then all of it.
fn table(report: &Report, resources: &BTreeMap<&str, &str>, end: u64, total: f64) -> String {
    let mut out = String::from(
        "<table class=\"spend\"><thead><tr><th>resource</th><th>kind</th><th>spent</th></tr></thead><tbody>\n",
    );
    for (resource, kind) in resources {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>${:.4}</td></tr>",
            html(resource),
            html(kind),
            spent_by(report, resource, end)
        );
    }
    let _ = writeln!(
        out,
        "<tr><th>all</th><td></td><th>${total:.4}</th></tr></tbody></table>"
    );
    out
}
