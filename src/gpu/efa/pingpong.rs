//! `fi_pingpong`'s output (libfabric util/pingpong.c, `show_perf`): a header, then per message
//! size `bytes #sent #ack total time MB/sec usec/xfer Mxfers/sec`, where `#ack` is `=N` when
//! every message was acknowledged (`-N`/`+N` the difference otherwise), sizes as `size_str`
//! writes them (`64`, `1.2k`, `1m`), and MB/sec is bytes per microsecond. A run that fails
//! prints `[error] file:line : why` (or `call(): file:line, ret=N (why)`) instead of rows; a
//! hung one prints nothing, and its caller's timeout says so.

use serde::Serialize;

use super::error::EfaParseError;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The message size (`1k` is 1024 bytes).
    pub bytes: u64,
    pub sent: u64,
    /// Messages acknowledged: `sent` when the column reads `=N`.
    pub acked: u64,
    pub seconds: f64,
    pub mb_per_sec: f64,
    pub usec_per_xfer: f64,
    pub mxfers_per_sec: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PingPong {
    pub rows: Vec<Row>,
    /// The `[error]` lines and failed calls, as printed.
    pub errors: Vec<String>,
}

impl PingPong {
    /// The row of the largest message: the one that measures the link rather than its latency.
    pub fn largest(&self) -> Option<&Row> {
        self.rows.iter().max_by_key(|r| r.bytes)
    }
}

/// `64`, `5k`, `1.2m`, `1g` as util/pingpong.c's `size_str` prints them, in bytes (its one
/// decimal truncates, so a total is approximate).
fn size(text: &str) -> Option<u64> {
    let (number, scale) = match text.chars().last()? {
        'k' => (&text[..text.len() - 1], 1u64 << 10),
        'm' => (&text[..text.len() - 1], 1 << 20),
        'g' => (&text[..text.len() - 1], 1 << 30),
        _ => (text, 1),
    };
    let value: f64 = number.parse().ok()?;
    Some((value * scale as f64) as u64)
}

/// `10`, `5k`, `2m`, `1b` as `cnt_str` prints counts.
fn count(text: &str) -> Option<u64> {
    let (number, scale) = match text.chars().last()? {
        'k' => (&text[..text.len() - 1], 1_000),
        'm' => (&text[..text.len() - 1], 1_000_000),
        'b' => (&text[..text.len() - 1], 1_000_000_000),
        _ => (text, 1u64),
    };
    Some(number.parse::<u64>().ok()? * scale)
}

fn row(line: &str) -> Result<Row, EfaParseError> {
    let bad = |why: &str| EfaParseError::BadRow {
        line: line.to_string(),
        why: why.to_string(),
    };
    let columns: Vec<&str> = line.split_whitespace().collect();
    let [bytes, sent, ack, _total, time, mb, usec, mxfers] = columns[..] else {
        return Err(bad(
            "not the 8 columns of bytes #sent #ack total time MB/sec usec/xfer Mxfers/sec",
        ));
    };
    let sent = count(sent).ok_or_else(|| bad("#sent is not a count"))?;
    let (sign, acked) = ack.split_at(1);
    let difference = count(acked).ok_or_else(|| bad("#ack is not =N, -N or +N"))?;
    let acked = match sign {
        "=" => difference,
        "-" => sent + difference,
        "+" => sent.saturating_sub(difference),
        _ => return Err(bad("#ack is not =N, -N or +N")),
    };
    let number = |text: &str, what: &str| text.parse::<f64>().map_err(|_| bad(what));
    Ok(Row {
        bytes: size(bytes).ok_or_else(|| bad("bytes is not a size"))?,
        sent,
        acked,
        seconds: number(time.trim_end_matches('s'), "time is not seconds")?,
        mb_per_sec: number(mb, "MB/sec is not a number")?,
        usec_per_xfer: number(usec, "usec/xfer is not a number")?,
        mxfers_per_sec: number(mxfers, "Mxfers/sec is not a number")?,
    })
}

/// Parses the table and the errors; any other line (a wrapper's `Starting client...`, `-v`
/// debug lines) is skipped.
pub fn parse_pingpong(text: &str) -> Result<PingPong, EfaParseError> {
    let mut rows = Vec::new();
    let mut errors = Vec::new();
    let mut in_table = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with("bytes") && line.contains("MB/sec") {
            in_table = true;
        } else if line.starts_with("[error]") || line.contains(", ret=") {
            errors.push(line.to_string());
        } else if in_table && line.starts_with(|c: char| c.is_ascii_digit()) {
            rows.push(row(line)?);
        }
    }
    Ok(PingPong { rows, errors })
}
