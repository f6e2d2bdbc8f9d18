//! The block a run ends with when a cleanup did not finish: which ones, why, and how to undo
//! by hand what they were for. A failed cleanup is never hidden.

use super::{DeferStatus, Report};

/// `None` when every cleanup passed.
pub fn left_behind_text(report: &Report) -> Option<String> {
    let unfinished = report.left_behind();
    if unfinished.is_empty() {
        return None;
    }
    let mut out = String::from("cleanup did not finish: something may be left behind (exit 3)\n");
    for defer in unfinished {
        let how = match defer.status {
            DeferStatus::Failed => "failed",
            DeferStatus::CutShort => "cut short by the second Ctrl-C after it had sent calls",
            DeferStatus::Skipped => "did not run",
            DeferStatus::Passed => continue,
        };
        out.push_str(&format!("  - {}: {how}", defer.name));
        if let Some(error) = &defer.error {
            out.push_str(&format!(": {error}"));
        }
        out.push('\n');
        match &defer.undo {
            Some(undo) => out.push_str(&format!("    undo by hand: {undo}\n")),
            None => out.push_str(
                "    undo by hand: the runbook's defer gives no command; check what it cleans up\n",
            ),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{DeferRecord, RunStatus};

    fn report(defers: Vec<DeferRecord>) -> Report {
        Report {
            defers,
            ..Report::empty(RunStatus::Interrupted)
        }
    }

    fn defer(
        name: &str,
        status: DeferStatus,
        error: Option<&str>,
        undo: Option<&str>,
    ) -> DeferRecord {
        DeferRecord {
            name: name.into(),
            status,
            error: error.map(str::to_string),
            undo: undo.map(str::to_string),
            start_ms: 0,
            start_wall_ms: 0,
            virtual_ms: 0,
            wall_ms: 0,
        }
    }

    #[test]
    fn passed_cleanups_leave_nothing_to_say() {
        let passed = report(vec![defer("a", DeferStatus::Passed, None, None)]);
        assert_eq!(left_behind_text(&passed), None);
    }

    #[test]
    fn each_unfinished_cleanup_says_how_it_ended_and_how_to_undo_it() {
        let text = left_behind_text(&report(vec![
            defer("restore the rules", DeferStatus::Passed, None, None),
            defer(
                "GPU node group back to 0",
                DeferStatus::Failed,
                Some("UpdateNodegroupConfig: ThrottlingException: Rate exceeded"),
                Some("aws eks update-nodegroup-config --cluster-name c --nodegroup-name gpu --scaling-config desiredSize=0"),
            ),
            defer("delete the probe pods", DeferStatus::CutShort, None, None),
            defer("restore the SG", DeferStatus::Skipped, None, Some("aws ec2 authorize-security-group-ingress ...")),
        ]))
        .expect("something is left");
        assert_eq!(
            text,
            "cleanup did not finish: something may be left behind (exit 3)\n\
             \x20 - GPU node group back to 0: failed: UpdateNodegroupConfig: ThrottlingException: Rate exceeded\n\
             \x20   undo by hand: aws eks update-nodegroup-config --cluster-name c --nodegroup-name gpu --scaling-config desiredSize=0\n\
             \x20 - delete the probe pods: cut short by the second Ctrl-C after it had sent calls\n\
             \x20   undo by hand: the runbook's defer gives no command; check what it cleans up\n\
             \x20 - restore the SG: did not run\n\
             \x20   undo by hand: aws ec2 authorize-security-group-ingress ...\n"
        );
    }
}
