//! The commands a per-node EFA check runs: `fi_info -p efa`, then for each device a ping-pong
//! over its own loopback, server and client on the same host, exactly as aws-efa-installer's
//! `efa_test.sh` runs it (`fi_pingpong -e rdm -p efa` in the background, then the client to
//! `localhost` under `timeout`, with shared memory off so that the traffic goes through the
//! device) but one device at a time (`-d`, its RDM domain). fi_pingpong's defaults stay: its
//! six sizes, 10 round trips each (ofiwg/libfabric@af8ddbe92f033b7deb9c4e4f47197d1fd4bcf150
//! util/pingpong.c lines 956 and 2319), so the first, smallest size carries the connection's
//! setup and the largest measures the link, as in every real table of
//! tests/fixtures/real/SOURCES.md section 6.

/// `fi_info -p efa`: every endpoint of every EFA device.
pub const FI_INFO: [&str; 3] = ["fi_info", "-p", "efa"];

/// fi_pingpong's default message sizes (util/pingpong.c `generate_test_sizes`).
pub const DEFAULT_SIZES: [u64; 6] = [64, 256, 1024, 4096, 65536, 1_048_576];

/// fi_pingpong's default round trips per size (util/pingpong.c `main`).
pub const DEFAULT_ITERATIONS: u64 = 10;

/// Seconds the client may take, as efa_test.sh gives it: past them `timeout` ends it with
/// status 124 and no table.
pub const LOOPBACK_TIMEOUT_S: u32 = 8;

/// The shell line of one device's loopback.
fn script(device: &str) -> String {
    let args = format!("-e rdm -p efa -d {device}-rdm");
    format!(
        "FI_EFA_ENABLE_SHM_TRANSFER=0 fi_pingpong {args} >/dev/null 2>&1 & sleep 0.5; FI_EFA_ENABLE_SHM_TRANSFER=0 timeout {LOOPBACK_TIMEOUT_S} fi_pingpong {args} localhost"
    )
}

/// Whether `device` is a device name as fi_info prints it (`rdmap16s27`, `efa_0`): nothing a
/// shell would read as more than a word.
pub fn is_device_name(device: &str) -> bool {
    !device.is_empty()
        && device
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `sh -c` with one device's loopback; `None` for a name fi_info would not print.
pub fn loopback_command(device: &str) -> Option<Vec<String>> {
    is_device_name(device).then(|| vec!["sh".into(), "-c".into(), script(device)])
}

/// The device `argv` runs the loopback of, when it is exactly [`loopback_command`]'s.
pub fn loopback_device(argv: &[String]) -> Option<String> {
    let [sh, c, line] = argv else {
        return None;
    };
    if sh != "sh" || c != "-c" {
        return None;
    }
    let device = line.split_once(" -d ")?.1.split_once("-rdm ")?.0;
    (is_device_name(device) && *line == script(device)).then(|| device.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_loopback_command_names_its_device_and_nothing_else_passes_for_it() {
        let argv = loopback_command("rdmap16s27").unwrap();
        assert!(argv[2].contains("-d rdmap16s27-rdm"), "{}", argv[2]);
        assert!(argv[2].contains("timeout 8 fi_pingpong"), "{}", argv[2]);
        assert_eq!(loopback_device(&argv).as_deref(), Some("rdmap16s27"));
        assert_eq!(loopback_command("x; rm -rf /"), None);
        let mut changed = argv.clone();
        changed[2].push_str("; reboot");
        assert_eq!(loopback_device(&changed), None);
    }
}
