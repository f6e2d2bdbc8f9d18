//! `--scenario NAME | @FILE`: a named starting state of the twin, or a lab-state file.

use std::sync::Arc;

use crate::error::Error;
use crate::lab_state::LabState;
use crate::sim::Twin;
use crate::sim::{Scenario, load_scenario};

pub(crate) fn parse(text: &str) -> Result<Scenario, Error> {
    let Some(path) = text.strip_prefix('@') else {
        return text.parse().map_err(Error::Usage);
    };
    let content =
        crate::sandbox::read_text_file(std::path::Path::new(path), crate::sandbox::DATA_FILE_LIMIT)
            .map_err(|source| Error::Read {
                path: path.into(),
                what: "the lab-state file (--scenario @FILE)".into(),
                source,
            })?;
    let state = LabState::parse(path, &content).map_err(|e| Error::Usage(e.to_string()))?;
    Ok(Scenario::Captured(Arc::new(state)))
}

/// Starts the twin in the scenario; says which captured kinds it left out.
pub(crate) fn load(twin: &Twin, scenario: &Scenario) {
    let left_out = load_scenario(twin, scenario);
    if !left_out.is_empty() {
        eprintln!(
            "runbook: the twin does not serve these captured kinds and left them out: {}",
            left_out.join(", ")
        );
    }
}

/// The scenario in words: `deployed scenario`, `capture of lab-state.json`.
pub(crate) fn describe(text: &str) -> String {
    match text.strip_prefix('@') {
        Some(path) => format!("captured from {path}"),
        None => format!("{text} scenario"),
    }
}
