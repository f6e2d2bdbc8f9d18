//! AWS errors with the service's code, so scripts can catch them by it.

use aws_sdk_eks::config::http::HttpResponse;
use aws_sdk_eks::error::SdkError;
use aws_smithy_types::error::metadata::ProvideErrorMetadata;

use super::failure::{Destination, advice_for_code, describe};

#[derive(Debug, thiserror::Error)]
#[error("{}", self.line())]
pub struct AwsError {
    pub operation: String,
    /// `ResourceNotFoundException`, `InvalidPermission.NotFound`, ...
    pub code: String,
    pub message: String,
    /// Every layer's own message, outermost first (the SDK's, hyper's, the OS's), with the
    /// HTTP status and request id of an answer: what `--verbose` and the report's
    /// `error_detail` show after the one line.
    pub causes: Vec<String>,
}

impl AwsError {
    /// `operation: code: message`; a message that already starts with the operation (one
    /// that never got the service's answer says which call it was) keeps it once.
    fn line(&self) -> String {
        if self.message.starts_with(&self.operation) {
            format!("{}: {}", self.code, self.message)
        } else {
            format!("{}: {}: {}", self.operation, self.code, self.message)
        }
    }

    pub fn new(operation: &str, code: &str, message: impl Into<String>) -> Self {
        Self {
            operation: operation.into(),
            code: code.into(),
            message: message.into(),
            causes: Vec::new(),
        }
    }

    /// From an SDK error: the service's code and message when the service answered, else what
    /// went wrong on the way in one line ([`super::failure`]), never the SDK's Debug dump.
    pub(super) fn from_sdk<E>(
        operation: &str,
        error: SdkError<E, HttpResponse>,
        to: &Destination<'_>,
    ) -> Self
    where
        E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    {
        let causes = causes(&error);
        if let Some(failure) = describe(&error, to) {
            return Self {
                operation: operation.into(),
                code: failure.code.into(),
                message: format!("{operation}: {}", failure.message),
                causes,
            };
        }
        let code = error.code().unwrap_or("Unknown").to_string();
        let mut message = match error.message() {
            Some(message) => message.to_string(),
            None => aws_smithy_types::error::display::DisplayErrorContext(&error).to_string(),
        };
        if let Some(advice) = advice_for_code(&code) {
            message = format!("{}: {advice}", message.trim_end_matches('.'));
        }
        Self {
            operation: operation.into(),
            code,
            message,
            causes,
        }
    }

    /// Names the resource the call was about when AWS's own message does not
    /// ("The specified rule does not exist in this security group." gains "(sg-0abc3456)").
    pub fn about(mut self, resource: &str) -> Self {
        if !self.message.contains(resource) {
            self.message = format!("{} ({resource})", self.message.trim_end());
        }
        self
    }
}

/// The chain of an SDK error that never got the service's answer; for an answer, its code
/// and message (the SDK's own layers print a Debug dump of them). Then the HTTP status and
/// request id.
fn causes<E>(error: &SdkError<E, HttpResponse>) -> Vec<String>
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    let mut causes = match (error, error.code()) {
        (SdkError::ServiceError(_), Some(code)) => {
            vec![format!("{code}: {}", error.message().unwrap_or_default())]
        }
        _ => crate::clients::connection::chain(error),
    };
    if let Some(raw) = error.raw_response() {
        causes.push(format!("HTTP {}", raw.status().as_u16()));
    }
    if let Some(id) = error.meta().extra("aws_request_id") {
        causes.push(format!("request id {id}"));
    }
    causes
}
