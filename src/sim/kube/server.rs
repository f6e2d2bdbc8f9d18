//! The Kubernetes API over HTTP/1.1 on loopback, for kube-rs, kubectl and the twin's own tests.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpListener;

use super::handlers;
use crate::sim::twin::Twin;

pub type Body = BoxBody<Bytes, std::io::Error>;

pub fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into())
        .map_err(|never| match never {})
        .boxed()
}

pub fn json_response(status: u16, value: &Value) -> Response<Body> {
    Response::builder()
        .status(StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
        .header("content-type", "application/json")
        .header("audit-id", "00000000-0000-4000-8000-000000000000")
        .body(full(serde_json::to_vec(value).unwrap_or_default()))
        .expect("static headers are valid")
}

pub fn text_response(status: u16, text: String) -> Response<Body> {
    Response::builder()
        .status(StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
        .header("content-type", "text/plain; charset=utf-8")
        .header("x-content-type-options", "nosniff")
        .body(full(text))
        .expect("static headers are valid")
}

/// Serves the API on `listener` until the task is dropped.
pub async fn serve(twin: Arc<Twin>, listener: TcpListener) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let twin = twin.clone();
        tokio::spawn(async move {
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
            // A client that hangs up mid-request is its own business.
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .with_upgrades()
                .await;
        });
    }
}

/// Binds 127.0.0.1 (port 0: an ephemeral port) and serves in the background.
pub async fn start(twin: Arc<Twin>, port: u16) -> std::io::Result<SocketAddr> {
    let listener = TcpListener::bind(("127.0.0.1", port)).await?;
    let address = listener.local_addr()?;
    tokio::spawn(serve(twin, listener));
    Ok(address)
}
