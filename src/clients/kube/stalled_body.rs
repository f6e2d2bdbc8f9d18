//! An answer that starts and then stops: the request timeout covers the wait for an answer's
//! head, and this layer covers its body, which fails once no data has come for that long (a
//! proxy or a half-dead connection that stalls mid-list). Watches and upgraded connections
//! (exec) are quiet by design and are left alone.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode, Uri};
use hyper::body::{Body, Frame, SizeHint};
use tokio::time::{Instant, Sleep};

use crate::clock::format_duration;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Why a body failed: no data from `endpoint` for `limit`.
#[derive(Debug)]
pub(super) struct Stalled {
    pub(super) endpoint: String,
    limit: Duration,
}

impl fmt::Display for Stalled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the answer started and then stalled: no data for {} (--request-timeout)",
            format_duration(self.limit)
        )
    }
}

impl std::error::Error for Stalled {}

#[derive(Clone)]
pub(super) struct StalledBodyLayer {
    limit: Duration,
    endpoint: Arc<str>,
}

impl StalledBodyLayer {
    pub(super) fn new(limit: Duration, endpoint: &str) -> Self {
        Self {
            limit,
            endpoint: endpoint.into(),
        }
    }
}

impl<S> tower::Layer<S> for StalledBodyLayer {
    type Service = StalledBodyService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        StalledBodyService {
            inner,
            layer: self.clone(),
        }
    }
}

#[derive(Clone)]
pub(super) struct StalledBodyService<S> {
    inner: S,
    layer: StalledBodyLayer,
}

/// A watch or a followed log may be quiet for as long as nothing happens.
fn streams(uri: &Uri) -> bool {
    uri.query().is_some_and(|query| {
        query
            .split('&')
            .any(|pair| matches!(pair, "watch=true" | "watch=1" | "follow=true" | "follow=1"))
    })
}

impl<S, RequestBody, B> tower::Service<Request<RequestBody>> for StalledBodyService<S>
where
    S: tower::Service<Request<RequestBody>, Response = Response<B>>,
    S::Future: Send + 'static,
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Response<IdleBody<B>>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<RequestBody>) -> Self::Future {
        let guarded = !streams(request.uri());
        let layer = self.layer.clone();
        let answer = self.inner.call(request);
        Box::pin(async move {
            let response = answer.await?;
            let guarded = guarded && response.status() != StatusCode::SWITCHING_PROTOCOLS;
            Ok(response.map(|body| IdleBody {
                inner: Box::pin(body),
                idle: guarded.then(|| Box::pin(tokio::time::sleep(layer.limit))),
                layer,
            }))
        })
    }
}

/// A response body that fails once no frame has come for the layer's limit.
pub(super) struct IdleBody<B> {
    inner: Pin<Box<B>>,
    idle: Option<Pin<Box<Sleep>>>,
    layer: StalledBodyLayer,
}

impl<B> Body for IdleBody<B>
where
    B: Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        match this.inner.as_mut().poll_frame(cx) {
            Poll::Ready(frame) => {
                if let Some(idle) = &mut this.idle {
                    idle.as_mut().reset(Instant::now() + this.layer.limit);
                }
                Poll::Ready(frame.map(|result| result.map_err(Into::into)))
            }
            Poll::Pending => {
                let stalled = this
                    .idle
                    .as_mut()
                    .is_some_and(|idle| idle.as_mut().poll(cx).is_ready());
                if stalled {
                    return Poll::Ready(Some(Err(Box::new(Stalled {
                        endpoint: this.layer.endpoint.to_string(),
                        limit: this.layer.limit,
                    }))));
                }
                Poll::Pending
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watches_and_followed_logs_are_not_guarded() {
        for (uri, stream) in [
            ("/api/v1/pods?watch=true&fieldSelector=x", true),
            ("/api/v1/namespaces/a/pods/p/log?follow=true", true),
            ("/api/v1/pods?limit=500", false),
            ("/api/v1/pods", false),
            ("/api/v1/pods?watchy=true", false),
        ] {
            assert_eq!(streams(&uri.parse().unwrap()), stream, "{uri}");
        }
    }

    #[tokio::test]
    async fn a_body_that_stops_fails_after_the_limit_and_names_its_server() {
        use futures::SinkExt;
        use http_body_util::{BodyExt, StreamBody};
        let limit = Duration::from_secs(1);
        let (mut sender, frames) =
            futures::channel::mpsc::channel::<Result<Frame<Bytes>, std::io::Error>>(1);
        let mut body = IdleBody {
            inner: Box::pin(StreamBody::new(frames)),
            idle: Some(Box::pin(tokio::time::sleep(limit))),
            layer: StalledBodyLayer::new(limit, "https://api.example"),
        };
        let started = Instant::now();
        for chunk in ["{\"items\":[", "1"] {
            // Data well inside the limit keeps the body alive.
            tokio::time::sleep(Duration::from_millis(100)).await;
            sender
                .send(Ok(Frame::data(Bytes::from(chunk))))
                .await
                .unwrap();
            let frame = body.frame().await.unwrap().unwrap();
            assert_eq!(frame.into_data().unwrap(), Bytes::from(chunk));
        }
        let error = body.frame().await.unwrap().unwrap_err();
        assert!(started.elapsed() >= limit + Duration::from_millis(200));
        let stalled = error.downcast_ref::<Stalled>().expect("a Stalled error");
        assert_eq!(stalled.endpoint, "https://api.example");
        assert_eq!(
            error.to_string(),
            "the answer started and then stalled: no data for 1s (--request-timeout)"
        );
        drop(sender);
    }
}
