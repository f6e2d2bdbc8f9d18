//! What a runbook may touch on this machine: the folders it may read, and how much; and the
//! files runbook keeps for itself, private to the user.

mod bounded;
mod private;
mod read;

pub use bounded::{DATA_FILE_LIMIT, TEXT_FILE_LIMIT, check_file, read_text_file};
pub use private::{private_dir, private_file, write_private};
pub use read::{DEFAULT_MAX_READ_BYTES, ReadSandbox, SandboxError, project_of};
