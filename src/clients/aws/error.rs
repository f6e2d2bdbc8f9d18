//! AWS errors with the service's code, so scripts can catch them by it.

use aws_smithy_types::error::metadata::ProvideErrorMetadata;

#[derive(Debug, thiserror::Error)]
#[error("{operation}: {code}: {message}")]
pub struct AwsError {
    pub operation: String,
    /// `ResourceNotFoundException`, `InvalidPermission.NotFound`, ...
    pub code: String,
    pub message: String,
}

impl AwsError {
    pub fn new(operation: &str, code: &str, message: impl Into<String>) -> Self {
        Self {
            operation: operation.into(),
            code: code.into(),
            message: message.into(),
        }
    }

    /// From any SDK error, keeping the service's code and message.
    pub fn from_sdk<E>(operation: &str, error: E) -> Self
    where
        E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    {
        let code = error.code().unwrap_or("ConnectionError").to_string();
        let message = match error.message() {
            Some(message) => message.to_string(),
            None => aws_smithy_types::error::display::DisplayErrorContext(&error).to_string(),
        };
        Self {
            operation: operation.into(),
            code,
            message,
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
