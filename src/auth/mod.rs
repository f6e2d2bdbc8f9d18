//! Who may drive a lab: SigV4 signatures checked, EKS bearer tokens read, and the lab's own
//! secrets. Pure: the twin verifies with it, the clients sign with it.

pub mod eks_token;
pub mod secret;
pub mod service_account_token;
pub mod sigv4;
