//! Kubernetes' protobuf request bodies (`application/vnd.kubernetes.protobuf`), read into
//! the JSON the twin handles: built-in objects by the 1.35 definitions, and the reviews and
//! token requests kubectl sends.

pub mod descriptors;
pub mod objects;
pub mod reviews;
pub mod to_json;
pub mod wire;
