//! What an incoming request carries: its headers as text, and its body, bounded as the
//! apiserver bounds it and read as JSON, YAML or Kubernetes' protobuf.

use http::Request;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use serde_json::Value;

use super::protobuf;
use crate::sim::kube::storage::status::ApiError;

/// A header's text, empty when it is missing or not text.
pub(crate) fn header<'a>(request: &'a Request<Incoming>, name: &str) -> &'a str {
    request
        .headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

pub(crate) fn header_text(headers: &http::HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// A review's or token request's body: JSON, or the protobuf client-go sends for `kubectl auth
/// can-i` and `kubectl create token`.
pub(super) async fn read_protobuf_or_json(request: Request<Incoming>) -> Result<Value, ApiError> {
    let bytes = body_bytes(request).await?;
    if let Some(review) = protobuf::reviews::decode(&bytes) {
        return Ok(review);
    }
    serde_json::from_slice(&bytes)
        .map_err(|e| ApiError::bad_request(format!("the review is neither JSON nor protobuf: {e}")))
}

/// The most a request body may hold, as kube-apiserver's `MaxRequestBodyBytes` (3 MiB): a
/// client cannot fill the lab's memory with one request.
const MAX_BODY_BYTES: usize = 3 * 1024 * 1024;

async fn body_bytes(request: Request<Incoming>) -> Result<bytes::Bytes, ApiError> {
    Ok(
        http_body_util::Limited::new(request.into_body(), MAX_BODY_BYTES)
            .collect()
            .await
            .map_err(|e| {
                if e.is::<http_body_util::LengthLimitError>() {
                    ApiError::new(
                        413,
                        "RequestEntityTooLarge",
                        format!("Request entity too large: limit is {MAX_BODY_BYTES}"),
                    )
                } else {
                    ApiError::bad_request(format!("reading the request body: {e}"))
                }
            })?
            .to_bytes(),
    )
}

pub(super) async fn read_body(request: Request<Incoming>) -> Result<Value, ApiError> {
    read_body_and_bytes(request).await.map(|(_, body)| body)
}

/// The body as sent (field validation reads its keys in order, duplicates too) and parsed.
pub(super) async fn read_body_and_bytes(
    request: Request<Incoming>,
) -> Result<(bytes::Bytes, Value), ApiError> {
    let bytes = body_bytes(request).await?;
    if bytes.is_empty() {
        return Ok((bytes, Value::Null));
    }
    // Kubernetes' protobuf envelope starts with `k8s\0` (client-go's default for built-in
    // kinds: every imperative `kubectl create`, `run`, `expose`).
    if bytes.starts_with(b"k8s\0") {
        return protobuf::objects::decode_object(&bytes)
            .map(|body| (bytes, body))
            .ok_or_else(|| {
                ApiError::new(
                    415,
                    "UnsupportedMediaType",
                    "the body is protobuf of a kind the lab twin has no definition of: send it as JSON or YAML (`kubectl create -f`)",
                )
            });
    }
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| ApiError::bad_request("the request body is not UTF-8"))?;
    let body = serde_json::from_str(text)
        .or_else(|_| serde_saphyr::from_str::<Value>(text))
        .map_err(|e| {
            ApiError::bad_request(format!("the request body is neither JSON nor YAML: {e}"))
        })?;
    Ok((bytes, body))
}
