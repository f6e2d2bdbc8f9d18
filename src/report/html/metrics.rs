//! The run's metrics: value, bounds and baseline in a table, and each one's values over the
//! last runs of the history as a small inline SVG line (values in its tooltips and listed
//! beside it, so the numbers read without the picture).

use std::fmt::Write as _;

use super::escape::html;
use crate::report::summary::{baseline, bounds, labels};
use crate::report::{Report, SummaryContext, shown_number};

const W: f64 = 180.0;
const H: f64 = 36.0;

/// The values as a polyline with a dot (and a tooltip) per run; the last dot is this run.
fn trend_svg(name: &str, values: &[f64]) -> String {
    let (low, high) = values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
            (l.min(*v), h.max(*v))
        });
    let span = if (high - low).abs() < f64::EPSILON {
        1.0
    } else {
        high - low
    };
    let step = if values.len() > 1 {
        (W - 8.0) / (values.len() - 1) as f64
    } else {
        0.0
    };
    let points: Vec<(f64, f64)> = values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            (
                4.0 + step * i as f64,
                H - 4.0 - (v - low) / span * (H - 8.0),
            )
        })
        .collect();
    let mut svg = format!(
        "<svg class=\"trend\" viewBox=\"0 0 {W} {H}\" width=\"{W}\" height=\"{H}\" role=\"img\" aria-label=\"{} over the last {} runs\"><title>{} over the last {} runs</title>",
        html(name),
        values.len(),
        html(name),
        values.len()
    );
    let line: Vec<String> = points
        .iter()
        .map(|(x, y)| format!("{x:.1},{y:.1}"))
        .collect();
    let _ = write!(svg, "<polyline points=\"{}\"/>", line.join(" "));
    for (i, ((x, y), v)) in points.iter().zip(values).enumerate() {
        let this = i + 1 == values.len();
        let _ = write!(
            svg,
            "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"{}\"{}><title>{}{}</title></circle>",
            if this { 3.5 } else { 2.0 },
            if this { " class=\"this\"" } else { "" },
            shown_number(*v),
            if this { " (this run)" } else { "" }
        );
    }
    svg.push_str("</svg>");
    svg
}

pub(super) fn metrics(report: &Report, context: &SummaryContext) -> String {
    if report.metrics.is_empty() {
        return "<p>The run measured nothing.</p>\n".into();
    }
    let mut out = String::from(
        "<table class=\"metrics\"><thead><tr><th>metric</th><th>step</th><th>value</th><th>bounds</th><th>baseline</th><th>last runs</th></tr></thead><tbody>\n",
    );
    for (i, metric) in report.metrics.iter().enumerate() {
        let trend = context
            .trends
            .get(i)
            .filter(|t| t.len() > 1)
            .map(|t| {
                let listed: Vec<String> = t.iter().map(|v| shown_number(*v)).collect();
                format!(
                    "{}<div class=\"values\">{}</div>",
                    trend_svg(&metric.name, t),
                    html(&listed.join(", "))
                )
            })
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "<tr class=\"metric{}\"><td>{}{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{trend}</td></tr>",
            if metric.ok { "" } else { " failed" },
            html(&metric.name),
            html(&labels(metric).replace('`', "")),
            html(&metric.step.join(" > ")),
            html(&metric.shown()),
            html(&bounds(metric)),
            html(&baseline(metric)),
        );
    }
    out.push_str("</tbody></table>\n");
    out
}
