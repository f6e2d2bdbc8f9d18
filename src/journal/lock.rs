//! One mutating run per target: a lock file under the state folder, named after the target
//! (the Kubernetes API and the AWS endpoint a run acts on), held with the kernel's file lock
//! (`flock`) and holding who took it. The kernel lets go of a killed holder's lock, so a lock
//! file left behind (a kill, a full disk, a power loss), empty or not, is never a holder.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Holder {
    pub pid: u32,
    pub run_id: String,
    pub runbook: String,
    pub target: String,
}

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(
        "{target} is in use by run {run_id} ({runbook}, pid {pid}); wait for it, or pass --wait-lock DURATION",
        run_id = holder.run_id, runbook = holder.runbook, pid = holder.pid, target = holder.target
    )]
    Held { holder: Holder },
    /// Held, but the holder has not said who it is (it is writing its name this instant).
    #[error(
        "the target is in use by another run (its lock {path} is held, and who holds it cannot be read yet); wait for it, or pass --wait-lock DURATION",
        path = path.display()
    )]
    HeldByUnknown { path: PathBuf },
    #[error("cannot take the lock {path}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Held until dropped.
#[derive(Debug)]
pub struct TargetLock {
    path: PathBuf,
    /// Kept open: closing it lets go of the lock.
    _file: File,
    /// What the lock file held when it was taken over, said once to the user.
    pub taken_over: Option<String>,
}

impl Drop for TargetLock {
    fn drop(&mut self) {
        // Removed while still locked: a run waiting on this file finds it gone and opens anew.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// FNV-1a: a file name for a target that stays the same across builds.
fn file_name(target: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in target.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}.lock")
}

/// Why a lock file names no holder.
#[derive(Debug, PartialEq)]
enum NoHolder {
    Empty,
    /// Unreadable or not a holder's record, in words.
    Damaged(String),
}

impl std::fmt::Display for NoHolder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoHolder::Empty => f.write_str("empty"),
            NoHolder::Damaged(why) => f.write_str(why),
        }
    }
}

/// A lock file's holder, or why it names none; bounded, as any file a run reads.
fn read_holder(file: &mut File) -> Result<Holder, NoHolder> {
    let mut text = String::new();
    file.rewind()
        .and_then(|()| file.take(64 * 1024).read_to_string(&mut text))
        .map_err(|e| NoHolder::Damaged(format!("unreadable ({e})")))?;
    if text.trim().is_empty() {
        return Err(NoHolder::Empty);
    }
    serde_json::from_str(&text)
        .map_err(|_| NoHolder::Damaged("damaged (not a holder's record)".into()))
}

/// Whether an empty lock file was made a moment ago, rather than left empty by a run that
/// died writing it (a full disk, a power loss).
fn just_made(file: &File) -> bool {
    file.metadata()
        .and_then(|m| m.modified())
        .ok()
        .and_then(|modified| modified.elapsed().ok())
        .is_some_and(|age| age < Duration::from_secs(2))
}

/// Takes the target's lock for `me`; waits up to `wait` (polling) while another run holds it.
pub fn acquire(state_dir: &Path, me: &Holder, wait: Duration) -> Result<TargetLock, LockError> {
    let dir = state_dir.join("locks");
    let path = dir.join(file_name(&me.target));
    let io = |source| LockError::Io {
        path: path.clone(),
        source,
    };
    crate::sandbox::private_dir(&dir).map_err(io)?;
    let started = Instant::now();
    loop {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&path)
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => {
                // The file may have been removed by the holder that let go just now: a lock
                // on an unlinked file guards nothing, so open the path again.
                let same = std::fs::metadata(&path)
                    .and_then(|on_disk| Ok(on_disk.ino() == file.metadata()?.ino()))
                    .unwrap_or(false);
                if !same {
                    continue;
                }
                let taken_over = match read_holder(&mut file) {
                    // Created just now (by us, or by a run that lost the race to lock it).
                    Err(NoHolder::Empty) if just_made(&file) => None,
                    Err(why) => Some(format!(
                        "the lock {} was {why}, left by a run that ended while writing it; taken over",
                        path.display()
                    )),
                    Ok(old) => Some(format!(
                        "the lock {} named run {} (pid {}), which is gone; taken over",
                        path.display(),
                        old.run_id,
                        old.pid
                    )),
                };
                let record = serde_json::to_vec(me).map_err(|e| io(e.into()))?;
                file.set_len(0)
                    .and_then(|()| file.rewind())
                    .and_then(|()| file.write_all(&record))
                    .and_then(|()| file.sync_all())
                    .map_err(io)?;
                return Ok(TargetLock {
                    path,
                    _file: file,
                    taken_over,
                });
            }
            Err(TryLockError::WouldBlock) => {
                if started.elapsed() >= wait {
                    // A holder writes its record right after it takes the lock: give it a moment.
                    for _ in 0..5 {
                        if let Ok(holder) = read_holder(&mut file) {
                            return Err(LockError::Held { holder });
                        }
                        std::thread::sleep(Duration::from_millis(20));
                    }
                    return Err(LockError::HeldByUnknown { path });
                }
                std::thread::sleep(Duration::from_millis(100).min(wait));
            }
            Err(TryLockError::Error(e)) => return Err(io(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holder(pid: u32, run_id: &str) -> Holder {
        Holder {
            pid,
            run_id: run_id.into(),
            runbook: "runbooks/gpu-lab.rhai".into(),
            target: "lab at http://127.0.0.1:1".into(),
        }
    }

    #[test]
    fn a_second_run_is_refused_while_the_first_holds_the_target() {
        let dir = tempfile::tempdir().unwrap();
        let me = holder(std::process::id(), "first");
        let lock = acquire(dir.path(), &me, Duration::ZERO).unwrap();
        // Our own pid stands for a live process that is not us: write it as another holder.
        let path = dir.path().join("locks").join(file_name(&me.target));
        let other = holder(1, "first");
        std::fs::write(&path, serde_json::to_string(&other).unwrap()).unwrap();
        let error = acquire(
            dir.path(),
            &holder(std::process::id(), "second"),
            Duration::ZERO,
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.contains("in use by run first (runbooks/gpu-lab.rhai, pid 1)"),
            "{error}"
        );
        assert!(error.contains("--wait-lock"), "{error}");
        drop(lock);
        assert!(!path.exists());
    }

    #[test]
    fn a_dead_holder_is_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let me = holder(std::process::id(), "new");
        let path = dir.path().join("locks").join(file_name(&me.target));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(
            &path,
            serde_json::to_string(&holder(u32::MAX - 1, "dead")).unwrap(),
        )
        .unwrap();
        let _lock = acquire(dir.path(), &me, Duration::ZERO).unwrap();
        let now: Holder = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(now.run_id, "new");
    }
}
