//! What NCCL's own log says about the network between ranks (connects retried, refused, timed
//! out or given up, receives that failed, peers that closed), gathered per peer into causes a
//! person can act on. A run that hangs in a connect often prints nothing else: from 2.24 the
//! retries are INFO lines, and the WARN comes only once they run out (a minute by default,
//! over an hour when each try waits for a SYN timeout).
//!
//! The messages, as NVIDIA/nccl prints them:
//! - `Call to connect returned %s, retrying` (INFO; `src/include/socket.h` from v2.4.2,
//!   `src/misc/socket.cc` v2.12-v2.23)
//! - `%s: connect returned %s, retrying (%d/%ld) after sleep for %u msec` (INFO, v2.24.3-1
//!   6aae379 to v2.26) and `%s: connect to %s returned %s, retrying (%d/%ld) after sleep for
//!   %u msec` (v2.27.3-1 72d2432 on; from v2.29 `src/os/linux.cc`, `ncclOsSocket...` names)
//! - `%s: connect returned %s, exceeded error retry count (%d)` (v2.24) and `%s: connect to %s
//!   returned %s, exceeded error retry count after %d attempts` (v2.27 on); `socketStartConnect:
//!   exceeded retries (%d)` / `exceeded timeouts (%d)` (v2.16-v2.23)
//! - `Connect to %s failed : %s` (v2.5-v2.9), `Net : Connect to %s failed : %s` (v2.10-v2.15),
//!   `socketStartConnect: Connect to %s failed : %s` (v2.16 on; `connect to` from v2.27),
//!   `socketPollConnect: Connect to %s returned %d(%s) errno %d(%s)` (v2.22-v2.23)
//! - `Net : Call to recv from %s failed : %s` (v2.10-v2.15), `socketProgressOpt: Call to recv
//!   from %s failed : %s` (v2.16 on), `socketProgress: Connection closed by remote peer %s`
//! - aws-ofi-nccl's `NET/OFI ... completed with error` and the security-group banner it prints
//!   for FI_EHOSTUNREACH (`src/platform-aws.cpp`), `NET/OFI Unable to insert remote address`.

/// What one log line says about the network.
#[derive(Debug, Clone, PartialEq)]
struct Clue {
    kind: Kind,
    /// `10.0.0.4<56849>` as NCCL prints an address; None where the format names none.
    peer: Option<String>,
    /// `Connection timed out`, as strerror words it.
    error: Option<String>,
    /// `(3/34)`: the try and how many NCCL makes.
    attempt: Option<(u64, u64)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    /// A connect that failed and will be tried again.
    Retried,
    /// NCCL stopped trying.
    GaveUp,
    /// A connect that failed without a retry.
    Failed,
    /// An established connection that broke: a receive failed or the peer closed it.
    Broken,
    /// The EFA plugin could not reach its peer.
    Efa,
}

/// The clues of a log, gathered line by line.
#[derive(Debug, Default)]
pub(super) struct NetworkClues {
    clues: Vec<(Clue, usize)>,
}

impl NetworkClues {
    /// Reads one NCCL log line (`message` is what follows `NCCL INFO ` / `NCCL WARN `).
    pub(super) fn line(&mut self, message: &str) {
        let Some(clue) = clue_of(message) else {
            return;
        };
        match self.clues.iter_mut().find(|(c, _)| same_trouble(c, &clue)) {
            Some((seen, count)) => {
                *count += 1;
                if clue.attempt > seen.attempt {
                    seen.attempt = clue.attempt;
                }
            }
            None => self.clues.push((clue, 1)),
        }
    }

    /// One cause per trouble, the worst first (given up, failed, broken, EFA, retried).
    pub(super) fn causes(&self) -> Vec<String> {
        let mut clues: Vec<&(Clue, usize)> = self.clues.iter().collect();
        clues.sort_by_key(|(clue, _)| match clue.kind {
            Kind::GaveUp => 0,
            Kind::Failed => 1,
            Kind::Broken => 2,
            Kind::Efa => 3,
            Kind::Retried => 4,
        });
        clues
            .iter()
            .map(|(clue, count)| said(clue, *count))
            .collect()
    }
}

fn same_trouble(a: &Clue, b: &Clue) -> bool {
    a.kind == b.kind && a.peer == b.peer && a.error == b.error
}

fn clue_of(message: &str) -> Option<Clue> {
    let message = message.trim();
    if let Some(clue) = retried(message) {
        return Some(clue);
    }
    if let Some(clue) = gave_up(message) {
        return Some(clue);
    }
    if let Some(clue) = failed(message) {
        return Some(clue);
    }
    broken(message).or_else(|| efa(message))
}

/// `Call to connect returned E, retrying`, `F: connect returned E, retrying (k/n) ...`,
/// `F: connect to A returned E, retrying (k/n) ...`.
fn retried(message: &str) -> Option<Clue> {
    if let Some(rest) = message.strip_prefix("Call to connect returned ") {
        let error = rest.strip_suffix(", retrying")?;
        return Some(clue(Kind::Retried, None, Some(error)));
    }
    let (head, tail) = message.split_once(", retrying (")?;
    let (peer, error) = connect_head(head)?;
    let (k, n) = tail.split_once(')')?.0.split_once('/')?;
    let mut clue = clue(Kind::Retried, peer, Some(error));
    clue.attempt = Some((k.parse().ok()?, n.parse().ok()?));
    Some(clue)
}

