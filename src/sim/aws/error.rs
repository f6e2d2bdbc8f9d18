//! AWS errors with their codes and HTTP statuses, encoded per protocol.

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AwsError {
    pub(crate) status: u16,
    pub(crate) code: &'static str,
    pub(crate) message: String,
}

impl AwsError {
    pub(crate) fn new(status: u16, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
        }
    }

    pub(crate) fn not_found(message: impl Into<String>) -> Self {
        Self::new(404, "ResourceNotFoundException", message)
    }

    pub(crate) fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(400, "InvalidRequestException", message)
    }

    pub(crate) fn invalid_parameter(message: impl Into<String>) -> Self {
        Self::new(400, "InvalidParameterException", message)
    }
}
