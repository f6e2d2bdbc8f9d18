//! The helm client: find the `helm` binary, run `helm template`, and read what it rendered
//! (objects, hooks, CRDs, and which chart or subchart each came from), and install it as
//! `helm install` would.

mod binary;
mod environment;
mod error;
mod install;
mod render;
mod summary;
mod template;

pub use binary::{HELM_ENV, find_helm, locate};
pub use error::HelmError;
pub use install::{InstallReport, install};
pub use render::{RenderedObject, parse_rendered};
pub use summary::{ChartSummary, HookSummary, Summary, summary};
pub use template::{TemplateOptions, template};
