//! `nvidia-smi -q -x`: the fields runbooks check, read from DTD v11 and v12 documents.

use quick_xml::XmlVersion;
use quick_xml::escape::resolve_predefined_entity;
use quick_xml::events::{BytesStart, Event};
use quick_xml::reader::Reader;
use serde::Serialize;

use super::csv::is_missing;
use super::error::{ParseError, line_at};

/// The document's header and its GPUs.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SmiReport {
    pub timestamp: Option<String>,
    pub driver_version: Option<String>,
    pub cuda_version: Option<String>,
    pub attached_gpus: Option<u64>,
    pub gpus: Vec<XmlGpu>,
}

/// One `<gpu>` element. Units are in the field names; `N/A` is `None`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct XmlGpu {
    /// The PCI bus id from the `id` attribute.
    pub id: Option<String>,
    pub product_name: Option<String>,
    pub product_brand: Option<String>,
    pub product_architecture: Option<String>,
    pub uuid: Option<String>,
    pub serial: Option<String>,
    pub vbios_version: Option<String>,
    pub mig_mode_current: Option<String>,
    pub mig_mode_pending: Option<String>,
    pub fb_memory_total_mib: Option<u64>,
    pub fb_memory_used_mib: Option<u64>,
    pub fb_memory_free_mib: Option<u64>,
    pub utilization_gpu_percent: Option<f64>,
    pub utilization_memory_percent: Option<f64>,
    pub temperature_gpu_c: Option<f64>,
    pub power_draw_w: Option<f64>,
    pub power_limit_w: Option<f64>,
    pub persistence_mode: Option<String>,
    pub pstate: Option<String>,
    pub processes: Vec<XmlProcess>,
}

/// One `<process_info>` under `<processes>`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct XmlProcess {
    pub pid: Option<u64>,
    pub process_name: Option<String>,
    pub used_memory_mib: Option<u64>,
    pub r#type: Option<String>,
}

const ROOT: &str = "nvidia_smi_log";
const PROCESS: &[&str] = &["gpu", "processes", "process_info"];

/// The report in an `nvidia-smi -q -x` document. Unknown elements are skipped; a document
/// that is not XML, has another root, or stops before its elements close is an error.
pub fn parse_xml(text: &str) -> Result<SmiReport, ParseError> {
    // Text is trimmed per element, not per event: trimming events would eat the spaces
    // around an entity such as `a &amp; b`.
    let mut reader = Reader::from_str(text);
    let mut parser = Parser::default();
    loop {
        let position = reader.buffer_position();
        let event = reader.read_event().map_err(|e| ParseError::Xml {
            line: line_at(text, to_offset(reader.error_position())),
            message: e.to_string(),
        })?;
        let line = || line_at(text, to_offset(position));
        match event {
            Event::Start(start) => parser.open(&start, line())?,
            Event::Empty(start) => {
                parser.open(&start, line())?;
                parser.close();
            }
            Event::End(_) => parser.close(),
            Event::Text(content) => {
                let content = content.decode().map_err(|e| xml_error(line(), &e))?;
                parser.text(&content, line())?;
            }
            Event::CData(content) => {
                let content = content.decode().map_err(|e| xml_error(line(), &e))?;
                parser.text(&content, line())?;
            }
            Event::GeneralRef(reference) => {
                let resolved = match reference.resolve_char_ref() {
                    Ok(Some(ch)) => ch.to_string(),
                    _ => {
                        let name = reference.decode().map_err(|e| xml_error(line(), &e))?;
                        resolve_predefined_entity(&name)
                            .unwrap_or_default()
                            .to_string()
                    }
                };
                parser.text(&resolved, line())?;
            }
            Event::Eof => return parser.finish(text),
            Event::Decl(_) | Event::PI(_) | Event::Comment(_) | Event::DocType(_) => {}
        }
    }
}

fn to_offset(position: u64) -> usize {
    usize::try_from(position).unwrap_or(usize::MAX)
}

fn xml_error(line: usize, error: &dyn std::fmt::Display) -> ParseError {
    ParseError::Xml {
        line,
        message: error.to_string(),
    }
}

/// Walks the element path and files each leaf's text by where it sits, so that a
/// `<fb_memory_usage>` inside `<mig_devices>` never overwrites the GPU's own.
#[derive(Default)]
struct Parser {
    path: Vec<String>,
    text: String,
    report: SmiReport,
    gpu: Option<XmlGpu>,
    process: Option<XmlProcess>,
    saw_root: bool,
}

