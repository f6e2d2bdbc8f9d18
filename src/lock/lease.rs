//! Taking a target's Lease: made when there is none, taken over when its holder gave it back
//! or stopped renewing it for longer than its duration, refused (or waited on, with
//! `--wait-lock`) while another run holds it. Every write carries the resourceVersion it read,
//! so of two runners racing the API server lets exactly one through; the other reads again.

use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::ObjectMeta;

use super::holder::LeaseHolder;
use super::renewal::{HeldLease, Say};
use crate::clients::kube::{KubeClient, KubeError, LeaseWrite};

/// Where the Lease lives and how long a holder keeps it between renewals.
#[derive(Debug, Clone)]
pub struct LeaseSettings {
    pub namespace: String,
    pub name: String,
    /// How long a holder's claim lasts after its last renewal: a killed runner's lock is free
    /// this long after its last renewal.
    pub duration: Duration,
    /// How often the holder renews (a third of the duration, as client-go's defaults leave
    /// two renewals' slack).
    pub renew_every: Duration,
    /// How often a waiting runner reads the Lease again.
    pub retry_every: Duration,
}

impl Default for LeaseSettings {
    fn default() -> Self {
        Self {
            namespace: "runbook".into(),
            name: "target-lock".into(),
            duration: Duration::from_secs(15),
            renew_every: Duration::from_secs(5),
            retry_every: Duration::from_secs(1),
        }
    }
}

/// How the Lease came to this run.
#[derive(Debug, Clone, PartialEq)]
pub enum Acquired {
    /// There was none, or its last holder gave it back.
    Free,
    /// Its holder stopped renewing it (killed, lost): the run it replaces, which may have
    /// left changes behind for `runbook recover`, and how it was known to be gone.
    TakenOver {
        previous: LeaseHolder,
        because: Gone,
    },
}

/// How a holder was known to have stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gone {
    /// Its Lease was not renewed for its whole duration.
    Expired,
    /// Its process is no more (it ran on this machine, in this pid namespace).
    ProcessEnded,
}

#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    #[error(
        "the target is in use by {holder} (its lock is the Lease {namespace}/{name} in the cluster, renewed {renewed_ago} ago){waited}; wait for it, or pass --wait-lock DURATION",
        waited = waited.map(|w| format!(", still after waiting {}", whole_seconds(w))).unwrap_or_default()
    )]
    Held {
        holder: LeaseHolder,
        namespace: String,
        name: String,
        renewed_ago: String,
        waited: Option<Duration>,
    },
    #[error(
        "this identity may not take the target's lock, the Lease {namespace}/{name} in the cluster ({refused}); grant it get, create, update and delete on that Lease and get on the namespace {namespace} (made beforehand, or create on namespaces too), or pass --read-only if the run only reads"
    )]
    Forbidden {
        namespace: String,
        name: String,
        refused: String,
    },
    #[error("cannot take the target's lock (the Lease {namespace}/{name} in the cluster)")]
    Kube {
        namespace: String,
        name: String,
        #[source]
        source: KubeError,
    },
}

/// The API server's refusal without the advice the client adds after it (this error gives
/// its own): `namespaces is forbidden: User "x" cannot create resource ...`.
fn first_clause(message: &str) -> String {
    message
        .split(": grant it")
        .next()
        .unwrap_or(message)
        .to_string()
}

/// `12s`: how long ago, to the second.
pub(super) fn whole_seconds(duration: Duration) -> String {
    format!("{}s", duration.as_secs())
}

/// What one read of the Lease decided.
enum Attempt {
    Won(Box<Lease>, Acquired),
    /// Another runner wrote first: read again at once.
    Raced,
    Held {
        holder: LeaseHolder,
        renewed_ago: Duration,
    },
}

/// Takes the target's Lease for `me`, waiting up to `wait` for a holder to let go; the
/// returned lease renews itself until released, telling `say` of renewals that fail.
pub async fn acquire(
    client: Arc<KubeClient>,
    me: LeaseHolder,
    settings: LeaseSettings,
    wait: Duration,
    say: Say,
) -> Result<(HeldLease, Acquired), LeaseError> {
    let failed = |source: KubeError| match source {
        KubeError::Api {
            code: 403, message, ..
        } => LeaseError::Forbidden {
            namespace: settings.namespace.clone(),
            name: settings.name.clone(),
            refused: first_clause(&message),
        },
        source => LeaseError::Kube {
            namespace: settings.namespace.clone(),
            name: settings.name.clone(),
            source,
        },
    };
    client
        .ensure_namespace(&settings.namespace)
        .await
        .map_err(failed)?;
    let started = Instant::now();
    let mut said_waiting = false;
    loop {
        match attempt(&client, &me, &settings).await.map_err(failed)? {
            Attempt::Won(lease, how) => {
                return Ok((HeldLease::start(client, me, settings, *lease, say), how));
            }
            Attempt::Raced => continue,
            Attempt::Held {
                holder,
                renewed_ago,
            } => {
                let waited = started.elapsed();
                if waited >= wait {
                    return Err(LeaseError::Held {
                        holder,
                        namespace: settings.namespace.clone(),
                        name: settings.name.clone(),
                        renewed_ago: whole_seconds(renewed_ago),
                        waited: (!wait.is_zero()).then_some(waited),
                    });
                }
                if !said_waiting {
                    said_waiting = true;
                    say(format!(
                        "note: waiting up to {} for the target's lock, held by {holder} (the Lease {}/{}, renewed {} ago)",
                        whole_seconds(wait),
                        settings.namespace,
                        settings.name,
                        whole_seconds(renewed_ago)
                    ));
                }
                tokio::time::sleep(settings.retry_every.min(wait - waited)).await;
            }
        }
    }
}

