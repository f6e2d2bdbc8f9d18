//! Accepting a connection on one of the twin's listeners, tuned as an API server's: no Nagle.
//!
//! Without TCP_NODELAY a TLS server's small writes (a session ticket, then the response) wait
//! for the client's delayed ACK, about 40 ms on Linux, on a fair share of fresh connections.

use tokio::net::{TcpListener, TcpStream};

/// The next connection, with Nagle's algorithm off; `None` when accepting failed (out of file
/// descriptors, a connection reset before it was taken), which the caller skips.
pub(super) async fn next_connection(listener: &TcpListener) -> Option<TcpStream> {
    let (stream, _) = listener.accept().await.ok()?;
    // A socket that refuses the option still serves, only slower.
    let _ = stream.set_nodelay(true);
    Some(stream)
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