impl Parser {
    fn open(&mut self, start: &BytesStart<'_>, line: usize) -> Result<(), ParseError> {
        let name = String::from_utf8_lossy(start.local_name().as_ref()).into_owned();
        if self.path.is_empty() {
            if name != ROOT || self.saw_root {
                return Err(ParseError::Unexpected {
                    line,
                    text: format!("<{name}>"),
                    expected: format!("one <{ROOT}> root element (nvidia-smi -q -x)"),
                });
            }
            self.saw_root = true;
        }
        self.path.push(name);
        self.text.clear();
        if self.at(&["gpu"]) {
            let id = start.try_get_attribute("id").ok().flatten().and_then(|a| {
                a.normalized_value(XmlVersion::default())
                    .ok()
                    .map(|v| v.trim().to_string())
            });
            self.gpu = Some(XmlGpu {
                id: id.filter(|id| !id.is_empty()),
                ..XmlGpu::default()
            });
        } else if self.at(PROCESS) {
            self.process = Some(XmlProcess::default());
        }
        Ok(())
    }

    fn text(&mut self, content: &str, line: usize) -> Result<(), ParseError> {
        if self.path.is_empty() {
            if content.trim().is_empty() {
                return Ok(());
            }
            return Err(ParseError::Unexpected {
                line,
                text: content.lines().next().unwrap_or_default().to_string(),
                expected: format!("an <{ROOT}> document (nvidia-smi -q -x)"),
            });
        }
        self.text.push_str(content);
        Ok(())
    }

    fn close(&mut self) {
        let value = std::mem::take(&mut self.text);
        self.assign(value.trim());
        if self.at(PROCESS) {
            if let (Some(gpu), Some(process)) = (self.gpu.as_mut(), self.process.take()) {
                gpu.processes.push(process);
            }
        } else if self.at(&["gpu"])
            && let Some(gpu) = self.gpu.take()
        {
            self.report.gpus.push(gpu);
        }
        self.path.pop();
    }

    /// Whether the current element sits at `relative` below the root.
    fn at(&self, relative: &[&str]) -> bool {
        self.path.len() == relative.len() + 1
            && self.path[1..].iter().zip(relative).all(|(a, b)| a == b)
    }

    fn assign(&mut self, value: &str) {
        let path: Vec<&str> = self.path.iter().skip(1).map(String::as_str).collect();
        let report = &mut self.report;
        match path.as_slice() {
            ["timestamp"] => report.timestamp = text(value),
            ["driver_version"] => report.driver_version = text(value),
            ["cuda_version"] => report.cuda_version = text(value),
            ["attached_gpus"] => report.attached_gpus = number(value),
            ["gpu", "processes", "process_info", leaf] => {
                if let Some(process) = self.process.as_mut() {
                    assign_process(process, leaf, value);
                }
            }
            ["gpu", rest @ ..] => {
                if let Some(gpu) = self.gpu.as_mut() {
                    assign_gpu(gpu, rest, value);
                }
            }
            _ => {}
        }
    }

    fn finish(self, text: &str) -> Result<SmiReport, ParseError> {
        if !self.saw_root {
            return Err(ParseError::Empty {
                expected: format!("an <{ROOT}> document (nvidia-smi -q -x)"),
            });
        }
        if !self.path.is_empty() {
            let missing: Vec<String> = self.path.iter().rev().map(|n| format!("</{n}>")).collect();
            return Err(ParseError::Truncated {
                line: line_at(text, text.len()),
                missing: missing.join(", "),
            });
        }
        Ok(self.report)
    }
}

