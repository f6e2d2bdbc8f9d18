//! The HTTP under kube's client. Requests share one connection: HTTP/2 where the server offers
//! it by ALPN (kube-apiserver does), with the first request going alone so that the others
//! find its connection instead of each opening one. Exec needs an HTTP/1.1 upgrade, which
//! HTTP/2 has no room for, so upgrades get a client of their own. Every TCP connection either
//! client opens is counted, for the run's report.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Request, Response, Uri};
use http_body_util::BodyExt;
use http_body_util::combinators::UnsyncBoxBody;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use kube::client::{Body, ClientBuilder, ConfigExt};
use tower::util::BoxService;
use tower::{BoxError, ServiceBuilder, ServiceExt};

use super::error::KubeError;
use crate::clients::first_alone::{Gate, OpenOnDrop};

/// What the stack answers: the body boxed, so that every layer above sees one type.
pub(super) type Answer = Response<UnsyncBoxBody<Bytes, BoxError>>;
pub(super) type Stack = BoxService<Request<Body>, Answer, BoxError>;

/// Which kind of traffic a client carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Traffic {
    /// Reads, writes, watches and logs: HTTP/2 offered, one connection shared.
    Requests,
    /// Exec: HTTP/1.1 only, since its WebSocket is an HTTP/1.1 upgrade.
    Upgrades,
}

/// TCP connections opened to the API server, by traffic.
#[derive(Debug, Default)]
pub struct Connections {
    requests: Arc<AtomicU64>,
    upgrades: Arc<AtomicU64>,
}

impl Connections {
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    pub fn upgrades(&self) -> u64 {
        self.upgrades.load(Ordering::Relaxed)
    }

    /// The count a client carrying `traffic` adds to.
    fn of(&self, traffic: Traffic) -> Arc<AtomicU64> {
        match traffic {
            Traffic::Requests => self.requests.clone(),
            Traffic::Upgrades => self.upgrades.clone(),
        }
    }
}

/// kube's own stack (base URI, retries of 5xx and 429, the kubeconfig's auth and extra
/// headers) over a hyper client made here, so that HTTP/2 and the counting are ours.
pub(super) fn stack(
    config: &kube::Config,
    traffic: Traffic,
    connections: &Connections,
) -> Result<ClientBuilder<Stack>, KubeError> {
    // The caller says which client this was for.
    let failed = |e: kube::Error| KubeError::Config(e.to_string());
    let mut tcp = HttpConnector::new();
    tcp.enforce_http(false);
    tcp.set_nodelay(true);
    let tcp = Counting {
        inner: tcp,
        opened: connections.of(traffic),
    };
    let tls = config.rustls_client_config().map_err(failed)?;
    let https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_or_http();
    let https = match &config.tls_server_name {
        Some(name) => https.with_server_name_resolver(hyper_rustls::FixedServerNameResolver::new(
            name.clone().try_into().map_err(|e| {
                KubeError::Config(format!("`{name}` is not a TLS server name: {e}"))
            })?,
        )),
        None => https,
    };
    let https = match traffic {
        Traffic::Requests => https.enable_http1().enable_http2().wrap_connector(tcp),
        Traffic::Upgrades => https.enable_http1().wrap_connector(tcp),
    };
    let mut connector = hyper_timeout::TimeoutConnector::new(https);
    connector.set_connect_timeout(config.connect_timeout);
    connector.set_read_timeout(config.read_timeout);
    connector.set_write_timeout(config.write_timeout);
    let hyper = hyper_util::client::legacy::Builder::new(TokioExecutor::new()).build(connector);
    let gate = match traffic {
        Traffic::Requests => Some(FirstAloneLayer::default()),
        Traffic::Upgrades => None,
    };
    let retry = config
        .default_retry
        .then(|| tower::retry::RetryLayer::new(kube::client::retry::RetryPolicy::server_retry()));
    let service = ServiceBuilder::new()
        .layer(config.base_uri_layer())
        .option_layer(retry)
        .option_layer(config.auth_layer().map_err(failed)?)
        .layer(config.extra_headers_layer().map_err(failed)?)
        .map_err(BoxError::from)
        .option_layer(gate)
        .map_response(|response: Response<hyper::body::Incoming>| {
            response.map(|body| body.map_err(BoxError::from).boxed_unsync())
        })
        .service(hyper);
    Ok(ClientBuilder::new(
        BoxService::new(service),
        config.default_namespace.clone(),
    ))
}

/// A TCP connector that counts the connections it makes.
#[derive(Clone)]
struct Counting {
    inner: HttpConnector,
    opened: Arc<AtomicU64>,
}

