//! The store's tables, in the `runbook` schema, made by numbered migrations that a newer
//! runbook applies (one runner at a time: they wait on a transaction's advisory lock) and that
//! an older runbook refuses, by name, rather than write rows it does not understand.

use tokio_postgres::Client;

use super::session::error_text;
use crate::store::StoreError;

/// Each migration's SQL, in order: version N is `MIGRATIONS[N - 1]`. A released migration is
/// never edited; a change is a new one.
const MIGRATIONS: &[&str] = &[
    // 1: runs and their journals, and who holds each target's lock.
    "CREATE TABLE runbook.runs (
         run_id        text PRIMARY KEY,
         runbook       text NOT NULL,
         target        text NOT NULL,
         host          text NOT NULL,
         pid           bigint NOT NULL,
         started_at    bigint NOT NULL,
         backend_pid   integer NOT NULL,
         backend_start timestamptz NOT NULL,
         ended         boolean NOT NULL DEFAULT false,
         recovered     boolean NOT NULL DEFAULT false
     );
     CREATE INDEX runs_by_target ON runbook.runs (target, started_at);
     CREATE TABLE runbook.journal (
         run_id     text NOT NULL REFERENCES runbook.runs ON DELETE CASCADE,
         line       bigint NOT NULL,
         record     text NOT NULL,
         written_at timestamptz NOT NULL DEFAULT now(),
         PRIMARY KEY (run_id, line)
     );
     CREATE TABLE runbook.locks (
         target   text PRIMARY KEY,
         run_id   text NOT NULL,
         runbook  text NOT NULL,
         host     text NOT NULL,
         pid      bigint NOT NULL,
         taken_at timestamptz NOT NULL DEFAULT now()
     );",
    // 2: the run history every runner of the store shares (the local history's tables).
    "CREATE TABLE runbook.history_runs (
         number       bigserial PRIMARY KEY,
         run_id       text NOT NULL,
         runbook      text NOT NULL,
         runbook_path text NOT NULL,
         target       text NOT NULL,
         parameters   text NOT NULL,
         status       text NOT NULL,
         started      double precision NOT NULL,
         finished     double precision NOT NULL,
         wall_ms      bigint NOT NULL,
         virtual_ms   bigint NOT NULL,
         failed_step  text,
         error        text,
         commit_id    text,
         report       text NOT NULL
     );
     CREATE INDEX history_runs_by_key
         ON runbook.history_runs (runbook_path, target, parameters, number);
     CREATE TABLE runbook.history_metrics (
         id     bigserial PRIMARY KEY,
         run    bigint NOT NULL REFERENCES runbook.history_runs ON DELETE CASCADE,
         step   text NOT NULL,
         name   text NOT NULL,
         labels text NOT NULL,
         record text NOT NULL,
         value  double precision NOT NULL,
         ok     boolean NOT NULL
     );
     CREATE INDEX history_metrics_by_name ON runbook.history_metrics (name, labels, step, run);
     CREATE TABLE runbook.history_steps (
         run        bigint NOT NULL REFERENCES runbook.history_runs ON DELETE CASCADE,
         path       text NOT NULL,
         status     text NOT NULL,
         wall_ms    bigint NOT NULL,
         virtual_ms bigint NOT NULL
     );
     CREATE INDEX history_steps_by_run ON runbook.history_steps (run);
     CREATE TABLE runbook.gpu_verdicts (
         run      bigint NOT NULL REFERENCES runbook.history_runs ON DELETE CASCADE,
         finished double precision NOT NULL,
         node     text NOT NULL,
         machine  text NOT NULL,
         verdict  text NOT NULL,
         health   text NOT NULL
     );
     CREATE INDEX gpu_verdicts_by_machine ON runbook.gpu_verdicts (machine, finished);
     CREATE INDEX gpu_verdicts_by_node ON runbook.gpu_verdicts (node, finished);",
    // 3: each machine's birth certificate, as runs accepted it.
    "CREATE TABLE runbook.node_certificates (
         run         bigint NOT NULL REFERENCES runbook.history_runs ON DELETE CASCADE,
         finished    double precision NOT NULL,
         node        text NOT NULL,
         machine     text NOT NULL,
         certificate text NOT NULL
     );
     CREATE INDEX node_certificates_by_machine ON runbook.node_certificates (machine, finished);",
];

/// The newest schema this runbook knows.
pub(super) const KNOWN: i32 = MIGRATIONS.len() as i32;

/// The two-key advisory lock migrations are applied under (its own key space: the targets'
/// locks take one 64-bit key).
const MIGRATING: (i32, i32) = (0x7275_6e62, 1);

/// Brings the store's schema up to [`KNOWN`], or refuses one that is newer.
pub(super) async fn migrate(mut client: Client, shown: String) -> Result<Client, StoreError> {
    let failed = |error: tokio_postgres::Error| StoreError::Query {
        shown: shown.clone(),
        what: "prepare its tables".into(),
        why: error_text(&error),
    };
    let tx = client.transaction().await.map_err(failed)?;
    tx.execute(
        "SELECT pg_advisory_xact_lock($1, $2)",
        &[&MIGRATING.0, &MIGRATING.1],
    )
    .await
    .map_err(failed)?;
    tx.batch_execute(
        "CREATE SCHEMA IF NOT EXISTS runbook;
         CREATE TABLE IF NOT EXISTS runbook.schema_versions (
             version    integer PRIMARY KEY,
             applied_at timestamptz NOT NULL DEFAULT now(),
             applied_by text NOT NULL
         );",
    )
    .await
    .map_err(failed)?;
    let found: i32 = tx
        .query_one(
            "SELECT coalesce(max(version), 0) FROM runbook.schema_versions",
            &[],
        )
        .await
        .map_err(failed)?
        .get(0);
    if found > KNOWN {
        return Err(StoreError::NewerSchema {
            shown: shown.clone(),
            found,
            known: KNOWN,
        });
    }
    let by = format!("runbook {}", env!("CARGO_PKG_VERSION"));
    for (version, sql) in (found + 1..).zip(MIGRATIONS.iter().skip(found as usize)) {
        tx.batch_execute(sql).await.map_err(failed)?;
        tx.execute(
            "INSERT INTO runbook.schema_versions (version, applied_by) VALUES ($1, $2)",
            &[&version, &by],
        )
        .await
        .map_err(failed)?;
    }
    tx.commit().await.map_err(failed)?;
    Ok(client)
}
