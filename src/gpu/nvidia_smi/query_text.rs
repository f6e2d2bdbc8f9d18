//! `nvidia-smi -q` as text (any `-d` selection): the indented `Key : value` report read into a
//! tree per GPU. The layout changes between drivers (SRAM parity split, new repair fields,
//! `Remapped Rows : N/A` as one line), so the tree keeps whatever keys it finds and the
//! readers of particular sections ([`super::memory_errors`]) look them up by name.

use serde::Serialize;
use serde::ser::SerializeMap;

use super::error::ParseError;

/// The whole report: the header lines and one tree per `GPU <bus id>` block.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct QueryReport {
    pub timestamp: Option<String>,
    pub driver_version: Option<String>,
    pub cuda_version: Option<String>,
    pub attached_gpus: Option<u32>,
    pub gpus: Vec<QueryGpu>,
}

/// One GPU's block. `bus_id` is `None` for a fragment pasted without its `GPU ...` line.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct QueryGpu {
    pub bus_id: Option<String>,
    pub fields: Section,
}

/// The entries of one indentation level, in the order printed. A key may repeat (the
/// `Processes` list prints one block per process).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Section {
    pub entries: Vec<(String, Entry)>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    Value(String),
    Section(Section),
}

impl Section {
    /// The entry at a path of keys, compared without regard to case (`Retired pages` appears
    /// in pasted output as well as `Retired Pages`).
    pub fn entry(&self, path: &[&str]) -> Option<&Entry> {
        let (first, rest) = path.split_first()?;
        let found = self
            .entries
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(first))
            .map(|(_, entry)| entry)?;
        match (rest.is_empty(), found) {
            (true, entry) => Some(entry),
            (false, Entry::Section(section)) => section.entry(rest),
            (false, Entry::Value(_)) => None,
        }
    }

    /// A value at a path; `None` when absent or when the path names a section.
    pub fn value(&self, path: &[&str]) -> Option<&str> {
        match self.entry(path)? {
            Entry::Value(value) => Some(value),
            Entry::Section(_) => None,
        }
    }

    pub fn section(&self, path: &[&str]) -> Option<&Section> {
        match self.entry(path)? {
            Entry::Section(section) => Some(section),
            Entry::Value(_) => None,
        }
    }

    fn push(&mut self, depth: usize, key: String, entry: Entry) {
        if depth > 0
            && let Some((_, last)) = self.entries.last_mut()
        {
            // A deeper line under a value (never printed by nvidia-smi) becomes that key's
            // section, so nothing is dropped.
            if let Entry::Value(_) = last {
                *last = Entry::Section(Section::default());
            }
            if let Entry::Section(inner) = last {
                inner.push(depth - 1, key, entry);
                return;
            }
        }
        self.entries.push((key, entry));
    }
}

impl Serialize for Section {
    /// As an object; a repeated key's values become an array.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut keys: Vec<&str> = Vec::new();
        for (key, _) in &self.entries {
            if !keys.contains(&key.as_str()) {
                keys.push(key);
            }
        }
        let mut map = serializer.serialize_map(Some(keys.len()))?;
        for key in keys {
            let values: Vec<&Entry> = self
                .entries
                .iter()
                .filter(|(k, _)| k == key)
                .map(|(_, e)| e)
                .collect();
            match values.as_slice() {
                [one] => map.serialize_entry(key, one)?,
                many => map.serialize_entry(key, many)?,
            }
        }
        map.end()
    }
}

impl Serialize for Entry {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Entry::Value(value) => serializer.serialize_str(value),
            Entry::Section(section) => section.serialize(serializer),
        }
    }
}

const SHAPE: &str = "\"Key : value\" lines of `nvidia-smi -q`, GPUs under \"GPU <bus id>\" lines";

