//! The bearer token on every request, from a source that may renew it: the lab twin's admin
//! token, or an EKS token presigned anew before the last one expires. A tower layer outside
//! kube's own stack, so a token is fetched before the request waits for a connection.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::{HeaderValue, Request};

use crate::auth::secret::Secret;

type BoxError = Box<dyn std::error::Error + Send + Sync>;
pub type TokenFuture = Pin<Box<dyn Future<Output = Result<Secret, BoxError>> + Send>>;

/// Where a client's bearer token comes from.
pub trait TokenSource: Send + Sync {
    /// The token to send now (cached by the source while it is good).
    fn token(&self) -> TokenFuture;
}

/// A token that never changes (the lab twin's admin token).
pub struct Fixed(pub Secret);

impl TokenSource for Fixed {
    fn token(&self) -> TokenFuture {
        let token = self.0.clone();
        Box::pin(async move { Ok(token) })
    }
}

#[derive(Clone)]
pub(super) struct BearerLayer(pub(super) Arc<dyn TokenSource>);

impl<S> tower::Layer<S> for BearerLayer {
    type Service = WithBearer<S>;

    fn layer(&self, inner: S) -> Self::Service {
        WithBearer {
            inner,
            source: self.0.clone(),
            pending: None,
            ready: None,
        }
    }
}

pub(super) struct WithBearer<S> {
    inner: S,
    source: Arc<dyn TokenSource>,
    pending: Option<TokenFuture>,
    ready: Option<Secret>,
}

impl<S, B> tower::Service<Request<B>> for WithBearer<S>
where
    S: tower::Service<Request<B>>,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        if self.ready.is_none() {
            let source = &self.source;
            let pending = self.pending.get_or_insert_with(|| source.token());
            match pending.as_mut().poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(result) => {
                    self.pending = None;
                    self.ready = Some(result?);
                }
            }
        }
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, mut request: Request<B>) -> Self::Future {
        if let Some(token) = self.ready.take()
            && let Ok(mut value) = HeaderValue::from_str(&format!("Bearer {}", token.expose()))
        {
            value.set_sensitive(true);
            request
                .headers_mut()
                .insert(http::header::AUTHORIZATION, value);
        }
        let answer = self.inner.call(request);
        Box::pin(async move { answer.await.map_err(Into::into) })
    }
}
