//! Where journals live (`$XDG_STATE_HOME/runbook/runs/<run-id>/journal.jsonl`, or
//! `--state-dir`), reading one back (up to its last whole line: a run killed while writing
//! leaves half a line), and the runs that did not end by themselves.

use std::path::{Path, PathBuf};

use super::record::Record;
use super::undo_plan::undo_plan;
use super::writer::JournalError;

/// `--state-dir`, else `$XDG_STATE_HOME/runbook`, else `~/.local/state/runbook`.
pub fn state_dir(given: Option<&Path>) -> PathBuf {
    if let Some(dir) = given {
        return dir.to_path_buf();
    }
    if let Some(state) = std::env::var_os("XDG_STATE_HOME").filter(|s| !s.is_empty()) {
        return PathBuf::from(state).join("runbook");
    }
    let home = std::env::var_os("HOME").unwrap_or_else(|| ".".into());
    PathBuf::from(home).join(".local/state/runbook")
}

/// The records of a journal; a torn last line (the process died writing it) is dropped.
pub fn read_journal(path: &Path) -> Result<Vec<Record>, JournalError> {
    let text = crate::sandbox::read_text_file(path, crate::sandbox::DATA_FILE_LIMIT).map_err(
        |source| JournalError::Read {
            path: path.to_path_buf(),
            source,
        },
    )?;
    Ok(parse_records(&text))
}

fn parse_records(text: &str) -> Vec<Record> {
    text.split_inclusive('\n')
        .filter(|line| line.ends_with('\n'))
        .filter_map(|line| serde_json::from_str(line.trim_end()).ok())
        .collect()
}

/// How much of a journal's end is read to find its last line: an End record is a few dozen
/// bytes, so a whole line always fits.
const TAIL: u64 = 4096;

/// A journal's first line and the last whole line of its end, read without reading what lies
/// between (every run start and end lists the runs: 50 journals of a few hundred KB each).
fn first_and_last_lines(journal: &Path) -> Option<(String, String)> {
    use std::io::{BufRead, Read, Seek, SeekFrom};
    let file = std::fs::File::open(journal).ok()?;
    let length = file
        .metadata()
        .ok()
        .filter(std::fs::Metadata::is_file)?
        .len();
    let mut reader = std::io::BufReader::new(file);
    let mut first = String::new();
    reader.read_line(&mut first).ok()?;
    reader
        .seek(SeekFrom::Start(length.saturating_sub(TAIL)))
        .ok()?;
    let mut tail = Vec::new();
    reader.take(TAIL).read_to_end(&mut tail).ok()?;
    let tail = String::from_utf8_lossy(&tail);
    let last = tail
        .split_inclusive('\n')
        .rfind(|l| l.ends_with('\n'))?
        .to_string();
    first.ends_with('\n').then_some((first, last))
}

/// A journal whose last whole line is its End record, read from its first and last lines
/// only: a finished run has nothing to undo.
fn ended_run(journal: &Path) -> Option<RunInfo> {
    let (first, last) = first_and_last_lines(journal)?;
    let first: Record = serde_json::from_str(first.trim_end()).ok()?;
    let last: Record = serde_json::from_str(last.trim_end()).ok()?;
    let (
        Record::Start {
            run_id,
            runbook,
            target,
            pid,
            started_at,
        },
        Record::End { .. },
    ) = (first, last)
    else {
        return None;
    };
    Some(RunInfo {
        id: run_id,
        at: JournalAt::File(journal.to_path_buf()),
        runbook,
        target,
        pid,
        started_at,
        ended: true,
        recovered: false,
        mutations: None,
        to_undo: Vec::new(),
        cleanups_failed: 0,
        cleanups_unfinished: 0,
    })
}

/// One run, as its journal tells it.
#[derive(Debug, Clone)]
pub struct RunInfo {
    pub id: String,
    pub at: JournalAt,
    pub runbook: String,
    pub target: String,
    pub pid: u32,
    pub started_at: u64,
    /// It ended by itself (its cleanups ran).
    pub ended: bool,
    pub recovered: bool,
    /// Mutations it made, counted for a run that did not end (what `recover` lists); an
    /// ended run's journal is not read through.
    pub mutations: Option<usize>,
    /// What a recover would do, in words.
    pub to_undo: Vec<String>,
    /// Cleanups that ran and failed.
    pub cleanups_failed: usize,
    /// Cleanups registered that never finished (the run was killed before or while they ran).
    pub cleanups_unfinished: usize,
}

