//! The run's steps and cleanups as a Gantt chart in inline SVG: one bar per step (nested ones
//! indented under their parent) and per cleanup, on the run's own clock and on the wall clock
//! side by side, colored by how each ended; the failing step is marked.

use std::fmt::Write as _;

use super::escape::html;
use crate::report::{DeferStatus, Outcome, Report, readable_millis};

/// One bar: a step (with its depth) or a cleanup.
struct Bar {
    label: String,
    depth: usize,
    class: &'static str,
    start: (u64, u64),
    length: (u64, u64),
    failing: bool,
    /// Its row in the steps table (steps only).
    row: Option<usize>,
}

const ROW: u32 = 18;
const GUTTER: u32 = 260;
const WIDTH: u32 = 1000;

fn bars(report: &Report) -> Vec<Bar> {
    let mut bars: Vec<Bar> = report
        .flat_steps()
        .into_iter()
        .enumerate()
        .map(|(row, (path, step))| Bar {
            label: path.last().copied().unwrap_or_default().to_string(),
            depth: path.len() - 1,
            class: match step.status {
                Outcome::Passed => "bar step passed",
                Outcome::Failed => "bar step failed",
                Outcome::Interrupted => "bar step interrupted",
            },
            start: (step.start_ms, step.start_wall_ms),
            length: (step.virtual_ms, step.wall_ms),
            failing: step.failed_here(),
            row: Some(row),
        })
        .collect();
    bars.extend(report.defers.iter().map(|d| Bar {
        label: format!("cleanup: {}", d.name),
        depth: 0,
        class: match d.status {
            DeferStatus::Passed => "bar cleanup passed",
            DeferStatus::Failed => "bar cleanup failed",
            DeferStatus::Skipped | DeferStatus::CutShort => "bar cleanup left",
        },
        start: (d.start_ms, d.start_wall_ms),
        length: (d.virtual_ms, d.wall_ms),
        failing: d.status != DeferStatus::Passed,
        row: None,
    }));
    bars
}

/// Both panels, with a heading each.
pub(super) fn timeline(report: &Report) -> String {
    let bars = bars(report);
    if bars.is_empty() {
        return "<p>No steps ran.</p>\n".into();
    }
    let mut out = String::from("<div class=\"timelines\">\n");
    for (clock, title, total) in [
        (
            0,
            format!("On its clock ({})", report.clock),
            report.virtual_ms,
        ),
        (1, "Wall clock".to_string(), report.wall_ms),
    ] {
        let _ = writeln!(
            out,
            "<figure class=\"timeline\" data-clock=\"{}\"><figcaption>{} · {}</figcaption>",
            if clock == 0 { "run" } else { "wall" },
            html(&title),
            readable_millis(total)
        );
        out.push_str(&panel(&bars, clock, total));
        out.push_str("</figure>\n");
    }
    out.push_str("</div>\n");
    out
}

fn panel(bars: &[Bar], clock: usize, total: u64) -> String {
    let height = ROW * u32::try_from(bars.len()).unwrap_or(u32::MAX / ROW - 2) + 24;
    let scale = |ms: u64| -> f64 {
        if total == 0 {
            0.0
        } else {
            ms as f64 / total as f64 * f64::from(WIDTH - GUTTER - 10)
        }
    };
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        "<svg class=\"gantt\" viewBox=\"0 0 {WIDTH} {height}\" width=\"100%\" role=\"img\" \
         aria-label=\"{} bars, one per step and cleanup\">",
        bars.len()
    );
    for (row, bar) in bars.iter().enumerate() {
        let y = ROW * u32::try_from(row).unwrap_or(0) + 4;
        let (start, length) = match clock {
            0 => (bar.start.0, bar.length.0),
            _ => (bar.start.1, bar.length.1),
        };
        let x = f64::from(GUTTER) + scale(start);
        let w = scale(length).max(1.5);
        let indent = 4 + 12 * u32::try_from(bar.depth).unwrap_or(0);
        let label = html(&bar.label);
        let _ = writeln!(
            svg,
            "<text x=\"{indent}\" y=\"{}\" class=\"label\">{label}</text>",
            y + 12
        );
        let _ = writeln!(
            svg,
            "<rect class=\"{}{}\"{} x=\"{x:.1}\" y=\"{y}\" width=\"{w:.1}\" height=\"{}\"><title>{label}: from {} for {}</title></rect>",
            bar.class,
            if bar.failing { " failing" } else { "" },
            bar.row
                .map(|r| format!(" data-row=\"{r}\""))
                .unwrap_or_default(),
            ROW - 4,
            readable_millis(start),
            readable_millis(length),
        );
        if bar.failing {
            let _ = writeln!(
                svg,
                "<text x=\"{:.1}\" y=\"{}\" class=\"mark\">✖</text>",
                x + w + 3.0,
                y + 12
            );
        }
    }
    let axis = height - 6;
    let _ = writeln!(
        svg,
        "<text x=\"{GUTTER}\" y=\"{axis}\" class=\"axis\">0</text><text x=\"{}\" y=\"{axis}\" class=\"axis\" text-anchor=\"end\">{}</text>",
        WIDTH - 10,
        readable_millis(total)
    );
    svg.push_str("</svg>\n");
    svg
}
