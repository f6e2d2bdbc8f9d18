//! The Lease lock against the twin's API server, which keeps Leases with the real API's
//! optimistic concurrency: races, expiry, take-over, release and a lost Lease.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::*;
use crate::clients::kube::{Fixed, KubeClient};
use crate::clock::VirtualClock;
use crate::sim::{Twin, serve_kube};

async fn cluster() -> Arc<KubeClient> {
    // As `runbook` does on start: rustls with ring, for the client.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let twin = Twin::new(Arc::new(VirtualClock::new()));
    let served = serve_kube(twin.clone(), 0).await.expect("the twin serves");
    let token = twin.secrets.admin_token.clone();
    Arc::new(
        KubeClient::for_endpoint(
            &served.url,
            Some(served.ca_der),
            Some(Arc::new(Fixed(token))),
        )
        .expect("a client"),
    )
}

fn holder(run_id: &str) -> LeaseHolder {
    LeaseHolder {
        run_id: run_id.into(),
        runbook: "gpu-lab.rhai".into(),
        host: "ci-1".into(),
        pid: 7,
        started: "2026-12-07T06:00:00Z".into(),
        // Another machine's: its pid cannot be looked up here, so only expiry frees its Lease.
        process_space: "elsewhere/pid:[1]".into(),
    }
}

fn quick() -> LeaseSettings {
    LeaseSettings {
        duration: Duration::from_millis(1500),
        renew_every: Duration::from_millis(300),
        retry_every: Duration::from_millis(100),
        ..LeaseSettings::default()
    }
}

fn said() -> (Say, Arc<Mutex<Vec<String>>>) {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let kept = lines.clone();
    let say: Say = Arc::new(move |line| kept.lock().expect("lines").push(line));
    (say, lines)
}

#[tokio::test]
async fn of_two_runners_racing_exactly_one_holds_the_lease_and_the_other_names_it() {
    let client = cluster().await;
    let (say, _) = said();
    let (a, b) = tokio::join!(
        acquire(
            client.clone(),
            holder("run-a"),
            quick(),
            Duration::ZERO,
            say.clone()
        ),
        acquire(
            client.clone(),
            holder("run-b"),
            quick(),
            Duration::ZERO,
            say.clone()
        ),
    );
    let (won, refused) = match (a, b) {
        (Ok(won), Err(refused)) | (Err(refused), Ok(won)) => (won, refused),
        (a, b) => panic!("expected one winner: {:?} / {:?}", a.is_ok(), b.is_ok()),
    };
    assert_eq!(won.1, Acquired::Free);
    let message = refused.to_string();
    assert!(
        message.contains("the target is in use by run run-"),
        "{message}"
    );
    assert!(message.contains("gpu-lab.rhai, on ci-1 pid 7"), "{message}");
    assert!(message.contains("runbook/target-lock"), "{message}");
    assert!(won.0.release().await.expect("released"));
    assert!(
        client
            .lease("runbook", "target-lock")
            .await
            .expect("read")
            .is_none()
    );
}