fn assign_gpu(gpu: &mut XmlGpu, path: &[&str], value: &str) {
    match path {
        ["product_name"] => gpu.product_name = text(value),
        ["product_brand"] => gpu.product_brand = text(value),
        ["product_architecture"] => gpu.product_architecture = text(value),
        ["uuid"] => gpu.uuid = text(value),
        ["serial"] => gpu.serial = text(value),
        ["vbios_version"] => gpu.vbios_version = text(value),
        ["persistence_mode"] => gpu.persistence_mode = text(value),
        ["performance_state"] => gpu.pstate = text(value),
        ["mig_mode", "current_mig"] => gpu.mig_mode_current = text(value),
        ["mig_mode", "pending_mig"] => gpu.mig_mode_pending = text(value),
        ["fb_memory_usage", "total"] => gpu.fb_memory_total_mib = number(value),
        ["fb_memory_usage", "used"] => gpu.fb_memory_used_mib = number(value),
        ["fb_memory_usage", "free"] => gpu.fb_memory_free_mib = number(value),
        ["utilization", "gpu_util"] => gpu.utilization_gpu_percent = number(value),
        ["utilization", "memory_util"] => gpu.utilization_memory_percent = number(value),
        ["temperature", "gpu_temp"] => gpu.temperature_gpu_c = number(value),
        // v11 has <power_readings>, v12 <gpu_power_readings>; newer drivers report
        // instant/average draw and N/A for plain draw. The first real reading wins.
        [
            "power_readings" | "gpu_power_readings",
            "power_draw" | "instant_power_draw" | "average_power_draw",
        ] => gpu.power_draw_w = gpu.power_draw_w.or_else(|| number(value)),
        [
            "power_readings" | "gpu_power_readings",
            "power_limit" | "current_power_limit" | "enforced_power_limit",
        ] => gpu.power_limit_w = gpu.power_limit_w.or_else(|| number(value)),
        _ => {}
    }
}

fn assign_process(process: &mut XmlProcess, leaf: &str, value: &str) {
    match leaf {
        "pid" => process.pid = number(value),
        "type" => process.r#type = text(value),
        "process_name" => process.process_name = text(value),
        "used_memory" => process.used_memory_mib = number(value),
        _ => {}
    }
}

fn text(value: &str) -> Option<String> {
    (!is_missing(value)).then(|| value.to_string())
}