/// Where a run's journal is kept.
#[derive(Debug, Clone)]
pub enum JournalAt {
    File(PathBuf),
    /// In the shared store, written from `host`; `alive` while the run's session is open.
    Store {
        host: String,
        alive: bool,
    },
}

impl RunInfo {
    /// Its process is still there (for a run in the shared store: its session is).
    pub fn alive(&self) -> bool {
        match &self.at {
            JournalAt::File(_) => {
                self.pid != std::process::id() && Path::new(&format!("/proc/{}", self.pid)).exists()
            }
            JournalAt::Store { alive, .. } => *alive,
        }
    }

    /// Killed before its cleanups ran (or ended with one failed), and not yet recovered.
    pub fn unfinished(&self) -> bool {
        !self.ended && !self.recovered
    }

    /// A run on the embedded twin: its target died with its process, nothing to recover.
    pub fn on_embedded_twin(&self) -> bool {
        self.target.starts_with("the embedded lab twin")
    }

    /// How it stands, in words: running, killed, or ended with failed cleanups.
    pub fn state(&self) -> String {
        if self.alive() {
            "running".into()
        } else if self.cleanups_unfinished == 0 && self.cleanups_failed > 0 {
            format!(
                "ended with {} failed cleanup{}",
                self.cleanups_failed,
                if self.cleanups_failed == 1 { "" } else { "s" }
            )
        } else {
            "killed".into()
        }
    }
}

/// Every run under `state_dir`, oldest first.
pub fn list_runs(state_dir: &Path) -> Vec<RunInfo> {
    let Ok(entries) = std::fs::read_dir(state_dir.join("runs")) else {
        return Vec::new();
    };
    let mut runs: Vec<RunInfo> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let journal = entry.path().join("journal.jsonl");
            if let Some(info) = ended_run(&journal) {
                return Some(info);
            }
            let text =
                crate::sandbox::read_text_file(&journal, crate::sandbox::DATA_FILE_LIMIT).ok()?;
            run_info(&parse_records(&text), JournalAt::File(journal))
        })
        .collect();
    runs.sort_by(|a, b| (a.started_at, &a.id).cmp(&(b.started_at, &b.id)));
    runs
}

/// A run as its records tell it (None without its Start record).
pub fn run_info(records: &[Record], at: JournalAt) -> Option<RunInfo> {
    let Some(Record::Start {
        run_id,
        runbook,
        target,
        pid,
        started_at,
    }) = records.first().cloned()
    else {
        return None;
    };
    let the_plan = undo_plan(records);
    let finished = |id: u64| {
        records
            .iter()
            .any(|r| matches!(r, Record::DeferFinished { id: done, .. } if *done == id))
    };
    Some(RunInfo {
        id: run_id,
        at,
        runbook,
        target,
        pid,
        started_at,
        ended: records.iter().any(|r| matches!(r, Record::End { .. })),
        recovered: the_plan.already_recovered,
        mutations: Some(
            records
                .iter()
                .filter(|r| matches!(r, Record::Mutation { .. }))
                .count(),
        ),
        to_undo: the_plan.steps.iter().map(|u| u.describe()).collect(),
        cleanups_failed: records
            .iter()
            .filter(|r| matches!(r, Record::DeferFinished { passed: false, .. }))
            .count(),
        cleanups_unfinished: records
            .iter()
            .filter_map(|r| match r {
                Record::DeferRegistered { id, .. } => Some(*id),
                _ => None,
            })
            .filter(|id| !finished(*id))
            .count(),
    })
}

/// How many journals of runs that ended (or were recovered) are kept: enough to read back what
/// recent runs changed; the history keeps every run's report, and a journal read at every
/// run's start should not grow with a year of nightly drills.
pub const KEPT_ENDED_RUNS: usize = 50;

/// Removes the journals of ended or recovered runs beyond the newest `keep`; unfinished runs
/// (what `recover` acts on) are never touched. Answers how many were removed.
pub fn prune_ended(state_dir: &Path, keep: usize) -> usize {
    let ended: Vec<RunInfo> = list_runs(state_dir)
        .into_iter()
        .filter(|run| !run.unfinished())
        .collect();
    let excess = ended.len().saturating_sub(keep);
    ended
        .iter()
        .take(excess)
        .filter(|run| match &run.at {
            JournalAt::File(journal) => journal
                .parent()
                .is_some_and(|folder| std::fs::remove_dir_all(folder).is_ok()),
            JournalAt::Store { .. } => false,
        })
        .count()
}

