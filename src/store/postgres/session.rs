//! One connection to the shared store, held on a thread of its own for as long as a command
//! runs: its session holds the target's advisory lock (a killed runner's connection takes its
//! lock with it), and every call waits for its answer from wherever it is made (the script's
//! thread, a runtime's, a signal's), within a bound, so a store that stops answering fails the
//! call instead of hanging the run.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tokio_postgres::Client;

use super::url::StoreUrl;
use crate::store::StoreError;

type Job = Box<dyn FnOnce(Arc<Client>) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send>;

/// How long one call waits for the store: a journal write normally takes a millisecond.
const CALL_TIMEOUT: Duration = Duration::from_secs(15);

pub(super) struct Session {
    jobs: tokio::sync::mpsc::UnboundedSender<Job>,
    shown: String,
}

impl Session {
    /// Connects, then runs `prepare` (the schema's migrations) on the connection before any
    /// other call.
    pub(super) fn open<P, F>(url: &StoreUrl, prepare: P) -> Result<Self, StoreError>
    where
        P: FnOnce(Client, String) -> F + Send + 'static,
        F: Future<Output = Result<Client, StoreError>> + Send,
    {
        let shown = url.to_string();
        let connector = super::tls::connector(url.ssl_mode, url.root_cert.as_deref())?;
        let config = url.config.clone();
        let (ready, is_ready) = std::sync::mpsc::sync_channel::<Result<(), StoreError>>(1);
        let (jobs, mut queue) = tokio::sync::mpsc::unbounded_channel::<Job>();
        let name = shown.clone();
        let thread = std::thread::Builder::new()
            .name("runbook-store".into())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime,
                    Err(error) => {
                        let _ = ready.send(Err(StoreError::Connect {
                            shown: name,
                            why: error.to_string(),
                        }));
                        return;
                    }
                };
                runtime.block_on(async move {
                    let (client, connection) = match config.connect(connector).await {
                        Ok(pair) => pair,
                        Err(error) => {
                            let _ = ready.send(Err(StoreError::Connect {
                                shown: name,
                                why: error_text(&error),
                            }));
                            return;
                        }
                    };
                    tokio::spawn(connection);
                    let client = match prepare(client, name).await {
                        Ok(client) => Arc::new(client),
                        Err(error) => {
                            let _ = ready.send(Err(error));
                            return;
                        }
                    };
                    let _ = ready.send(Ok(()));
                    while let Some(job) = queue.recv().await {
                        job(client.clone()).await;
                    }
                });
            });
        if let Err(error) = thread {
            return Err(StoreError::Connect {
                shown,
                why: error.to_string(),
            });
        }
        let connect_bound = url
            .config
            .get_connect_timeout()
            .copied()
            .unwrap_or(CALL_TIMEOUT)
            + CALL_TIMEOUT;
        match is_ready.recv_timeout(connect_bound) {
            Ok(Ok(())) => Ok(Self { jobs, shown }),
            Ok(Err(error)) => Err(error),
            Err(_) => Err(StoreError::Timeout {
                shown,
                what: "connecting".into(),
                seconds: connect_bound.as_secs(),
            }),
        }
    }

    pub(super) fn shown(&self) -> &str {
        &self.shown
    }

    /// Runs `call` on the connection and waits for its answer; `what` names it in errors
    /// ("write the journal").
    pub(super) fn call<T, C, F>(&self, what: &str, call: C) -> Result<T, StoreError>
    where
        T: Send + 'static,
        C: FnOnce(Arc<Client>) -> F + Send + 'static,
        F: Future<Output = Result<T, tokio_postgres::Error>> + Send + 'static,
    {
        let (answer, answered) = std::sync::mpsc::sync_channel(1);
        let job: Job = Box::new(move |client| {
            Box::pin(async move {
                let _ = answer.send(call(client).await);
            })
        });
        let failed = |why: String| StoreError::Query {
            shown: self.shown.clone(),
            what: what.to_string(),
            why,
        };
        self.jobs
            .send(job)
            .map_err(|_| failed("its connection has ended".into()))?;
        match answered.recv_timeout(CALL_TIMEOUT) {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(error)) => Err(failed(error_text(&error))),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => Err(StoreError::Timeout {
                shown: self.shown.clone(),
                what: what.to_string(),
                seconds: CALL_TIMEOUT.as_secs(),
            }),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                Err(failed("its connection has ended".into()))
            }
        }
    }
}

/// tokio-postgres' error with its cause: "error connecting to server: Connection refused".
pub(super) fn error_text(error: &tokio_postgres::Error) -> String {
    if let Some(db) = error.as_db_error() {
        return format!("{} ({})", db.message(), db.code().code());
    }
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        let said = cause.to_string();
        if !text.contains(&said) {
            text = format!("{text}: {said}");
        }
        source = cause.source();
    }
    text
}