/// The leading number of `23028 MiB`, `29 C`, `25.90 W` or `0 %`.
fn number<T: std::str::FromStr>(value: &str) -> Option<T> {
    if is_missing(value) {
        return None;
    }
    value.split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::test_fixtures::fixture;

    #[test]
    fn a10g_dtd_v11() {
        let text = fixture("nvidia_smi_q_x_a10g_telegraf.xml");
        let report = parse_xml(&text).unwrap();
        assert_eq!(
            report.timestamp.as_deref(),
            Some("Mon Apr 24 16:11:51 2023")
        );
        assert_eq!(report.driver_version.as_deref(), Some("515.105.01"));
        assert_eq!(report.cuda_version.as_deref(), Some("11.7"));
        assert_eq!(report.attached_gpus, Some(1));
        assert_eq!(report.gpus.len(), 1);
        let gpu = &report.gpus[0];
        assert_eq!(gpu.id.as_deref(), Some("00000000:00:1E.0"));
        assert_eq!(gpu.product_name.as_deref(), Some("NVIDIA A10G"));
        assert_eq!(gpu.product_brand.as_deref(), Some("NVIDIA"));
        assert_eq!(gpu.product_architecture.as_deref(), Some("Ampere"));
        assert_eq!(
            gpu.uuid.as_deref(),
            Some("GPU-9a9a6c50-2a47-2f51-a902-b82c3b127e94")
        );
        assert_eq!(gpu.serial.as_deref(), Some("0000000000000"));
        assert_eq!(gpu.vbios_version.as_deref(), Some("94.02.75.00.01"));
        assert_eq!(gpu.mig_mode_current, None);
        assert_eq!(gpu.mig_mode_pending, None);
        assert_eq!(gpu.fb_memory_total_mib, Some(23028));
        assert_eq!(gpu.fb_memory_used_mib, Some(22));
        assert_eq!(gpu.fb_memory_free_mib, Some(22569));
        assert_eq!(gpu.utilization_gpu_percent, Some(0.0));
        assert_eq!(gpu.utilization_memory_percent, Some(0.0));
        assert_eq!(gpu.temperature_gpu_c, Some(17.0));
        assert_eq!(gpu.power_draw_w, Some(25.58));
        assert_eq!(gpu.power_limit_w, Some(300.0));
        assert_eq!(gpu.persistence_mode.as_deref(), Some("Disabled"));
        assert_eq!(gpu.pstate.as_deref(), Some("P8"));
        assert_eq!(
            gpu.processes,
            [XmlProcess {
                pid: Some(725),
                process_name: Some("/usr/lib/xorg/Xorg".into()),
                used_memory_mib: Some(22),
                r#type: Some("G".into()),
            }]
        );
    }

    #[test]
    fn a100_dtd_v12_with_mig() {
        let text = fixture("nvidia_smi_q_x_a100_sxm4_telegraf.xml");
        let report = parse_xml(&text).unwrap();
        assert_eq!(report.driver_version.as_deref(), Some("535.54.03"));
        assert_eq!(report.cuda_version.as_deref(), Some("12.2"));
        // The capture says 4 attached but holds one <gpu> element.
        assert_eq!(report.attached_gpus, Some(4));
        assert_eq!(report.gpus.len(), 1);
        let gpu = &report.gpus[0];
        assert_eq!(gpu.id.as_deref(), Some("00000000:01:00.0"));
        assert_eq!(gpu.product_name.as_deref(), Some("NVIDIA A100-SXM4-80GB"));
        assert_eq!(gpu.serial.as_deref(), Some("1650522003820"));
        assert_eq!(gpu.mig_mode_current.as_deref(), Some("Enabled"));
        assert_eq!(gpu.mig_mode_pending.as_deref(), Some("Enabled"));
        // The MIG devices' own <fb_memory_usage> (19968 MiB) must not leak in.
        assert_eq!(gpu.fb_memory_total_mib, Some(81920));
        assert_eq!(gpu.fb_memory_used_mib, Some(50));
        assert_eq!(gpu.fb_memory_free_mib, Some(80999));
        assert_eq!(gpu.utilization_gpu_percent, None);
        assert_eq!(gpu.temperature_gpu_c, Some(27.0));
        assert_eq!(gpu.power_draw_w, Some(67.03));
        assert_eq!(gpu.power_limit_w, Some(500.0));
        assert_eq!(gpu.pstate.as_deref(), Some("P0"));
        assert!(gpu.processes.is_empty());
    }

    #[test]
    fn newer_power_readings_and_entities() {
        let text = r#"<?xml version="1.0" ?>
<nvidia_smi_log>
  <driver_version>590.48.01</driver_version>
  <gpu id="00000000:00:09.0">
    <gpu_power_readings>
      <power_draw>N/A</power_draw>
      <average_power_draw>69.85 W</average_power_draw>
      <instant_power_draw>69.62 W</instant_power_draw>
      <current_power_limit>700.00 W</current_power_limit>
    </gpu_power_readings>
    <module_power_readings><power_draw>900.00 W</power_draw></module_power_readings>
    <processes>
      <process_info><pid>11345</pid><type>C</type>
        <process_name>./gpu &amp; burn</process_name><used_memory>15690 MiB</used_memory>
      </process_info>
    </processes>
  </gpu>
</nvidia_smi_log>"#;
        let report = parse_xml(text).unwrap();
        let gpu = &report.gpus[0];
        assert_eq!(gpu.power_draw_w, Some(69.85));
        assert_eq!(gpu.power_limit_w, Some(700.0));
        assert_eq!(
            gpu.processes[0].process_name.as_deref(),
            Some("./gpu & burn")
        );
        assert_eq!(gpu.processes[0].used_memory_mib, Some(15690));
        assert_eq!(report.cuda_version, None);
    }

    #[test]
    fn truncated_document_names_the_missing_closers() {
        let text = "<nvidia_smi_log>\n<gpu id=\"0\">\n<product_name>NVIDIA A10G</product_name>\n";
        let err = parse_xml(text).unwrap_err();
        assert_eq!(
            err,
            ParseError::Truncated {
                line: 4,
                missing: "</gpu>, </nvidia_smi_log>".into()
            }
        );
        assert!(err.to_string().contains("expected </gpu>"), "{err}");
    }

    #[test]
    fn truncated_real_document() {
        let text = fixture("nvidia_smi_q_x_a10g_telegraf.xml");
        let cut = text.find("<fb_memory_usage>").unwrap();
        let err = parse_xml(&text[..cut]).unwrap_err();
        assert!(matches!(err, ParseError::Truncated { .. }), "{err}");
        assert!(
            err.to_string().ends_with("</gpu>, </nvidia_smi_log>"),
            "{err}"
        );
    }

    #[test]
    fn not_xml() {
        let err = parse_xml(
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n",
        )
        .unwrap_err();
        assert!(
            matches!(err, ParseError::Unexpected { line: 1, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("NVIDIA-SMI has failed"), "{err}");
        assert!(matches!(
            parse_xml("  \n").unwrap_err(),
            ParseError::Empty { .. }
        ));
    }

    #[test]
    fn wrong_root_and_malformed() {
        let err = parse_xml("<html><body/></html>").unwrap_err();
        assert!(err.to_string().contains("<nvidia_smi_log> root"), "{err}");
        let err =
            parse_xml("<nvidia_smi_log>\n<gpu>\n</cuda_version>\n</nvidia_smi_log>").unwrap_err();
        assert!(matches!(err, ParseError::Xml { line: 3, .. }), "{err}");
    }
}
