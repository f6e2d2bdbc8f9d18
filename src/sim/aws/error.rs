//! AWS errors with their codes and HTTP statuses, encoded per protocol.

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AwsError {
    pub status: u16,
    pub code: &'static str,
    pub message: String,
}

impl AwsError {
    pub fn new(status: u16, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
        }
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(404, "ResourceNotFoundException", message)
    }

    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(400, "InvalidRequestException", message)
    }

    pub fn invalid_parameter(message: impl Into<String>) -> Self {
        Self::new(400, "InvalidParameterException", message)
    }
}
