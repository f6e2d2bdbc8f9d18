//! Parsers for `nvidia-smi` output: query CSV, `-L`, `-q -x`, `mig -lgip` and the default table.

pub mod csv;
pub mod error;
pub mod list;
pub mod mig;
pub mod table;
pub mod xml;

pub use csv::parse_csv;
pub use error::ParseError;
pub use list::{ListedGpu, MigDevice, parse_list};
pub use mig::{MigProfile, parse_mig_profiles};
pub use table::{TableGpu, TableMigDevice, TableProcess, TableReport, parse_table};
pub use xml::{SmiReport, XmlGpu, XmlProcess, parse_xml};