/// The newest unfinished run against `target`.
pub fn latest_unfinished(state_dir: &Path, target: &str) -> Option<RunInfo> {
    list_runs(state_dir)
        .into_iter()
        .rev()
        .find(|run| run.unfinished() && run.target == target)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::Journal;

    #[test]
    fn only_the_newest_ended_runs_are_kept_and_unfinished_ones_never_pruned() {
        let state = tempfile::tempdir().unwrap();
        for n in 0..5u64 {
            let journal =
                Journal::create(&state.path().join("runs").join(format!("r{n}")), false).unwrap();
            journal
                .append(&Record::Start {
                    run_id: format!("r{n}"),
                    runbook: "d.rhai".into(),
                    target: "t".into(),
                    pid: 0,
                    started_at: n,
                })
                .unwrap();
            // r1 was killed: it has no end, and recover still needs it.
            if n != 1 {
                journal
                    .append(&Record::End {
                        status: "passed".into(),
                    })
                    .unwrap();
            }
        }
        assert_eq!(prune_ended(state.path(), 2), 2);
        let left: Vec<String> = list_runs(state.path()).into_iter().map(|r| r.id).collect();
        assert_eq!(left, ["r1", "r3", "r4"]);
        assert_eq!(prune_ended(state.path(), 2), 0, "nothing more to prune");
    }

    #[test]
    fn a_run_that_ended_with_a_failed_cleanup_is_not_called_killed() {
        let state = tempfile::tempdir().unwrap();
        let write = |id: &str, records: &[Record]| {
            let journal = Journal::create(&state.path().join("runs").join(id), false).unwrap();
            journal
                .append(&Record::Start {
                    run_id: id.into(),
                    runbook: "d.rhai".into(),
                    target: "the lab at https://127.0.0.1:1".into(),
                    // pid 0 is never a live process of ours: the run is over.
                    pid: 0,
                    started_at: 1,
                })
                .unwrap();
            for record in records {
                journal.append(record).unwrap();
            }
        };
        let registered = Record::DeferRegistered {
            id: 1,
            name: "GPUs back to 0".into(),
        };
        write(
            "failed",
            &[
                registered.clone(),
                Record::DeferFinished {
                    id: 1,
                    passed: false,
                },
            ],
        );
        write("killed", &[registered]);
        let runs = list_runs(state.path());
        let state_of = |id: &str| runs.iter().find(|r| r.id == id).unwrap().state();
        assert_eq!(state_of("failed"), "ended with 1 failed cleanup");
        assert_eq!(state_of("killed"), "killed");
        assert!(runs.iter().all(|r| r.unfinished() && !r.on_embedded_twin()));
    }

    #[test]
    fn a_torn_last_line_is_dropped_and_the_rest_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::create(dir.path(), true).unwrap();
        journal
            .append(&Record::DeferRegistered {
                id: 1,
                name: "x".into(),
            })
            .unwrap();
        let path = dir.path().join("journal.jsonl");
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("{\"type\":\"mutation\",\"seq\":1,\"act");
        std::fs::write(&path, text).unwrap();
        assert_eq!(
            read_journal(&path).unwrap(),
            vec![Record::DeferRegistered {
                id: 1,
                name: "x".into()
            }]
        );
    }

    #[test]
    fn a_long_journal_is_read_from_its_ends_and_a_torn_tail_is_not_its_last_line() {
        let state = tempfile::tempdir().unwrap();
        let folder = state.path().join("runs").join("long");
        let journal = Journal::create(&folder, false).unwrap();
        journal
            .append(&Record::Start {
                run_id: "long".into(),
                runbook: "d.rhai".into(),
                target: "t".into(),
                pid: 0,
                started_at: 1,
            })
            .unwrap();
        for n in 0..200 {
            journal
                .append(&Record::DeferRegistered {
                    id: n,
                    name: "a cleanup with a name long enough to fill the journal".into(),
                })
                .unwrap();
        }
        let path = folder.join("journal.jsonl");
        assert!(std::fs::metadata(&path).unwrap().len() > 2 * TAIL);
        // Not ended: read through, its 200 cleanups unfinished.
        assert_eq!(list_runs(state.path())[0].cleanups_unfinished, 200);
        journal
            .append(&Record::End {
                status: "passed".into(),
            })
            .unwrap();
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        file.write_all(b"{\"type\":\"mutat").unwrap();
        let run = &list_runs(state.path())[0];
        assert!(run.ended && run.mutations.is_none(), "{run:?}");
    }
}