/// `F: connect returned E` or `F: connect to A returned E`: the peer and the error.
fn connect_head(head: &str) -> Option<(Option<&str>, &str)> {
    let (_, rest) = head.split_once(": connect ")?;
    if let Some(error) = rest.strip_prefix("returned ") {
        return Some((None, error));
    }
    let (peer, error) = rest.strip_prefix("to ")?.split_once(" returned ")?;
    Some((Some(peer), error))
}

/// `..., exceeded error retry count ...` (2.24 on) and `exceeded retries|timeouts (N)` (2.16).
fn gave_up(message: &str) -> Option<Clue> {
    if let Some((head, _)) = message.split_once(", exceeded error retry count") {
        let (peer, error) = connect_head(head)?;
        return Some(clue(Kind::GaveUp, peer, Some(error)));
    }
    let (_, rest) = message.split_once(": exceeded ")?;
    let error = if rest.starts_with("retries") {
        "Connection refused"
    } else if rest.starts_with("timeouts") {
        "Connection timed out"
    } else {
        return None;
    };
    Some(clue(Kind::GaveUp, None, Some(error)))
}

/// `[F: ][Net : ]Connect to A failed : E`, `F: connect to A failed : E` and
/// `socketPollConnect: Connect to A returned N(E) errno ...`.
fn failed(message: &str) -> Option<Clue> {
    let lower_at = message
        .find("Connect to ")
        .or_else(|| message.find(": connect to ").map(|at| at + 2))?;
    let rest = &message[lower_at + "Connect to ".len()..];
    if let Some((peer, error)) = rest.split_once(" failed : ") {
        return Some(clue(Kind::Failed, Some(peer), Some(error)));
    }
    let (peer, code) = rest.split_once(" returned ")?;
    let error = code.split_once('(')?.1.split_once(')')?.0;
    Some(clue(Kind::Failed, Some(peer), Some(error)))
}

/// `Call to recv from A failed : E` and `Connection closed by remote peer A`.
fn broken(message: &str) -> Option<Clue> {
    if let Some((_, rest)) = message.split_once("Call to recv from ") {
        let (peer, error) = rest.split_once(" failed : ")?;
        return Some(clue(Kind::Broken, Some(peer), Some(error)));
    }
    let (_, peer) = message.split_once("Connection closed by remote peer ")?;
    Some(clue(
        Kind::Broken,
        Some(peer.trim()),
        Some("Connection closed by remote peer"),
    ))
}

/// aws-ofi-nccl's words for a peer EFA cannot reach.
fn efa(message: &str) -> Option<Clue> {
    let rest = message.strip_prefix("NET/OFI ")?;
    if rest.contains("security group") {
        return Some(clue(
            Kind::Efa,
            None,
            Some("the security group on this instance or its peer is not set up correctly"),
        ));
    }
    if rest.contains("Unable to insert remote address") {
        return Some(clue(Kind::Efa, None, Some(rest.trim())));
    }
    if !rest.contains("completed with error") {
        return None;
    }
    let peer = rest
        .split_once("Peer host id: ")
        .map(|(_, id)| id.split([' ', ')']).next().unwrap_or_default())
        .filter(|id| id.starts_with("i-"));
    Some(clue(Kind::Efa, peer, Some(&provider_error(rest))))
}

/// `4126 (Unresponsive receiver (reachable by EFA device but handshake failed))` out of
/// `... Error: 4126 (Unresponsive receiver (...) My EFA addr: ... Peer host id: ...). Completed
/// length: 0`: the provider's code and words, without the addresses libfabric appends.
fn provider_error(rest: &str) -> String {
    let Some((_, error)) = rest.split_once("Error: ") else {
        return rest.trim().to_string();
    };
    let error = error.split(". Completed").next().unwrap_or(error);
    match error.split_once(" My EFA addr") {
        Some((words, _)) => format!("{words})"),
        None => error.trim().to_string(),
    }
}

fn clue(kind: Kind, peer: Option<&str>, error: Option<&str>) -> Clue {
    Clue {
        kind,
        peer: peer.map(|p| p.trim().to_string()),
        error: error.map(|e| e.trim().to_string()),
        attempt: None,
    }
}