/// Reads `nvidia-smi -q [-d ...]` text. Lines the tool never prints (`[...]` elisions in
/// pasted output) are skipped; text with no `Key : value` line at all is an error.
pub fn parse_query_text(text: &str) -> Result<QueryReport, ParseError> {
    let mut report = QueryReport::default();
    let mut read_any = false;
    for (index, raw) in text.lines().enumerate() {
        let line = raw.trim_end();
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with("==") || trimmed.starts_with("[...") {
            continue;
        }
        let indent = line.len() - trimmed.len();
        let (key, value) = split_entry(trimmed);
        if indent == 0 {
            match value {
                None if trimmed.starts_with("GPU ") => {
                    let bus_id = trimmed["GPU ".len()..].trim().to_string();
                    report.gpus.push(QueryGpu {
                        bus_id: Some(bus_id),
                        fields: Section::default(),
                    });
                    read_any = true;
                }
                Some(value) => {
                    header(&mut report, key, value);
                    read_any = true;
                }
                None => {
                    return Err(ParseError::Unexpected {
                        line: index + 1,
                        text: raw.to_string(),
                        expected: SHAPE.into(),
                    });
                }
            }
            continue;
        }
        if report.gpus.is_empty() {
            report.gpus.push(QueryGpu::default());
        }
        let gpu = report.gpus.last_mut().expect("pushed above");
        // nvidia-smi indents by four; a fragment's first line sets the level it starts at.
        let depth = (indent.saturating_sub(4) + 2) / 4;
        let entry = match value {
            Some(value) => Entry::Value(value.to_string()),
            None => Entry::Section(Section::default()),
        };
        gpu.fields.push(depth, key.to_string(), entry);
        read_any = true;
    }
    if !read_any {
        return Err(ParseError::Empty {
            expected: SHAPE.into(),
        });
    }
    Ok(report)
}

/// `Key   : value` to (`Key`, `Some("value")`); a section title to (`title`, `None`). The key
/// ends at the first ` :` (bus ids and times in values have colons without a space before).
fn split_entry(line: &str) -> (&str, Option<&str>) {
    match line.find(" :") {
        Some(at) => (line[..at].trim_end(), Some(line[at + 2..].trim())),
        None => (line, None),
    }
}

fn header(report: &mut QueryReport, key: &str, value: &str) {
    let value = value.to_string();
    match key {
        "Timestamp" => report.timestamp = Some(value),
        "Driver Version" => report.driver_version = Some(value),
        "CUDA Version" => report.cuda_version = Some(value),
        "Attached GPUs" => report.attached_gpus = value.parse().ok(),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "
==============NVSMI LOG==============

Timestamp                                 : Wed Sep 25 10:40:24 2024
Driver Version                            : 535.129.03
CUDA Version                              : 12.2

Attached GPUs                             : 1
GPU 00000000:07:00.0
    Product Name                          : NVIDIA A10
    Remapped Rows
        Correctable Error                 : 0
        Pending                           : Yes
        Bank Remap Availability Histogram
            Max                           : 192 bank(s)
    Processes                             : None
";

    #[test]
    fn reads_header_and_nested_sections() {
        let report = parse_query_text(SAMPLE).unwrap();
        assert_eq!(report.driver_version.as_deref(), Some("535.129.03"));
        assert_eq!(report.attached_gpus, Some(1));
        let gpu = &report.gpus[0];
        assert_eq!(gpu.bus_id.as_deref(), Some("00000000:07:00.0"));
        assert_eq!(gpu.fields.value(&["Product Name"]), Some("NVIDIA A10"));
        assert_eq!(gpu.fields.value(&["remapped rows", "pending"]), Some("Yes"));
        assert_eq!(
            gpu.fields
                .value(&["Remapped Rows", "Bank Remap Availability Histogram", "Max"]),
            Some("192 bank(s)")
        );
        assert_eq!(gpu.fields.value(&["Processes"]), Some("None"));
        assert!(gpu.fields.section(&["Remapped Rows"]).is_some());
    }

    #[test]
    fn a_fragment_without_its_gpu_line_is_one_gpu() {
        let text = "    Retired pages\n        Single Bit ECC             : 2\n        Pending Page Blacklist    : Yes\n";
        let report = parse_query_text(text).unwrap();
        assert_eq!(report.gpus.len(), 1);
        assert_eq!(report.gpus[0].bus_id, None);
        assert_eq!(
            report.gpus[0]
                .fields
                .value(&["Retired Pages", "Single Bit ECC"]),
            Some("2")
        );
    }

    #[test]
    fn repeated_keys_serialize_as_arrays() {
        let text = "GPU 0\n    Processes\n        Process ID : 1\n        Process ID : 2\n";
        let json = serde_json::to_value(parse_query_text(text).unwrap()).unwrap();
        assert_eq!(
            json["gpus"][0]["fields"]["Processes"]["Process ID"],
            serde_json::json!(["1", "2"])
        );
    }

    #[test]
    fn text_that_is_not_a_report_is_an_error() {
        assert!(matches!(
            parse_query_text("\n\n"),
            Err(ParseError::Empty { .. })
        ));
        let err = parse_query_text("hello world\n").unwrap_err();
        assert!(err.to_string().contains("line 1"), "{err}");
    }
}
