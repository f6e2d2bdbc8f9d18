//! The lab twin's cost meter, read over its AWS endpoint (`GET /twin/usage`) and priced by the
//! cost model. Real AWS has no such meter: there the call says so.

use http_body_util::{BodyExt, Empty};
use hyper_util::rt::TokioIo;
use serde::Deserialize;

use std::sync::Arc;

use super::client::AwsClients;
use super::error::AwsError;
use super::trust::CA_BUNDLE_VARIABLE;
use crate::lab::cost::{CostReport, Usage, report};

#[derive(Deserialize)]
struct Meter {
    now_s: f64,
    records: Vec<Usage>,
}

fn failed(message: String) -> AwsError {
    AwsError::new("GetUsage", "CostMeterUnavailable", message)
}

impl AwsClients {
    /// The run's cost so far: resource-hours on the twin's clock times the price table.
    pub async fn cost_report(&self) -> Result<CostReport, AwsError> {
        // An endpoint given on the command line, or by AWS_ENDPOINT_URL (a sourced lab env).
        let url = match self.endpoint_url() {
            Some(url) => Some(url.to_string()),
            None => self.sdk().await.config.endpoint_url().map(str::to_string),
        };
        let Some(url) = url.as_deref() else {
            return Err(failed(
                "cost::report prices the lab twin's meter; real AWS bills through Cost Explorer, which runbook does not read (cost::prices() has the table)".into(),
            ));
        };
        let uri: http::Uri = format!("{}/twin/usage", url.trim_end_matches('/'))
            .parse()
            .map_err(|e| failed(format!("bad endpoint {url}: {e}")))?;
        let authority = uri
            .authority()
            .map(|a| a.to_string())
            .ok_or_else(|| failed(format!("endpoint {url} has no host")))?;
        let stream = tokio::net::TcpStream::connect(&authority)
            .await
            .map_err(|e| failed(format!("cannot reach {authority}: {e}")))?;
        self.count_connection();
        let mut sender = if uri.scheme_str() == Some("https") {
            let stream = self.tls_to(&authority, stream).await?;
            handshake(TokioIo::new(stream), &authority).await?
        } else {
            handshake(TokioIo::new(stream), &authority).await?
        };
        let mut request = http::Request::get(uri.path()).header("host", &authority);
        if let Some(token) = self.lab_token() {
            request = request.header("authorization", format!("Bearer {}", token.expose()));
        }
        let request = request
            .body(Empty::<bytes::Bytes>::new())
            .map_err(|e| failed(e.to_string()))?;
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| failed(format!("{authority}: {e}")))?;
        if response.status() == http::StatusCode::UNAUTHORIZED {
            return Err(failed(format!(
                "{url}/twin/usage wants the lab's admin token: set RUNBOOK_LAB_TOKEN from the env file `lab serve --write-env` wrote"
            )));
        }
        if !response.status().is_success() {
            return Err(failed(format!(
                "{url} has no cost meter (HTTP {} for /twin/usage): it is not the lab twin",
                response.status()
            )));
        }
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| failed(format!("{authority}: {e}")))?
            .to_bytes();
        let meter: Meter = serde_json::from_slice(&body)
            .map_err(|e| failed(format!("{url}/twin/usage is not the twin's meter: {e}")))?;
        Ok(report(&meter.records, meter.now_s))
    }

    /// TLS to the twin's endpoint, trusting the CA its calls trust (the lab's, AWS_CA_BUNDLE's).
    async fn tls_to(
        &self,
        authority: &str,
        stream: tokio::net::TcpStream,
    ) -> Result<tokio_rustls::client::TlsStream<tokio::net::TcpStream>, AwsError> {
        let mut roots = rustls::RootCertStore::empty();
        if let Some(trusted) = self.trusted_ca() {
            roots.add_parsable_certificates(trusted.certificates());
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| failed(e.to_string()))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        let host = authority
            .rsplit_once(':')
            .map_or(authority, |(host, _)| host);
        let name = rustls::pki_types::ServerName::try_from(host.to_string())
            .map_err(|e| failed(format!("{authority}: {e}")))?;
        tokio_rustls::TlsConnector::from(Arc::new(config))
            .connect(name, stream)
            .await
            .map_err(|e| {
                failed(format!(
                    "cannot verify {authority} over TLS ({e}); its CA is the lab's: set {CA_BUNDLE_VARIABLE} to the CA file `lab serve --write-env` wrote"
                ))
            })
    }
}

/// An HTTP/1.1 connection for the one meter read, driven in the background.
async fn handshake<T>(
    io: TokioIo<T>,
    authority: &str,
) -> Result<hyper::client::conn::http1::SendRequest<Empty<bytes::Bytes>>, AwsError>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (sender, connection) = hyper::client::conn::http1::handshake(io)
        .await
        .map_err(|e| failed(format!("{authority}: {e}")))?;
    tokio::spawn(connection);
    Ok(sender)
}
