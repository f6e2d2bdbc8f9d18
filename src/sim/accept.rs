//! Accepting a connection on one of the twin's listeners, tuned as an API server's (no Nagle),
//! and serving it over TLS in the protocol the client chose by ALPN, within the time limits an
//! API server keeps: one local client cannot hold the lab by opening connections and saying
//! nothing, or by trickling a request's headers.
//!
//! Without TCP_NODELAY a TLS server's small writes (a session ticket, then the response) wait
//! for the client's delayed ACK, about 40 ms on Linux, on a fair share of fresh connections.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use http::{Request, Response};
use hyper::body::{Body, Incoming};
use hyper::server::conn::{http1, http2};
use hyper::service::Service;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// How long a client may take over its TLS handshake: one that connects and says nothing is
/// let go, as an API server's read timeouts let it go, instead of holding a descriptor for good.
pub(super) const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// How long an HTTP/1.1 client may take to send a request's headers (kube-apiserver's
/// ReadHeaderTimeout, 32 s): a slowloris that trickles a header at a time is let go.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(32);

/// The most connections one peer address may have in their TLS handshake at once. Every local
/// client is 127.0.0.1, so a peer's newest connection always gets in: past this many, its oldest
/// connection still in its handshake is let go. A flood of silent connections then holds at
/// most this many descriptors, and kubectl's next connection is served at once.
pub(super) const HANDSHAKES_PER_PEER: usize = 256;

/// A connection accepted on a listener: the stream, and its place among its peer's handshakes.
pub(super) struct Accepted {
    stream: TcpStream,
    ticket: Ticket,
}

/// A peer's connections in their handshake, oldest first: each one's number and its signal to go.
type Queue = VecDeque<(u64, Arc<tokio::sync::Notify>)>;

/// The connections in their handshake, by peer; one per listener.
#[derive(Default, Clone)]
pub(super) struct Handshakes {
    pending: Arc<Mutex<HashMap<IpAddr, Queue>>>,
    next: Arc<std::sync::atomic::AtomicU64>,
}

/// One connection's place in [`Handshakes`]: notified when it is to be let go; out of the
/// queue once dropped.
struct Ticket {
    peer: IpAddr,
    id: u64,
    let_go: Arc<tokio::sync::Notify>,
    handshakes: Handshakes,
}

impl Handshakes {
    fn admit(&self, peer: IpAddr) -> Ticket {
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let let_go = Arc::new(tokio::sync::Notify::new());
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        let queue = pending.entry(peer).or_default();
        queue.push_back((id, let_go.clone()));
        if queue.len() > HANDSHAKES_PER_PEER
            && let Some((_, oldest)) = queue.pop_front()
        {
            // notify_one keeps the permit if the oldest is not waiting yet.
            oldest.notify_one();
        }
        Ticket {
            peer,
            id,
            let_go,
            handshakes: self.clone(),
        }
    }

    /// How many connections of `peer` are in their handshake now.
    #[cfg(test)]
    fn pending(&self, peer: IpAddr) -> usize {
        let pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        pending.get(&peer).map_or(0, VecDeque::len)
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut pending = self
            .handshakes
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(queue) = pending.get_mut(&self.peer) {
            queue.retain(|(id, _)| *id != self.id);
            if queue.is_empty() {
                pending.remove(&self.peer);
            }
        }
    }
}

/// The next connection, with Nagle's algorithm off and its place among its peer's handshakes;
/// `None` when accepting failed (out of file descriptors, a connection reset before it was
/// taken), which the caller skips.
pub(super) async fn next_connection(
    listener: &TcpListener,
    handshakes: &Handshakes,
) -> Option<Accepted> {
    let (stream, peer) = listener.accept().await.ok()?;
    // A socket that refuses the option still serves, only slower.
    let _ = stream.set_nodelay(true);
    Some(Accepted {
        stream,
        ticket: handshakes.admit(peer.ip()),
    })
}

/// Serves one accepted connection over TLS: HTTP/2 when the client offered it (kubectl, the
/// SDKs), HTTP/1.1 otherwise and for upgrades (exec's WebSocket). A client that fails the
/// handshake (plain http, an untrusted CA) or hangs up mid-request is its own business.
pub(super) async fn serve_tls<S, B>(accepted: Accepted, acceptor: TlsAcceptor, service: S)
where
    S: Service<Request<Incoming>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let Accepted { stream, ticket } = accepted;
    let handshake = tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream));
    let stream = tokio::select! {
        done = handshake => match done {
            Ok(Ok(stream)) => stream,
            // Timed out, or not TLS: let go.
            _ => return,
        },
        // The peer's newer connections pushed this one out.
        () = ticket.let_go.notified() => return,
    };
    drop(ticket);
    if stream.get_ref().1.alpn_protocol() == Some(b"h2") {
        let _ = http2::Builder::new(TokioExecutor::new())
            .serve_connection(TokioIo::new(stream), service)
            .await;
    } else {
        let _ = http1::Builder::new()
            .timer(hyper_util::rt::TokioTimer::new())
            .header_read_timeout(HEADER_READ_TIMEOUT)
            .serve_connection(TokioIo::new(stream), service)
            .with_upgrades()
            .await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn accepted_connections_send_without_waiting_for_acks() {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await.expect("bind");
        let address = listener.local_addr().expect("address");
        let client = tokio::spawn(TcpStream::connect(address));
        let served = next_connection(&listener, &Handshakes::default())
            .await
            .expect("a connection");
        assert!(served.stream.nodelay().expect("the option reads"));
        client.await.expect("joined").expect("connected");
    }

    #[test]
    fn past_the_bound_a_peers_oldest_handshake_is_let_go_and_a_finished_one_leaves() {
        let handshakes = Handshakes::default();
        let peer: IpAddr = [127, 0, 0, 1].into();
        let other: IpAddr = [127, 0, 0, 2].into();
        let tickets: Vec<Ticket> = (0..HANDSHAKES_PER_PEER)
            .map(|_| handshakes.admit(peer))
            .collect();
        let beside = handshakes.admit(other);
        assert_eq!(handshakes.pending(peer), HANDSHAKES_PER_PEER);
        let newest = handshakes.admit(peer);
        assert_eq!(handshakes.pending(peer), HANDSHAKES_PER_PEER);
        // The oldest was told to go (its permit waits for it); the others were not.
        let told = |ticket: &Ticket| {
            let notified = ticket.let_go.notified();
            futures::pin_mut!(notified);
            futures::FutureExt::now_or_never(notified).is_some()
        };
        assert!(told(&tickets[0]));
        assert!(!told(&tickets[1]));
        drop(newest);
        drop(tickets);
        assert_eq!(handshakes.pending(peer), 0);
        assert_eq!(handshakes.pending(other), 1);
        drop(beside);
        assert_eq!(handshakes.pending(other), 0);
    }
}
