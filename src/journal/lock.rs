//! One mutating run per target: a lock file under the state folder, named after the target
//! (the Kubernetes API and the AWS endpoint a run acts on), holding who took it. A holder
//! whose process is gone (killed) no longer holds it.

use std::path::{Path, PathBuf};
use std::time::Duration;

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
}

impl Drop for TargetLock {
    fn drop(&mut self) {
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

fn alive(pid: u32) -> bool {
    pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists()
}

/// Takes the target's lock for `me`; waits up to `wait` (polling) while a live run holds it.
pub fn acquire(state_dir: &Path, me: &Holder, wait: Duration) -> Result<TargetLock, LockError> {
    let dir = state_dir.join("locks");
    let path = dir.join(file_name(&me.target));
    let io = |source| LockError::Io {
        path: path.clone(),
        source,
    };
    std::fs::create_dir_all(&dir).map_err(io)?;
    let started = std::time::Instant::now();
    loop {
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(file) => {
                serde_json::to_writer(&file, me).map_err(|e| io(e.into()))?;
                file.sync_all().map_err(io)?;
                return Ok(TargetLock { path });
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let holder: Option<Holder> = std::fs::read_to_string(&path)
                    .ok()
                    .and_then(|text| serde_json::from_str(&text).ok());
                match holder {
                    Some(holder) if alive(holder.pid) => {
                        if started.elapsed() >= wait {
                            return Err(LockError::Held { holder });
                        }
                        std::thread::sleep(Duration::from_millis(200));
                    }
                    // A holder that died (or a lock being written this instant, which the
                    // next look will read whole): take it over.
                    Some(_) => {
                        let _ = std::fs::remove_file(&path);
                    }
                    None => std::thread::sleep(Duration::from_millis(50)),
                }
            }
            Err(e) => return Err(io(e)),
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
