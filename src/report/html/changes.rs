//! The changes a run made, in order, each with the cleanup that later changed the same
//! resource back (where one did), so a reader sees what was put back and what was not.

use std::fmt::Write as _;

use super::escape::html;
use crate::report::{ChangeOutcome, ChangeRecord, Report};

/// The cleanup that changed `change`'s resource after it (the first such), if any.
fn undone_by<'a>(change: &ChangeRecord, later: &'a [ChangeRecord]) -> Option<&'a ChangeRecord> {
    let resource = change.change.resource.as_deref()?;
    later
        .iter()
        .find(|c| c.cleanup && c.change.resource.as_deref() == Some(resource))
}

pub(super) fn changes(report: &Report) -> String {
    if report.changes.is_empty() {
        return "<p>The run changed nothing.</p>\n".into();
    }
    let mut out = String::from(
        "<table class=\"changes\"><thead><tr><th>#</th><th>change</th><th>resource</th><th>made by</th><th>outcome</th><th>put back by</th></tr></thead><tbody>\n",
    );
    for (i, change) in report.changes.iter().enumerate() {
        let outcome = match change.outcome {
            ChangeOutcome::Sent => "sent, no answer",
            ChangeOutcome::Done => "done",
            ChangeOutcome::Failed => "failed",
            ChangeOutcome::Refused => "refused by a guard",
        };
        let made_by = if change.cleanup {
            format!("cleanup {}", change.step.join(" > "))
        } else {
            change.step.join(" > ")
        };
        let put_back = if change.cleanup {
            String::new()
        } else {
            undone_by(change, &report.changes[i + 1..])
                .map(|c| format!("cleanup {}: {}", c.step.join(" > "), c.change.action))
                .unwrap_or_default()
        };
        let error = change
            .error
            .as_deref()
            .map(|e| format!("<div class=\"error\">{}</div>", html(e)))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "<tr class=\"change {}\"><td>{}</td><td><code>{}</code>{error}</td><td>{}</td><td>{}</td><td>{outcome}</td><td>{}</td></tr>",
            serde_json::to_value(change.outcome)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            i + 1,
            html(&change.change.action),
            html(change.change.resource.as_deref().unwrap_or("")),
            html(&made_by),
            html(&put_back),
        );
    }
    out.push_str("</tbody></table>\n");
    out
}
