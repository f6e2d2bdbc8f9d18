//! The NVIDIA driver's error reports in a kernel log (`dmesg`, `dmesg -T`, `dmesg --time-format
//! iso`, `journalctl -k`, syslog): Xid lines, NVSwitch SXid lines, and the "fallen off the bus"
//! block that older drivers print without an Xid number. Anything else is skipped.

use serde::Serialize;

/// `NVRM: Xid (PCI:0000:91:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.`
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct XidEvent {
    /// 1-based line in the log.
    pub line: usize,
    /// What the log printed before `NVRM:` (`[ 1843.308145]`, `[Sun Feb 23 16:24:18 2025]`,
    /// `2024-11-15T12:02:03,470068+00:00`), facility and `kernel:` tags removed; `None` if bare.
    pub timestamp: Option<String>,
    /// The GPU's PCI address as printed (`0000:91:00`), lower case.
    pub pci: String,
    pub xid: u32,
    /// `None` for `pid='<unknown>'` and for lines without a pid.
    pub pid: Option<u32>,
    pub process: Option<String>,
    pub message: String,
    /// `caused by previous Xid 145` (Xid 45 reports the error that made it clean up).
    pub caused_by: Option<u32>,
}

/// `nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 20034, Fatal, Link 48 LTSSM Fault Up`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SxidEvent {
    pub line: usize,
    pub timestamp: Option<String>,
    pub switch: String,
    pub pci: String,
    pub sxid: u32,
    pub fatal: bool,
    pub message: String,
}

/// `NVRM: The NVIDIA GPU 0000:b3:00.0 ... fallen off the bus`, with no Xid number.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FallenOffBus {
    pub line: usize,
    pub timestamp: Option<String>,
    pub pci: String,
}

/// Everything the driver reported in one log, in log order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct KernelLogErrors {
    pub xids: Vec<XidEvent>,
    pub sxids: Vec<SxidEvent>,
    pub fallen_off_bus: Vec<FallenOffBus>,
}

impl KernelLogErrors {
    /// The distinct Xid codes, in the order first seen.
    pub fn codes(&self) -> Vec<u32> {
        let mut codes = Vec::new();
        for event in &self.xids {
            if !codes.contains(&event.xid) {
                codes.push(event.xid);
            }
        }
        codes
    }
}

/// Reads a kernel log; never fails (a log with no driver errors is the healthy answer).
pub fn parse_kernel_log(text: &str) -> KernelLogErrors {
    let mut found = KernelLogErrors::default();
    // The no-Xid block spans lines: its first line names the GPU, a later one says it fell off.
    let mut pending_gpu: Option<FallenOffBus> = None;
    for (index, line) in text.lines().enumerate() {
        let line_no = index + 1;
        if let Some((prefix, rest)) = line.split_once("NVRM: Xid (PCI:")
            && let Some(event) = xid(line_no, prefix, rest)
        {
            found.xids.push(event);
            continue;
        }
        if let Some((prefix, rest)) = line.split_once("SXid (PCI:")
            && let Some(event) = sxid(line_no, prefix, rest)
        {
            found.sxids.push(event);
            continue;
        }
        if let Some((prefix, rest)) = line.split_once("NVRM: The NVIDIA GPU ") {
            pending_gpu = rest.split_whitespace().next().map(|pci| FallenOffBus {
                line: line_no,
                timestamp: timestamp(prefix),
                pci: pci.to_ascii_lowercase(),
            });
        }
        if line.contains("fallen off the bus")
            && let Some(block) = pending_gpu.take()
        {
            found.fallen_off_bus.push(block);
        }
    }
    found
}

/// After `NVRM: Xid (PCI:`: `0000:91:00): 79, pid=..., name=..., message`.
fn xid(line: usize, prefix: &str, rest: &str) -> Option<XidEvent> {
    let (pci, rest) = rest.split_once("):")?;
    let (code, rest) = rest.split_once(',').unwrap_or((rest, ""));
    let xid = code.trim().parse().ok()?;
    let mut rest = rest.trim_start();
    let mut pid = None;
    let mut process = None;
    if let Some(after) = rest.strip_prefix("pid=") {
        let (value, tail) = after.split_once(',').unwrap_or((after, ""));
        pid = value.trim().parse().ok();
        rest = tail.trim_start();
    }
    if let Some(after) = rest.strip_prefix("name=") {
        let (value, tail) = after.split_once(", ").unwrap_or((after, ""));
        let value = value.trim().trim_end_matches(',');
        process = (value != "<unknown>" && !value.is_empty()).then(|| value.to_string());
        rest = tail;
    }
    let message = rest.trim().to_string();
    let caused_by = message
        .split_once("caused by previous Xid ")
        .and_then(|(_, n)| n.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok());
    Some(XidEvent {
        line,
        timestamp: timestamp(prefix),
        pci: pci.trim().to_ascii_lowercase(),
        xid,
        pid,
        process,
        message,
        caused_by,
    })
}

/// After `SXid (PCI:`: `0000:06:00.0): 20034, Fatal, Link 48 LTSSM Fault Up`.
fn sxid(line: usize, prefix: &str, rest: &str) -> Option<SxidEvent> {
    let (pci, rest) = rest.split_once("):")?;
    let (code, message) = rest.split_once(',').unwrap_or((rest, ""));
    let (before, switch) = prefix.trim_end().trim_end_matches(':').rsplit_once(' ')?;
    let message = message.trim().to_string();
    Some(SxidEvent {
        line,
        timestamp: timestamp(before),
        switch: switch.to_string(),
        pci: pci.trim().to_ascii_lowercase(),
        sxid: code.trim().parse().ok()?,
        fatal: message.starts_with("Fatal"),
        message,
    })
}

/// The time a log line carries, without the tags around it: `[ 12.5]` -> `12.5`,
/// `kern  :warn  : 2025-01-21T02:21:33,498559+00:00` -> the ISO time, `kernel:` dropped.
fn timestamp(prefix: &str) -> Option<String> {
    let mut text = prefix.trim();
    for tag in ["kernel:", "kernel"] {
        text = text.strip_suffix(tag).unwrap_or(text).trim_end();
    }
    // `dmesg -x`: `kern  :warn  : <time>`.
    if let Some((facility, rest)) = text.split_once(':')
        && facility.trim() == "kern"
    {
        text = rest.split_once(':').map_or(rest, |(_, time)| time).trim();
    }
    let text = text.trim_start_matches('[').trim_end_matches(']').trim();
    (!text.is_empty()).then(|| text.to_string())
}

#[cfg(test)]
#[path = "xid_tests.rs"]
mod tests;
