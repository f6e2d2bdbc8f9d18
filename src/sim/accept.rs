//! Accepting a connection on one of the twin's listeners, tuned as an API server's (no Nagle),
//! and serving it over TLS in the protocol the client chose by ALPN.
//!
//! Without TCP_NODELAY a TLS server's small writes (a session ticket, then the response) wait
//! for the client's delayed ACK, about 40 ms on Linux, on a fair share of fresh connections.

use http::{Request, Response};
use hyper::body::{Body, Incoming};
use hyper::server::conn::{http1, http2};
use hyper::service::Service;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The next connection, with Nagle's algorithm off; `None` when accepting failed (out of file
/// descriptors, a connection reset before it was taken), which the caller skips.
pub(super) async fn next_connection(listener: &TcpListener) -> Option<TcpStream> {
    let (stream, _) = listener.accept().await.ok()?;
    // A socket that refuses the option still serves, only slower.
    let _ = stream.set_nodelay(true);
    Some(stream)
}

/// Serves one accepted connection over TLS: HTTP/2 when the client offered it (kubectl, the
/// SDKs), HTTP/1.1 otherwise and for upgrades (exec's WebSocket). A client that fails the
/// handshake (plain http, an untrusted CA) or hangs up mid-request is its own business.
pub(super) async fn serve_tls<S, B>(stream: TcpStream, acceptor: TlsAcceptor, service: S)
where
    S: Service<Request<Incoming>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let Ok(stream) = acceptor.accept(stream).await else {
        return;
    };
    if stream.get_ref().1.alpn_protocol() == Some(b"h2") {
        let _ = http2::Builder::new(TokioExecutor::new())
            .serve_connection(TokioIo::new(stream), service)
            .await;
    } else {
        let _ = http1::Builder::new()
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
        let served = next_connection(&listener).await.expect("a connection");
        assert!(served.nodelay().expect("the option reads"));
        client.await.expect("joined").expect("connected");
    }
}
