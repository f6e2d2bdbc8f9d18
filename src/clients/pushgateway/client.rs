//! `PUT /metrics/job/<job>/<label>@base64/<value>...` with the text exposition format, over
//! plain HTTP (a Pushgateway inside the cluster or next to the CI runner). A PUT replaces
//! every series of its group, which is why a run's last success goes to a group of its own.

use std::time::Duration;

use http_body_util::{BodyExt as _, Full};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;

/// How long one push may take, connection included.
const TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
pub enum PushError {
    #[error("--pushgateway {url}: {why}")]
    Url { url: String, why: String },
    #[error("the Pushgateway at {url} did not answer within {}s", TIMEOUT.as_secs())]
    Timeout { url: String },
    #[error("the Pushgateway at {url}")]
    Connect {
        url: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the Pushgateway at {url}")]
    Http {
        url: String,
        #[source]
        source: hyper::Error,
    },
    #[error("the Pushgateway refused the push to {url}: HTTP {status}: {body}")]
    Refused {
        url: String,
        status: u16,
        body: String,
    },
}

/// Where to push: `http://host:port` with an optional path prefix.
#[derive(Debug, Clone)]
pub struct Pushgateway {
    host: String,
    port: u16,
    prefix: String,
    url: String,
}

impl Pushgateway {
    pub fn new(url: &str) -> Result<Self, PushError> {
        let bad = |why: &str| PushError::Url {
            url: url.to_string(),
            why: why.to_string(),
        };
        let uri: http::Uri = url
            .parse()
            .map_err(|_| bad("not a URL; give http://HOST:PORT"))?;
        match uri.scheme_str() {
            Some("http") => {}
            Some("https") => {
                return Err(bad(
                    "only http:// is supported: reach an https Pushgateway through a local proxy",
                ));
            }
            _ => return Err(bad("give http://HOST:PORT")),
        }
        let host = uri.host().ok_or_else(|| bad("no host"))?.to_string();
        let prefix = uri.path().trim_end_matches('/').to_string();
        Ok(Self {
            host,
            port: uri.port_u16().unwrap_or(80),
            prefix,
            url: url.trim_end_matches('/').to_string(),
        })
    }

    /// The group's path: the job, then each grouping label, values in base64url so that a
    /// runbook path's slashes survive.
    pub fn group_path(&self, job: &str, grouping: &[(&str, &str)]) -> String {
        let encode = |value: &str| base64url(value.as_bytes());
        let mut path = format!("{}/metrics/job@base64/{}", self.prefix, encode(job));
        for (name, value) in grouping {
            // An empty value is written `=` (base64 of nothing), as the Pushgateway documents.
            let value = if value.is_empty() {
                "=".to_string()
            } else {
                encode(value)
            };
            path.push_str(&format!("/{name}@base64/{value}"));
        }
        path
    }

    /// Replaces the group's series with `body` (Prometheus text).
    pub async fn put(
        &self,
        job: &str,
        grouping: &[(&str, &str)],
        body: String,
    ) -> Result<(), PushError> {
        let path = self.group_path(job, grouping);
        let url = format!("http://{}:{}{path}", self.host, self.port);
        match tokio::time::timeout(TIMEOUT, self.send(&path, &url, body)).await {
            Ok(result) => result,
            Err(_) => Err(PushError::Timeout {
                url: self.url.clone(),
            }),
        }
    }

    async fn send(&self, path: &str, url: &str, body: String) -> Result<(), PushError> {
        let stream = tokio::net::TcpStream::connect((self.host.as_str(), self.port))
            .await
            .map_err(|source| PushError::Connect {
                url: self.url.clone(),
                source,
            })?;
        let http = |source| PushError::Http {
            url: self.url.clone(),
            source,
        };
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(http)?;
        tokio::spawn(connection);
        let request = hyper::Request::put(path)
            .header(hyper::header::HOST, format!("{}:{}", self.host, self.port))
            .header(hyper::header::CONTENT_TYPE, "text/plain; version=0.0.4")
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| PushError::Url {
                url: self.url.clone(),
                why: e.to_string(),
            })?;
        let response = sender.send_request(request).await.map_err(http)?;
        let status = response.status();
        if status.is_success() {
            return Ok(());
        }
        let body = response
            .into_body()
            .collect()
            .await
            .map(|b| b.to_bytes())
            .unwrap_or_default();
        Err(PushError::Refused {
            url: url.to_string(),
            status: status.as_u16(),
            body: String::from_utf8_lossy(&body)
                .trim()
                .chars()
                .take(500)
                .collect(),
        })
    }
}

/// RFC 4648 base64url without padding, from the SDK's standard base64.
fn base64url(bytes: &[u8]) -> String {
    aws_smithy_types::base64::encode(bytes)
        .trim_end_matches('=')
        .replace('+', "-")
        .replace('/', "_")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_are_paths_with_base64_values() {
        let gateway = Pushgateway::new("http://127.0.0.1:9091/").unwrap();
        assert_eq!(
            gateway.group_path("runbook", &[("runbook", "runbooks/gpu-lab.rhai")]),
            "/metrics/job@base64/cnVuYm9vaw/runbook@base64/cnVuYm9va3MvZ3B1LWxhYi5yaGFp"
        );
        assert_eq!(base64url(&[0xfb, 0xff]), "-_8");
        assert!(matches!(
            Pushgateway::new("https://pg:9091"),
            Err(PushError::Url { .. })
        ));
        assert!(matches!(
            Pushgateway::new("pg:9091"),
            Err(PushError::Url { .. })
        ));
    }
}
