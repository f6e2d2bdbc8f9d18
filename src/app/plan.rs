//! `runbook plan`: rehearses a runbook on the lab twin, or on a twin of a real target captured
//! with read-only calls, and prints what it would change: every mutating call by step, its
//! cleanups' apart, how the run ends, how long it takes and what the resources cost meanwhile.
//! Nothing but reads reaches a real target.

use super::rehearsal::{Rehearsal, rehearse};
use super::stdout::out;
use super::{AppResult, runtime};
use crate::cli::{PlanArgs, parse_sets, runbook_folder};
use crate::error::{Error, Exit};
use crate::plan::to_text;

pub(crate) fn execute(args: &PlanArgs) -> AppResult {
    let text = crate::sandbox::read_text_file(&args.file, crate::sandbox::TEXT_FILE_LIMIT)
        .map_err(|source| Error::Read {
            path: args.file.clone(),
            what: "the runbook".into(),
            source,
        })?;
    let read = args.read.sandbox([runbook_folder(&args.file)]);
    let (sets, set_files) = parse_sets(&args.sets, &read)?;
    let runtime = runtime::build()?;
    let plan = rehearse(
        &runtime,
        Rehearsal {
            file: &args.file,
            text,
            sets,
            set_files,
            read,
            guards: args.guards.guards(),
            target: &args.target,
        },
    )?;
    if args.json {
        out!(
            "{}",
            serde_json::to_string_pretty(&plan).unwrap_or_default()
        );
    } else {
        super::stdout::write(&to_text(&plan));
    }
    Ok(Exit::Passed)
}
