//! One mutating run per target across every runner of the store: a PostgreSQL advisory lock
//! on the run's session, keyed by the target's identity (a killed runner's connection takes its
//! lock with it, as Terraform's pg backend relies on), and a row that names who holds it.

use super::store::SharedStore;
use crate::store::StoreError;

/// Who holds a target, as the messages of a refused run name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreHolder {
    pub run_id: String,
    pub runbook: String,
    pub host: String,
    pub pid: i64,
}

impl std::fmt::Display for StoreHolder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "run {} ({}, on {}, pid {})",
            self.run_id, self.runbook, self.host, self.pid
        )
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockTaken {
    Taken,
    /// Another session holds it; `None` while the holder has not yet written its name.
    HeldBy(Option<StoreHolder>),
}

/// FNV-1a of the target's identity: the advisory lock's 64-bit key, the same in every build.
fn key(target: &str) -> i64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in "runbook target ".bytes().chain(target.bytes()) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    i64::from_ne_bytes(hash.to_ne_bytes())
}

impl SharedStore {
    /// Takes the target's lock on this session if no other session holds it.
    pub fn try_lock(&self, target: &str, me: &StoreHolder) -> Result<LockTaken, StoreError> {
        let target = target.to_string();
        let me = me.clone();
        self.session
            .call("take the target's lock", move |client| async move {
                let key = key(&target);
                let taken: bool = client
                    .query_one("SELECT pg_try_advisory_lock($1)", &[&key])
                    .await?
                    .get(0);
                if taken {
                    client
                        .execute(
                            "INSERT INTO runbook.locks (target, run_id, runbook, host, pid)
                         VALUES ($1, $2, $3, $4, $5)
                         ON CONFLICT (target) DO UPDATE SET run_id = excluded.run_id,
                             runbook = excluded.runbook, host = excluded.host,
                             pid = excluded.pid, taken_at = now()",
                            &[&target, &me.run_id, &me.runbook, &me.host, &me.pid],
                        )
                        .await?;
                    return Ok(LockTaken::Taken);
                }
                let holder = client
                    .query_opt(
                        "SELECT run_id, runbook, host, pid FROM runbook.locks WHERE target = $1",
                        &[&target],
                    )
                    .await?
                    .map(|row| StoreHolder {
                        run_id: row.get(0),
                        runbook: row.get(1),
                        host: row.get(2),
                        pid: row.get(3),
                    });
                Ok(LockTaken::HeldBy(holder))
            })
    }

    /// Lets go of the target's lock (closing the session would as well).
    pub fn unlock(&self, target: &str, run_id: &str) -> Result<(), StoreError> {
        let target = target.to_string();
        let run_id = run_id.to_string();
        self.session
            .call("give back the target's lock", move |client| async move {
                client
                    .execute(
                        "DELETE FROM runbook.locks WHERE target = $1 AND run_id = $2",
                        &[&target, &run_id],
                    )
                    .await?;
                client
                    .execute("SELECT pg_advisory_unlock($1)", &[&key(&target)])
                    .await?;
                Ok(())
            })
    }
}