impl tower::Service<Uri> for Counting {
    type Response = <HttpConnector as tower::Service<Uri>>::Response;
    type Error = <HttpConnector as tower::Service<Uri>>::Error;
    type Future =
        Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send + 'static>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let connecting = self.inner.call(uri);
        let opened = self.opened.clone();
        Box::pin(async move {
            let stream = connecting.await?;
            opened.fetch_add(1, Ordering::Relaxed);
            Ok(stream)
        })
    }
}

/// Lets the first request through alone and holds the rest until its answer starts (or it
/// fails): by then its connection is in the pool, and an HTTP/2 one carries them all. Without
/// it, the requests a run starts at once (readyz, version, discovery) each open a connection
/// before any has said it speaks HTTP/2.
#[derive(Clone, Default)]
struct FirstAloneLayer {
    gate: Arc<Gate>,
}

impl<S> tower::Layer<S> for FirstAloneLayer {
    type Service = FirstAlone<S>;

    fn layer(&self, inner: S) -> Self::Service {
        FirstAlone {
            inner,
            gate: self.gate.clone(),
        }
    }
}

#[derive(Clone)]
struct FirstAlone<S> {
    inner: S,
    gate: Arc<Gate>,
}

impl<S, R> tower::Service<R> for FirstAlone<S>
where
    S: tower::Service<R> + Clone + Send + 'static,
    S::Future: Send + 'static,
    R: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future =
        Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send + 'static>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: R) -> Self::Future {
        if self.gate.is_open() {
            return Box::pin(self.inner.call(request));
        }
        if self.gate.take_first() {
            let answer = self.inner.call(request);
            let opens = OpenOnDrop::new(self.gate.clone());
            return Box::pin(async move {
                let answer = answer.await;
                drop(opens);
                answer
            });
        }
        // Called ready but sent later: the clone is made ready again before it sends.
        let inner = self.inner.clone();
        let gate = self.gate.clone();
        Box::pin(async move {
            gate.wait().await;
            inner.oneshot(request).await
        })
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;
    use std::sync::Mutex;
    use std::time::Duration;

    use tower::{Layer, Service};

    use super::*;

    /// A service that counts the calls that reached it; call 0 answers once `release` fires.
    fn held_first(
        reached: Arc<AtomicU64>,
        release: tokio::sync::oneshot::Receiver<()>,
    ) -> impl tower::Service<u32, Response = u32, Error = Infallible, Future: Send> + Clone + Send
    {
        let release = Arc::new(Mutex::new(Some(release)));
        tower::service_fn(move |n: u32| {
            reached.fetch_add(1, Ordering::SeqCst);
            let held = (n == 0)
                .then(|| release.lock().expect("lock").take())
                .flatten();
            async move {
                if let Some(held) = held {
                    let _ = held.await;
                }
                Ok::<_, Infallible>(n)
            }
        })
    }

    #[tokio::test]
    async fn the_rest_wait_for_the_first_answer_then_go_together() {
        let reached = Arc::new(AtomicU64::new(0));
        let (release, held) = tokio::sync::oneshot::channel();
        let mut gated = FirstAloneLayer::default().layer(held_first(reached.clone(), held));
        let first = tokio::spawn(gated.ready().await.expect("ready").call(0));
        let second = tokio::spawn(gated.ready().await.expect("ready").call(1));
        let third = tokio::spawn(gated.ready().await.expect("ready").call(2));
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(reached.load(Ordering::SeqCst), 1, "only the first went out");
        release.send(()).expect("the first is waiting");
        assert_eq!(first.await.expect("joined").expect("answered"), 0);
        assert_eq!(second.await.expect("joined").expect("answered"), 1);
        assert_eq!(third.await.expect("joined").expect("answered"), 2);
        assert_eq!(reached.load(Ordering::SeqCst), 3);
        // Open now: a later request goes straight through.
        assert_eq!(
            gated
                .ready()
                .await
                .expect("ready")
                .call(3)
                .await
                .expect("answered"),
            3
        );
    }

    #[tokio::test]
    async fn a_first_request_given_up_still_lets_the_rest_go() {
        let reached = Arc::new(AtomicU64::new(0));
        let (_release, held) = tokio::sync::oneshot::channel();
        let mut gated = FirstAloneLayer::default().layer(held_first(reached.clone(), held));
        let first = gated.ready().await.expect("ready").call(0);
        let second = tokio::spawn(gated.ready().await.expect("ready").call(1));
        drop(first);
        let answer = tokio::time::timeout(Duration::from_secs(5), second).await;
        assert_eq!(
            answer
                .expect("not held")
                .expect("joined")
                .expect("answered"),
            1
        );
    }
}
