//! The GPU lab's facts (docs/lab-facts.md, from the seed documents): the single source
//! for the twin's scenarios and for the runbooks' expectations, and the pure logic over
//! them (security-group reachability, the cost model). No I/O.

pub mod cost;
pub mod efa_loopback;
mod facts;
pub mod gpu_catalog;
mod gpu_catalog_rows;
pub mod hybrid;
pub mod hybrid_pricing;
mod instance_types;
pub mod nccl_figures;
pub mod nccl_scale;
mod network;
pub mod reachability;
pub mod timeline;

pub use facts::*;
pub use instance_types::{is_gpu_instance_type, is_gpu_node_group};
pub use network::*;