/// One read of the Lease and, where it is free or expired, one write to take it.
async fn attempt(
    client: &KubeClient,
    me: &LeaseHolder,
    settings: &LeaseSettings,
) -> Result<Attempt, KubeError> {
    let now = jiff::Timestamp::now();
    let Some(current) = client.lease(&settings.namespace, &settings.name).await? else {
        let fresh = claim(me, settings, None, now);
        return Ok(match client.create_lease(&fresh).await? {
            LeaseWrite::Written(lease) => Attempt::Won(lease, Acquired::Free),
            LeaseWrite::Lost => Attempt::Raced,
        });
    };
    let how = match state_of(&current, now) {
        LeaseState::Free => Acquired::Free,
        LeaseState::Gone(previous, because) => Acquired::TakenOver { previous, because },
        LeaseState::Held {
            holder,
            renewed_ago,
        } => {
            return Ok(Attempt::Held {
                holder,
                renewed_ago,
            });
        }
    };
    let taken = claim(me, settings, Some(&current), now);
    Ok(match client.replace_lease(&taken).await? {
        LeaseWrite::Written(lease) => Attempt::Won(lease, how),
        LeaseWrite::Lost => Attempt::Raced,
    })
}

enum LeaseState {
    Free,
    Gone(LeaseHolder, Gone),
    Held {
        holder: LeaseHolder,
        renewed_ago: Duration,
    },
}

/// Whether a Lease is held at `now`: it is while its last renewal (or its acquisition) is
/// younger than its duration. A clock behind or ahead of the holder's moves that by the skew,
/// as with client-go's leases; the renewals' slack absorbs a few seconds.
fn state_of(lease: &Lease, now: jiff::Timestamp) -> LeaseState {
    let spec = lease.spec.clone().unwrap_or_default();
    let identity = spec.holder_identity.unwrap_or_default();
    if identity.is_empty() {
        return LeaseState::Free;
    }
    let holder = LeaseHolder::from_annotations(lease.metadata.annotations.as_ref(), &identity);
    if holder.is_gone() {
        return LeaseState::Gone(holder, Gone::ProcessEnded);
    }
    let Some(renewed) = spec.renew_time.or(spec.acquire_time).map(|t| t.0) else {
        return LeaseState::Gone(holder, Gone::Expired);
    };
    let duration =
        Duration::from_secs(u64::try_from(spec.lease_duration_seconds.unwrap_or(0)).unwrap_or(0));
    let renewed_ago = Duration::try_from(now.duration_since(renewed)).unwrap_or(Duration::ZERO);
    if renewed_ago >= duration {
        LeaseState::Gone(holder, Gone::Expired)
    } else {
        LeaseState::Held {
            holder,
            renewed_ago,
        }
    }
}

/// The Lease as `me` holds it from `now`: a new one, or `current` taken over (its
/// resourceVersion kept, so the write fails if anyone wrote since it was read).
pub(super) fn claim(
    me: &LeaseHolder,
    settings: &LeaseSettings,
    current: Option<&Lease>,
    now: jiff::Timestamp,
) -> Lease {
    let transitions = current
        .and_then(|lease| lease.spec.as_ref())
        .and_then(|spec| spec.lease_transitions)
        .map_or(0, |n| n + 1);
    Lease {
        metadata: ObjectMeta {
            name: Some(settings.name.clone()),
            namespace: Some(settings.namespace.clone()),
            resource_version: current.and_then(|lease| lease.metadata.resource_version.clone()),
            annotations: Some(me.annotations()),
            labels: Some(
                [(
                    "app.kubernetes.io/managed-by".to_string(),
                    "runbook".to_string(),
                )]
                .into(),
            ),
            ..Default::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: Some(me.identity()),
            lease_duration_seconds: Some(
                i32::try_from(settings.duration.as_secs()).unwrap_or(i32::MAX),
            ),
            acquire_time: Some(MicroTime(now)),
            renew_time: Some(MicroTime(now)),
            lease_transitions: Some(transitions),
            ..Default::default()
        }),
    }
}
