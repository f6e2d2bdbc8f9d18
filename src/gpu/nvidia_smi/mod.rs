//! Parsers for `nvidia-smi` output: query CSV, `-L`, `-q -x`, `-q` text and the memory error
//! counters in it, `mig -lgip`, the default table, `topo -m` and `nvlink -s`.

pub mod csv;
pub mod error;
pub mod list;
pub mod memory_errors;
pub mod mig;
pub mod nvlink;
pub mod query_text;
pub mod table;
mod table_rows;
pub mod topology;
pub mod xml;

pub use csv::parse_csv;
pub use error::ParseError;
pub use list::{ListedGpu, MigDevice, parse_list};
pub use memory_errors::{MemoryErrors, memory_errors, memory_errors_from_csv};
pub use mig::{MigProfile, parse_mig_profiles};
pub use nvlink::{NvlinkGpu, parse_nvlink_status};
pub use query_text::{QueryGpu, QueryReport, parse_query_text};
pub use table::{TableGpu, TableMigDevice, TableProcess, TableReport, parse_table};
pub use topology::{Topology, parse_topology};
pub use xml::{SmiReport, XmlGpu, XmlProcess, parse_xml};
