//! Every file runbook reads for itself (a runbook, a kubeconfig, a lab-state file, a journal)
//! is looked at before it is opened: a regular file, no larger than what such a file can
//! sensibly be. `/dev/zero` as a runbook is refused at once instead of filling memory.

use std::io::{Error, ErrorKind, Read};
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

/// Runbooks, their imports, kubeconfigs, env files, snapshots: text a person writes or reads.
pub const TEXT_FILE_LIMIT: u64 = 16 * 1024 * 1024;
/// Lab-state captures and run journals, which grow with the lab and the run.
pub const DATA_FILE_LIMIT: u64 = 256 * 1024 * 1024;

/// What kind of thing `path` is, when it is not a regular file.
fn not_a_file(file_type: std::fs::FileType) -> Option<&'static str> {
    if file_type.is_file() {
        None
    } else if file_type.is_dir() {
        Some("a folder")
    } else if file_type.is_char_device() {
        Some("a character device")
    } else if file_type.is_block_device() {
        Some("a block device")
    } else if file_type.is_fifo() {
        Some("a pipe")
    } else if file_type.is_socket() {
        Some("a socket")
    } else {
        Some("not a regular file")
    }
}

/// Whether `path` is a regular file of at most `limit` bytes, for a file another library reads
/// (a kubeconfig); answers its size.
pub fn check_file(path: &Path, limit: u64) -> std::io::Result<u64> {
    let metadata = std::fs::metadata(path)?;
    if let Some(kind) = not_a_file(metadata.file_type()) {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!("it is {kind}; runbook reads regular files only"),
        ));
    }
    if metadata.len() > limit {
        return Err(too_large(metadata.len(), limit));
    }
    Ok(metadata.len())
}

fn too_large(size: u64, limit: u64) -> Error {
    Error::new(
        ErrorKind::InvalidData,
        format!("it is {size} bytes, over the {limit}-byte limit for such a file"),
    )
}

/// The text of the regular file `path`, refused without reading when it is anything else or
/// larger than `limit` bytes (and never more than `limit` read, should it grow meanwhile).
pub fn read_text_file(path: &Path, limit: u64) -> std::io::Result<String> {
    let size = check_file(path, limit)?;
    let mut bytes = Vec::with_capacity(size as usize);
    std::fs::File::open(path)?
        .take(limit + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(bytes.len() as u64, limit));
    }
    String::from_utf8(bytes).map_err(|_| Error::new(ErrorKind::InvalidData, "it is not UTF-8 text"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_pipes_and_folders_are_refused_before_reading() {
        let error = read_text_file(Path::new("/dev/zero"), TEXT_FILE_LIMIT).unwrap_err();
        assert!(error.to_string().contains("a character device"), "{error}");
        let dir = tempfile::tempdir().unwrap();
        let error = read_text_file(dir.path(), TEXT_FILE_LIMIT).unwrap_err();
        assert!(error.to_string().contains("a folder"), "{error}");
    }

    #[test]
    fn a_file_over_the_limit_is_refused_and_one_under_it_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big");
        std::fs::write(&path, "x".repeat(100)).unwrap();
        let error = read_text_file(&path, 99).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("100 bytes, over the 99-byte limit"),
            "{error}"
        );
        assert_eq!(read_text_file(&path, 100).unwrap().len(), 100);
    }
}
