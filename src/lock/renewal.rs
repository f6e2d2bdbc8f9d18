//! A held Lease: renewed in the background every `renew_every` until the run gives it back.
//! A renewal that fails is said and tried again; a Lease another run has taken, or one not
//! renewed for its whole duration (it may be another's by now), is lost, and whoever watches
//! [`HeldLease::lost`] stops changing the target.

use std::sync::Arc;
use std::time::Instant;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;

use super::holder::LeaseHolder;
use super::lease::{LeaseSettings, whole_seconds};
use crate::clients::kube::{KubeClient, KubeError, LeaseWrite};

/// Why a run no longer holds its target's Lease.
#[derive(Debug, Clone, PartialEq)]
pub struct LostLease {
    pub why: String,
}

/// What the run is told about its Lease (a wait for it, renewal failures, a renewal that
/// worked again): a line each, starting `note:` or `warning:`.
pub type Say = Arc<dyn Fn(String) + Send + Sync>;

pub struct HeldLease {
    client: Arc<KubeClient>,
    settings: LeaseSettings,
    stop: Arc<Notify>,
    /// The renewals; they answer the Lease as last written, or None once it is lost.
    renewals: Option<JoinHandle<Option<Lease>>>,
    lost: watch::Receiver<Option<LostLease>>,
}

impl HeldLease {
    pub(super) fn start(
        client: Arc<KubeClient>,
        me: LeaseHolder,
        settings: LeaseSettings,
        lease: Lease,
        say: Say,
    ) -> Self {
        let stop = Arc::new(Notify::new());
        let (tell, lost) = watch::channel(None);
        let renewing = Renewing {
            client: client.clone(),
            me,
            settings: settings.clone(),
            stop: stop.clone(),
            tell,
            say,
        };
        Self {
            client,
            settings,
            stop,
            renewals: Some(tokio::spawn(renewing.run(lease))),
            lost,
        }
    }

    /// Changes to Some when the Lease is lost.
    pub fn lost(&self) -> watch::Receiver<Option<LostLease>> {
        self.lost.clone()
    }

    /// Stops renewing and deletes the Lease, if it is still this run's (a Lease lost or
    /// changed by another since is theirs and stays). True when it was deleted.
    pub async fn release(mut self) -> Result<bool, KubeError> {
        self.stop.notify_one();
        let last = match self.renewals.take() {
            Some(renewals) => renewals.await.ok().flatten(),
            None => None,
        };
        let Some(version) = last.and_then(|lease| lease.metadata.resource_version) else {
            return Ok(false);
        };
        self.client
            .delete_lease(&self.settings.namespace, &self.settings.name, &version)
            .await
    }
}

impl Drop for HeldLease {
    fn drop(&mut self) {
        // Not released (a panic on the way out): the Lease expires after its duration.
        if let Some(renewals) = &self.renewals {
            renewals.abort();
        }
    }
}

struct Renewing {
    client: Arc<KubeClient>,
    me: LeaseHolder,
    settings: LeaseSettings,
    stop: Arc<Notify>,
    tell: watch::Sender<Option<LostLease>>,
    say: Say,
}

impl Renewing {
    async fn run(self, mut lease: Lease) -> Option<Lease> {
        let mut renewed_at = Instant::now();
        let mut failing = false;
        loop {
            tokio::select! {
                () = self.stop.notified() => return Some(lease),
                () = tokio::time::sleep(self.settings.renew_every) => {}
            }
            match self.renew(&lease).await {
                Ok(Some(written)) => {
                    if failing {
                        (self.say)(format!(
                            "renewed the target's lock again (the Lease {}/{})",
                            self.settings.namespace, self.settings.name
                        ));
                    }
                    failing = false;
                    lease = written;
                    renewed_at = Instant::now();
                }
                Ok(None) => return None,
                Err(error) => {
                    failing = true;
                    let unrenewed = renewed_at.elapsed();
                    if unrenewed >= self.settings.duration {
                        self.lose(format!(
                            "its lock (the Lease {}/{}) could not be renewed for {} (its whole duration), so another run may hold the target now: {error}",
                            self.settings.namespace, self.settings.name, whole_seconds(unrenewed)
                        ));
                        return None;
                    }
                    (self.say)(format!(
                        "warning: renewing the target's lock (the Lease {}/{}) failed, trying again: {error}",
                        self.settings.namespace, self.settings.name
                    ));
                }
            }
        }
    }

    /// One renewal: the Lease as written, or None when another run has it now.
    async fn renew(&self, lease: &Lease) -> Result<Option<Lease>, KubeError> {
        let mut renewed = lease.clone();
        if let Some(spec) = renewed.spec.as_mut() {
            spec.renew_time = Some(MicroTime(jiff::Timestamp::now()));
        }
        match self.client.replace_lease(&renewed).await? {
            LeaseWrite::Written(written) => Ok(Some(*written)),
            LeaseWrite::Lost => self.after_conflict().await,
        }
    }

    /// A renewal refused on its resourceVersion: still this run's (someone only annotated
    /// it), or another's now.
    async fn after_conflict(&self) -> Result<Option<Lease>, KubeError> {
        let current = self
            .client
            .lease(&self.settings.namespace, &self.settings.name)
            .await?;
        let identity = current
            .as_ref()
            .and_then(|lease| lease.spec.as_ref())
            .and_then(|spec| spec.holder_identity.clone())
            .unwrap_or_default();
        if identity == self.me.identity() {
            return Ok(current);
        }
        let why = match &current {
            Some(lease) if !identity.is_empty() => format!(
                "its lock (the Lease {}/{}) was taken over by {}",
                self.settings.namespace,
                self.settings.name,
                LeaseHolder::from_annotations(lease.metadata.annotations.as_ref(), &identity)
            ),
            _ => format!(
                "its lock (the Lease {}/{}) was deleted or given up by someone else",
                self.settings.namespace, self.settings.name
            ),
        };
        self.lose(why);
        Ok(None)
    }

    fn lose(&self, why: String) {
        let _ = self.tell.send(Some(LostLease { why }));
    }
}