#[tokio::test]
async fn a_runner_that_stopped_renewing_is_taken_over_once_its_lease_expires() {
    let client = cluster().await;
    let (say, _) = said();
    let (first, _) = acquire(
        client.clone(),
        holder("killed"),
        quick(),
        Duration::ZERO,
        say.clone(),
    )
    .await
    .expect("the first holds it");
    // As a killed runner: no more renewals, and no release.
    drop(first);
    let refused = acquire(
        client.clone(),
        holder("next"),
        quick(),
        Duration::ZERO,
        say.clone(),
    )
    .await
    .err()
    .expect("still held just after");
    assert!(refused.to_string().contains("run killed"), "{refused}");
    let started = std::time::Instant::now();
    let (second, how) = acquire(
        client.clone(),
        holder("next"),
        quick(),
        Duration::from_secs(5),
        say,
    )
    .await
    .expect("taken over");
    assert_eq!(
        how,
        Acquired::TakenOver {
            previous: holder("killed"),
            because: Gone::Expired
        }
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    let lease = client
        .lease("runbook", "target-lock")
        .await
        .expect("read")
        .expect("there");
    let spec = lease.spec.expect("a spec");
    assert_eq!(spec.holder_identity.as_deref(), Some("next@ci-1"));
    assert_eq!(spec.lease_transitions, Some(1));
    second.release().await.expect("released");
}

#[tokio::test]
async fn a_waiting_runner_starts_when_the_holder_gives_the_lease_back() {
    let client = cluster().await;
    let (say, _) = said();
    let (first, _) = acquire(
        client.clone(),
        holder("first"),
        quick(),
        Duration::ZERO,
        say.clone(),
    )
    .await
    .expect("held");
    let waiting = tokio::spawn(acquire(
        client.clone(),
        holder("second"),
        quick(),
        Duration::from_secs(10),
        say,
    ));
    // Held through several renewals, then given back.
    tokio::time::sleep(Duration::from_millis(2000)).await;
    assert!(
        !waiting.is_finished(),
        "the second waits while the first renews"
    );
    assert!(first.release().await.expect("released"));
    let (second, how) = waiting.await.expect("joined").expect("the second holds it");
    assert_eq!(how, Acquired::Free);
    second.release().await.expect("released");
}

#[tokio::test]
async fn a_lease_taken_by_another_is_lost_and_said_so() {
    let client = cluster().await;
    let (say, _) = said();
    let (held, _) = acquire(client.clone(), holder("mine"), quick(), Duration::ZERO, say)
        .await
        .expect("held");
    let mut lost = held.lost();
    let current = client
        .lease("runbook", "target-lock")
        .await
        .expect("read")
        .expect("there");
    let theirs = lease::claim(
        &holder("theirs"),
        &quick(),
        Some(&current),
        jiff::Timestamp::now(),
    );
    assert!(matches!(
        client.replace_lease(&theirs).await.expect("written"),
        crate::clients::kube::LeaseWrite::Written(_)
    ));
    tokio::time::timeout(Duration::from_secs(5), lost.wait_for(Option::is_some))
        .await
        .expect("lost within a renewal")
        .expect("a watch");
    let why = lost.borrow().clone().expect("lost").why;
    assert!(why.contains("was taken over by run theirs"), "{why}");
    // Theirs stays: giving back a lost Lease deletes nothing.
    assert!(!held.release().await.expect("released"));
    assert!(
        client
            .lease("runbook", "target-lock")
            .await
            .expect("read")
            .is_some()
    );
}

#[tokio::test]
async fn a_holder_whose_process_ended_on_this_machine_is_taken_over_at_once() {
    let client = cluster().await;
    let (say, _) = said();
    let dead = LeaseHolder {
        pid: 1 << 23,
        process_space: process_space(),
        ..holder("killed-here")
    };
    let (first, _) = acquire(
        client.clone(),
        dead.clone(),
        quick(),
        Duration::ZERO,
        say.clone(),
    )
    .await
    .expect("held");
    drop(first);
    let (second, how) = acquire(client.clone(), holder("next"), quick(), Duration::ZERO, say)
        .await
        .expect("taken over without waiting");
    assert_eq!(
        how,
        Acquired::TakenOver {
            previous: dead,
            because: Gone::ProcessEnded
        }
    );
    second.release().await.expect("released");
}

#[tokio::test]
async fn a_delete_on_a_stale_resource_version_is_refused_and_the_lease_stays() {
    let client = cluster().await;
    let (say, _) = said();
    let (held, _) = acquire(client.clone(), holder("mine"), quick(), Duration::ZERO, say)
        .await
        .expect("held");
    let current = client
        .lease("runbook", "target-lock")
        .await
        .expect("read")
        .expect("there");
    let version = current.metadata.resource_version.expect("a version");
    let stale = format!("{}0", version);
    assert!(
        !client
            .delete_lease("runbook", "target-lock", &stale)
            .await
            .expect("a 409 is an answer, not an error")
    );
    assert!(
        client
            .lease("runbook", "target-lock")
            .await
            .expect("read")
            .is_some()
    );
    assert!(held.release().await.expect("released"));
}