/// The cause as the report says it, with what the error means on a cluster's network.
fn said(clue: &Clue, count: usize) -> String {
    let peer = clue
        .peer
        .as_deref()
        .map_or_else(|| "a peer".to_string(), str::to_string);
    let error = clue.error.as_deref().unwrap_or("an error");
    let times = if count == 1 {
        "once".to_string()
    } else {
        format!("{count} times")
    };
    let what = match clue.kind {
        Kind::Retried => match clue.attempt {
            Some((k, n)) => {
                format!("NCCL retried its connect to {peer} {times} ('{error}', try {k} of {n})")
            }
            None => format!("NCCL retried its connect to {peer} {times} ('{error}')"),
        },
        Kind::GaveUp => format!("NCCL gave up connecting to {peer} ('{error}')"),
        Kind::Failed => format!("NCCL could not connect to {peer} ('{error}')"),
        Kind::Broken => format!("NCCL's connection to {peer} broke ('{error}')"),
        Kind::Efa => match &clue.peer {
            Some(peer) => format!("the EFA plugin could not reach {peer} ('{error}')"),
            None => format!("the EFA plugin could not reach its peer ('{error}')"),
        },
    };
    format!("{what}: {}", meaning(clue))
}

/// What the error usually means between nodes of a cluster.
fn meaning(clue: &Clue) -> &'static str {
    let error = clue
        .error
        .as_deref()
        .unwrap_or_default()
        .to_ascii_lowercase();
    if clue.kind == Kind::Efa {
        "EFA needs the nodes' security group to allow all traffic to and from itself"
    } else if error.contains("timed out") {
        "packets to the peer are dropped; check the security groups, network ACLs and firewalls between the nodes"
    } else if error.contains("refused") {
        "the peer's host answers but nothing listens on that port; its rank may not have started or may have exited"
    } else if error.contains("no route") || error.contains("unreachable") {
        "there is no route to the peer; check the interface NCCL uses (NCCL_SOCKET_IFNAME) and the routes between the nodes"
    } else if clue.kind == Kind::Broken {
        "the peer's process exited or its network went away during the run"
    } else {
        "the network between the nodes refused the connection"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn causes(lines: &[&str]) -> Vec<String> {
        let mut clues = NetworkClues::default();
        for line in lines {
            clues.line(line);
        }
        clues.causes()
    }

    #[test]
    fn retries_of_every_generation_are_read() {
        assert_eq!(
            causes(&[
                "Call to connect returned Connection timed out, retrying",
                "Call to connect returned Connection timed out, retrying",
            ]),
            [
                "NCCL retried its connect to a peer 2 times ('Connection timed out'): packets to the peer are dropped; check the security groups, network ACLs and firewalls between the nodes"
            ]
        );
        assert_eq!(
            causes(&[
                "socketPollConnect: connect to 10.0.1.7<43211> returned Connection timed out, retrying (1/34) after sleep for 100 msec",
                "socketPollConnect: connect to 10.0.1.7<43211> returned Connection timed out, retrying (2/34) after sleep for 200 msec",
            ])[0],
            "NCCL retried its connect to 10.0.1.7<43211> 2 times ('Connection timed out', try 2 of 34): packets to the peer are dropped; check the security groups, network ACLs and firewalls between the nodes"
        );
        assert!(
            causes(&["ncclOsSocketPollConnect: connect to 10.0.0.9<5000> returned Connection refused, retrying (1/34) after sleep for 100 msec"])[0]
                .contains("nothing listens on that port")
        );
    }

    #[test]
    fn giving_up_comes_before_the_retries() {
        let said = causes(&[
            "socketPollConnect: connect to 10.0.1.7<43211> returned Connection timed out, retrying (34/34) after sleep for 3400 msec",
            "socketPollConnect: connect to 10.0.1.7<43211> returned Connection timed out, exceeded error retry count after 35 attempts",
        ]);
        assert!(
            said[0].starts_with("NCCL gave up connecting to 10.0.1.7<43211>"),
            "{said:?}"
        );
        assert_eq!(said.len(), 2);
        assert_eq!(
            causes(&["socketStartConnect: exceeded timeouts (3)"])[0],
            "NCCL gave up connecting to a peer ('Connection timed out'): packets to the peer are dropped; check the security groups, network ACLs and firewalls between the nodes"
        );
    }

    #[test]
    fn the_efa_plugins_failed_request_says_the_providers_error_without_addresses() {
        // aws-ofi-nccl 1.14's `Request %p completed with error. RC: %d. Error: %d (%s). Completed
        // length: %ld`, with the EFA provider's words and the addresses it appends.
        let said = causes(&[
            "NET/OFI Request 0x7f45 completed with error. RC: 103. Error: 4126 (Unresponsive receiver (reachable by EFA device but handshake failed) My EFA addr: fi_addr_efa://[fe80::1]:0:1 My host id: i-0a Peer EFA addr: fi_addr_efa://[fe80::2]:0:2 Peer host id: i-0b). Completed length: 0",
        ]);
        assert_eq!(
            said,
            [
                "the EFA plugin could not reach i-0b ('4126 (Unresponsive receiver (reachable by EFA device but handshake failed))'): EFA needs the nodes' security group to allow all traffic to and from itself"
            ]
        );
    }

    #[test]
    fn lines_about_something_else_are_no_clue() {
        assert!(
            causes(&[
                "Channel 00 : 0[18000] -> 1[18000] [receive] via NET/Socket/1",
                "misc/socket.cc:564 -> 2",
                "NET/OFI Initializing aws-ofi-nccl 1.13.2-aws",
                "Call to accept returned Resource temporarily unavailable, retrying",
            ])
            .is_empty()
        );
    }
}
