//! The Kubernetes API over HTTPS (HTTP/2 or HTTP/1.1, by ALPN) on loopback, for kube-rs, kubectl and the twin's own tests.

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use super::handlers;
use crate::sim::accept::{Handshakes, next_connection, serve_tls};
use crate::sim::tls::LabTls;
use crate::sim::twin::Twin;

pub(crate) type Body = BoxBody<Bytes, std::io::Error>;

pub(crate) fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into())
        .map_err(|never| match never {})
        .boxed()
}

pub(crate) fn json_response(status: u16, value: &Value) -> Response<Body> {
    Response::builder()
        .status(StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
        .header("content-type", "application/json")
        .header("audit-id", "00000000-0000-4000-8000-000000000000")
        .body(full(serde_json::to_vec(value).unwrap_or_default()))
        .expect("static headers are valid")
}

pub(crate) fn text_response(status: u16, text: String) -> Response<Body> {
    Response::builder()
        .status(StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
        .header("content-type", "text/plain; charset=utf-8")
        .header("x-content-type-options", "nosniff")
        .body(full(text))
        .expect("static headers are valid")
}

/// Serves the API over TLS on `listener` until the task is dropped.
pub(crate) async fn serve(twin: Arc<Twin>, listener: TcpListener, acceptor: TlsAcceptor) {
    let handshakes = Handshakes::default();
    loop {
        let Some(stream) = next_connection(&listener, &handshakes).await else {
            continue;
        };
        twin.requests.count_kube_connection();
        let twin = twin.clone();
        let service = service_fn(move |request: Request<Incoming>| {
            let twin = twin.clone();
            async move {
                twin.requests.count_kube();
                let latency = twin.read_kube(|s| s.latency);
                if !latency.is_zero() {
                    tokio::time::sleep(latency).await;
                }
                Ok::<_, Infallible>(handlers::handle(twin, request).await)
            }
        });
        tokio::spawn(serve_tls(stream, acceptor.clone(), service));
    }
}

/// Where the API listens and the CA its certificate is signed by.
pub(crate) struct Served {
    /// `https://127.0.0.1:PORT`.
    pub(crate) url: String,
    pub(crate) ca_pem: String,
    pub(crate) ca_der: Vec<u8>,
    /// The same identity, for the twin's AWS endpoint: one CA for the whole lab.
    pub(crate) acceptor: TlsAcceptor,
}

/// Binds 127.0.0.1 (port 0: an ephemeral port) with a fresh TLS identity and serves in the
/// background; the cluster's DescribeCluster then gives that CA.
pub(crate) async fn start(twin: Arc<Twin>, port: u16) -> std::io::Result<Served> {
    let tls = LabTls::generate().map_err(std::io::Error::other)?;
    let listener = TcpListener::bind(("127.0.0.1", port)).await?;
    let address = listener.local_addr()?;
    twin.aws(|state| state.kube_ca_pem = Some(tls.ca_pem.clone()));
    tokio::spawn(serve(twin, listener, tls.acceptor.clone()));
    Ok(Served {
        url: format!("https://{address}"),
        ca_pem: tls.ca_pem,
        ca_der: tls.ca_der,
        acceptor: tls.acceptor,
    })
}
