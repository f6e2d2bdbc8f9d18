//! `nvidia-smi -q -x`: the XML log, in the `nvsmi_device_v12.dtd` element layout of recent
//! drivers, filled with an A10G's values.

use super::super::gpu_model::{GpuDevice, GpuHost, MigMode};

/// Writes indented XML, four spaces a level, as `nvidia-smi` does.
struct Writer {
    out: String,
    depth: usize,
}

impl Writer {
    fn line(&mut self, text: &str) {
        for _ in 0..self.depth {
            self.out.push_str("    ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    fn open(&mut self, tag: &str) {
        self.line(&format!("<{tag}>"));
        self.depth += 1;
    }

    fn close(&mut self, tag: &str) {
        self.depth = self.depth.saturating_sub(1);
        self.line(&format!("</{tag}>"));
    }

    fn leaf(&mut self, tag: &str, value: impl AsRef<str>) {
        self.line(&format!("<{tag}>{}</{tag}>", escape(value.as_ref())));
    }

    /// `<tag>` with `(child, value)` leaves, then `</tag>`.
    fn group(&mut self, tag: &str, leaves: &[(&str, String)]) {
        self.open(tag);
        for (child, value) in leaves {
            self.leaf(child, value);
        }
        self.close(tag);
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn s(text: &str) -> String {
    text.to_owned()
}

fn na() -> String {
    s("N/A")
}

fn watts(value: f64) -> String {
    format!("{value:.2} W")
}

/// The whole document, newline-terminated.
pub(crate) fn render(host: &GpuHost) -> String {
    let mut w = Writer {
        out: String::new(),
        depth: 0,
    };
    w.line(r#"<?xml version="1.0" encoding="UTF-8"?>"#);
    w.line(r#"<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">"#);
    w.open("nvidia_smi_log");
    w.leaf("timestamp", &host.timestamp);
    w.leaf("driver_version", &host.driver_version);
    w.leaf("cuda_version", &host.cuda_version);
    w.leaf("attached_gpus", host.gpus.len().to_string());
    for gpu in &host.gpus {
        gpu_element(&mut w, host, gpu);
    }
    w.close("nvidia_smi_log");
    w.out
}

fn gpu_element(w: &mut Writer, host: &GpuHost, gpu: &GpuDevice) {
    let idle = gpu.performance_state == 8;
    w.line(&format!(r#"<gpu id="{}">"#, gpu.bus_id()));
    w.depth += 1;
    product_and_modes(w, gpu);
    board(w, gpu);
    firmware_and_virtualization(w, host, gpu);
    pci(w, gpu, idle);
    w.leaf(
        "fan_speed",
        gpu.fan_percent.map_or_else(na, |f| format!("{f} %")),
    );
    w.leaf("performance_state", gpu.pstate());
    clocks_event_reasons(w, idle);
    memory(w, gpu);
    utilization(w, gpu);
    errors(w, gpu);
    thermals_and_power(w, gpu);
    clocks(w, gpu, idle);
    processes(w, host, gpu);
    w.depth -= 1;
    w.line("</gpu>");
}

/// From `product_name` to the driver model: what the GPU is and its display, persistence,
/// MIG and accounting modes.
fn product_and_modes(w: &mut Writer, gpu: &GpuDevice) {
    let mig = match gpu.mig_mode {
        MigMode::Unsupported => na(),
        MigMode::Disabled => s("Disabled"),
        MigMode::Enabled => s("Enabled"),
    };
    w.leaf("product_name", &gpu.name);
    w.leaf("product_brand", "NVIDIA");
    w.leaf("product_architecture", &gpu.architecture);
    w.leaf("display_mode", "Disabled");
    w.leaf("display_active", "Disabled");
    w.leaf(
        "persistence_mode",
        if gpu.persistence_mode {
            "Enabled"
        } else {
            "Disabled"
        },
    );
    w.leaf("addressing_mode", "None");
    w.group(
        "mig_mode",
        &[("current_mig", mig.clone()), ("pending_mig", mig)],
    );
    w.open("mig_devices");
    w.line("None");
    w.close("mig_devices");
    w.leaf("accounting_mode", "Disabled");
    w.leaf("accounting_mode_buffer_size", "4000");
    w.group(
        "driver_model",
        &[("current_dm", na()), ("pending_dm", na())],
    );
}

/// The board's identity: serial, UUID, VBIOS and part numbers.
fn board(w: &mut Writer, gpu: &GpuDevice) {
    w.leaf("serial", &gpu.serial);
    w.leaf("uuid", &gpu.uuid);
    w.leaf("minor_number", gpu.index.to_string());
    w.leaf("vbios_version", &gpu.vbios_version);
    w.leaf("multigpu_board", "No");
    w.leaf(
        "board_id",
        format!("0x{:x}", gpu.pci_bus << 8 | gpu.pci_device),
    );
    w.leaf("board_part_number", "N/A");
    w.leaf("gpu_part_number", "000-00000-0000-000");
    w.leaf("gpu_fru_part_number", "N/A");
    w.leaf("gpu_module_id", "0");
}

/// The InfoROM and GSP firmware, the operation and virtualization modes, the reset status.
fn firmware_and_virtualization(w: &mut Writer, host: &GpuHost, gpu: &GpuDevice) {
    w.group(
        "inforom_version",
        &[
            ("img_version", gpu.inforom_image.clone()),
            ("oem_object", s("2.0")),
            ("ecc_object", s("6.16")),
            ("pwr_object", na()),
        ],
    );
    w.group(
        "gpu_operation_mode",
        &[("current_gom", na()), ("pending_gom", na())],
    );
    w.leaf("gsp_firmware_version", &host.driver_version);
    w.group(
        "gpu_virtualization_mode",
        &[
            ("virtualization_mode", s("Pass-Through")),
            ("host_vgpu_mode", na()),
        ],
    );
    w.group(
        "gpu_reset_status",
        &[
            ("reset_required", s("No")),
            ("drain_and_reset_recommended", s("No")),
        ],
    );
    w.group("ibmnpu", &[("relaxed_ordering_mode", na())]);
}

/// Why the clocks are where they are: only `gpu_idle`, and only at P8.
fn clocks_event_reasons(w: &mut Writer, idle: bool) {
    let reasons: Vec<(String, String)> = [
        "gpu_idle",
        "applications_clocks_setting",
        "sw_power_cap",
        "hw_slowdown",
        "hw_thermal_slowdown",
        "hw_power_brake_slowdown",
        "sync_boost",
        "sw_thermal_slowdown",
        "display_clocks_setting",
    ]
    .iter()
    .map(|r| {
        let active = *r == "gpu_idle" && idle;
        (
            format!("clocks_event_reason_{r}"),
            s(if active { "Active" } else { "Not Active" }),
        )
    })
    .collect();
    w.open("clocks_event_reasons");
    for (tag, value) in &reasons {
        w.leaf(tag, value);
    }
    w.close("clocks_event_reasons");
}

fn pci(w: &mut Writer, gpu: &GpuDevice, idle: bool) {
    let gen_now = if idle { "1" } else { "4" };
    w.open("pci");
    w.leaf("pci_bus", format!("{:02X}", gpu.pci_bus));
    w.leaf("pci_device", format!("{:02X}", gpu.pci_device));
    w.leaf("pci_domain", format!("{:04X}", gpu.pci_domain));
    w.leaf("pci_device_id", format!("{:08X}", gpu.pci_device_id));
    w.leaf("pci_bus_id", gpu.bus_id());
    w.leaf(
        "pci_sub_system_id",
        format!("{:08X}", gpu.pci_sub_system_id),
    );
    w.open("pci_gpu_link_info");
    w.group(
        "pcie_gen",
        &[
            ("max_link_gen", s("4")),
            ("current_link_gen", s(gen_now)),
            ("device_current_link_gen", s(gen_now)),
            ("max_device_link_gen", s("4")),
            ("max_host_link_gen", s("4")),
        ],
    );
    w.group(
        "link_widths",
        &[
            ("max_link_width", s("16x")),
            ("current_link_width", s("8x")),
        ],
    );
    w.close("pci_gpu_link_info");
    w.group(
        "pci_bridge_chip",
        &[("bridge_chip_type", na()), ("bridge_chip_fw", na())],
    );
    w.leaf("replay_counter", "0");
    w.leaf("replay_rollover_counter", "0");
    w.leaf("tx_util", "0 KB/s");
    w.leaf("rx_util", "0 KB/s");
    w.leaf("atomic_caps_inbound", "N/A");
    w.leaf("atomic_caps_outbound", "N/A");
    w.close("pci");
}

fn memory(w: &mut Writer, gpu: &GpuDevice) {
    let mib = |v: u64| format!("{v} MiB");
    w.group(
        "fb_memory_usage",
        &[
            ("total", mib(gpu.memory_total_mib)),
            ("reserved", mib(gpu.memory_reserved_mib)),
            ("used", mib(gpu.memory_used_mib)),
            ("free", mib(gpu.memory_free_mib())),
        ],
    );
    w.group(
        "bar1_memory_usage",
        &[
            ("total", mib(gpu.bar1_total_mib)),
            ("used", mib(1)),
            ("free", mib(gpu.bar1_total_mib.saturating_sub(1))),
        ],
    );
    w.group(
        "cc_protected_memory_usage",
        &[("total", mib(0)), ("used", mib(0)), ("free", mib(0))],
    );
    w.leaf("compute_mode", &gpu.compute_mode);
}

fn utilization(w: &mut Writer, gpu: &GpuDevice) {
    w.group(
        "utilization",
        &[
            ("gpu_util", format!("{} %", gpu.utilization_percent)),
            (
                "memory_util",
                format!("{} %", gpu.memory_utilization_percent),
            ),
            ("encoder_util", s("0 %")),
            ("decoder_util", s("0 %")),
            ("jpeg_util", na()),
            ("ofa_util", na()),
        ],
    );
    let zero_stats = [
        ("session_count", s("0")),
        ("average_fps", s("0")),
        ("average_latency", s("0")),
    ];
    w.group("encoder_stats", &zero_stats);
    w.group("fbc_stats", &zero_stats);
}

fn errors(w: &mut Writer, gpu: &GpuDevice) {
    let ecc = s(if gpu.ecc_enabled {
        "Enabled"
    } else {
        "Disabled"
    });
    w.group(
        "ecc_mode",
        &[("current_ecc", ecc.clone()), ("pending_ecc", ecc)],
    );
    let counts = [
        ("sram_correctable", s("0")),
        ("sram_uncorrectable", s("0")),
        ("dram_correctable", s("0")),
        (
            "dram_uncorrectable",
            gpu.ecc_uncorrected_volatile.to_string(),
        ),
    ];
    w.open("ecc_errors");
    w.group("volatile", &counts);
    w.group("aggregate", &counts);
    w.close("ecc_errors");
    w.open("retired_pages");
    let retired = [("retired_count", na()), ("retired_pagelist", na())];
    w.group("multiple_single_bit_retirement", &retired);
    w.group("double_bit_retirement", &retired);
    w.leaf("pending_blacklist", "N/A");
    w.leaf("pending_retirement", "N/A");
    w.close("retired_pages");
    w.open("remapped_rows");
    w.leaf("remapped_row_corr", "0");
    w.leaf(
        "remapped_row_unc",
        gpu.remapped_rows_uncorrectable.to_string(),
    );
    w.leaf(
        "remapped_row_pending",
        if gpu.remapped_rows_pending {
            "Yes"
        } else {
            "No"
        },
    );
    w.leaf("remapped_row_failure", "No");
    w.group(
        "row_remapper_histogram",
        &[
            ("row_remapper_histogram_max", s("192 bank(s)")),
            ("row_remapper_histogram_high", s("0 bank(s)")),
            ("row_remapper_histogram_partial", s("0 bank(s)")),
            ("row_remapper_histogram_low", s("0 bank(s)")),
            ("row_remapper_histogram_none", s("0 bank(s)")),
        ],
    );
    w.close("remapped_rows");
}

fn thermals_and_power(w: &mut Writer, gpu: &GpuDevice) {
    w.group(
        "temperature",
        &[
            ("gpu_temp", format!("{} C", gpu.temperature_c)),
            ("gpu_temp_tlimit", na()),
            ("gpu_temp_max_threshold", s("98 C")),
            ("gpu_temp_slow_threshold", s("95 C")),
            ("gpu_temp_max_gpu_threshold", s("88 C")),
            ("gpu_target_temperature", na()),
            ("memory_temp", na()),
            ("gpu_temp_max_mem_threshold", na()),
        ],
    );
    w.group(
        "supported_gpu_target_temp",
        &[("gpu_target_temp_min", na()), ("gpu_target_temp_max", na())],
    );
    let cap = watts(f64::from(gpu.power_cap_w));
    w.group(
        "gpu_power_readings",
        &[
            ("power_state", gpu.pstate()),
            ("power_draw", watts(gpu.power_draw_w)),
            ("current_power_limit", cap.clone()),
            ("requested_power_limit", cap),
            ("default_power_limit", watts(f64::from(gpu.power_max_w))),
            ("min_power_limit", watts(f64::from(gpu.power_min_w))),
            ("max_power_limit", watts(f64::from(gpu.power_max_w))),
        ],
    );
    w.group(
        "module_power_readings",
        &[
            ("power_state", gpu.pstate()),
            ("power_draw", na()),
            ("current_power_limit", na()),
            ("requested_power_limit", na()),
            ("default_power_limit", na()),
            ("min_power_limit", na()),
            ("max_power_limit", na()),
        ],
    );
}

fn clocks(w: &mut Writer, gpu: &GpuDevice, idle: bool) {
    let mhz = |v: u32| format!("{v} MHz");
    w.group(
        "clocks",
        &[
            ("graphics_clock", mhz(gpu.clock_graphics_mhz)),
            ("sm_clock", mhz(gpu.clock_sm_mhz)),
            ("mem_clock", mhz(gpu.clock_mem_mhz)),
            ("video_clock", mhz(gpu.clock_video_mhz)),
        ],
    );
    let applications = [
        ("graphics_clock", mhz(gpu.max_clock_graphics_mhz)),
        ("mem_clock", mhz(gpu.max_clock_mem_mhz)),
    ];
    w.group("applications_clocks", &applications);
    w.group("default_applications_clocks", &applications);
    w.group("deferred_clocks", &[("mem_clock", na())]);
    w.group(
        "max_clocks",
        &[
            ("graphics_clock", mhz(gpu.max_clock_graphics_mhz)),
            ("sm_clock", mhz(gpu.max_clock_graphics_mhz)),
            ("mem_clock", mhz(gpu.max_clock_mem_mhz)),
            ("video_clock", mhz(gpu.max_clock_video_mhz)),
        ],
    );
    w.group(
        "max_customer_boost_clocks",
        &[("graphics_clock", mhz(gpu.max_clock_graphics_mhz))],
    );
    w.group(
        "clock_policy",
        &[("auto_boost", na()), ("auto_boost_default", na())],
    );
    let volts = if idle { "693.750 mV" } else { "881.250 mV" };
    w.group("voltage", &[("graphics_volt", s(volts))]);
    w.group("fabric", &[("state", na()), ("status", na())]);
    w.open("supported_clocks");
    for (mem, top) in [
        (gpu.max_clock_mem_mhz, gpu.max_clock_graphics_mhz),
        (405, 420),
    ] {
        w.open("supported_mem_clock");
        w.leaf("value", mhz(mem));
        let mut clock = top;
        while clock >= 210 {
            w.leaf("supported_graphics_clock", mhz(clock));
            clock -= 15;
        }
        w.close("supported_mem_clock");
    }
    w.close("supported_clocks");
}

fn processes(w: &mut Writer, host: &GpuHost, gpu: &GpuDevice) {
    let mut listed = host.processes_on(gpu.index).peekable();
    if listed.peek().is_none() {
        w.line("<processes />");
    } else {
        w.open("processes");
        for process in listed {
            w.group(
                "process_info",
                &[
                    ("gpu_instance_id", na()),
                    ("compute_instance_id", na()),
                    ("pid", process.pid.to_string()),
                    ("type", process.process_type.clone()),
                    ("process_name", process.name.clone()),
                    ("used_memory", format!("{} MiB", process.used_memory_mib)),
                ],
            );
        }
        w.close("processes");
    }
    w.line("<accounted_processes />");
}

#[cfg(test)]
#[path = "xml_tests.rs"]
mod tests;
