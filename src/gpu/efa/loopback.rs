//! The commands a per-node EFA check runs: `fi_info -p efa`, then for each device a ping-pong
//! over its own loopback, server and client on the same host, as aws-efa-installer's
//! `efa_test.sh` runs it (`fi_pingpong -e rdm -p efa` in the background, then the client to
//! `localhost` under `timeout`, with shared memory off so that the traffic goes through the
//! device), one device at a time (`-d`, its RDM domain) and one message size.

/// `fi_info -p efa`: every endpoint of every EFA device.
pub const FI_INFO: [&str; 3] = ["fi_info", "-p", "efa"];

/// The message size the loopback measures: 1 MiB, the largest of fi_pingpong's default sizes
/// (util/pingpong.c `generate_test_sizes`), where the link rather than latency sets the time.
pub const LOOPBACK_BYTES: u64 = 1 << 20;

/// Round trips at that size: what util/pingpong.c's `size_to_count` gives 1 MiB.
pub const LOOPBACK_ITERATIONS: u32 = 100;

/// Seconds the client may take (efa_test.sh gives it 8; 100 round trips of 1 MiB take well under
/// one): past them `timeout` ends it with status 124 and no table.
pub const LOOPBACK_TIMEOUT_S: u32 = 30;

fn pingpong(device: &str) -> String {
    format!(
        "FI_EFA_ENABLE_SHM_TRANSFER=0 fi_pingpong -e rdm -p efa -d {device}-rdm -I {LOOPBACK_ITERATIONS} -S {LOOPBACK_BYTES}"
    )
}

/// The shell line of one device's loopback.
fn script(device: &str) -> String {
    let run = pingpong(device);
    format!(
        "{run} >/dev/null 2>&1 & sleep 0.5; {run_client} localhost",
        run_client = run.replacen(
            "fi_pingpong",
            &format!("timeout {LOOPBACK_TIMEOUT_S} fi_pingpong"),
            1
        )
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
        assert!(argv[2].contains("timeout 30 fi_pingpong"), "{}", argv[2]);
        assert_eq!(loopback_device(&argv).as_deref(), Some("rdmap16s27"));
        assert_eq!(loopback_command("x; rm -rf /"), None);
        let mut changed = argv.clone();
        changed[2].push_str("; reboot");
        assert_eq!(loopback_device(&changed), None);
    }
}
