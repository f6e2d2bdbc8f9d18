//! `nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits]`: the queryable GPU fields,
//! their header names with units (`memory.total [MiB]`) and their values (`23028 MiB`, `[N/A]`).

use super::super::gpu_model::{GpuDevice, GpuHost, MigMode};

/// One cell of a query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Cell {
    /// Printed as is (`NVIDIA A10G`, `P8`, `41` for a temperature).
    Text(String),
    /// A number and its unit: `23028 MiB`, or `23028` with `nounits`.
    Measure(String, &'static str),
    /// `[N/A]`, with or without units.
    NotAvailable,
}

/// How a field reads its value off the host and one of its GPUs.
pub(crate) type Getter = fn(&GpuHost, &GpuDevice) -> Cell;

/// A field of `--query-gpu`: its canonical name, the other names it answers to, its unit.
pub(crate) struct Field {
    pub(crate) name: &'static str,
    pub(crate) aliases: &'static [&'static str],
    pub(crate) unit: Option<&'static str>,
    pub(crate) value: Getter,
}

impl Field {
    /// The same field under other names too (`gpu_name` for `name`).
    const fn or(self, aliases: &'static [&'static str]) -> Self {
        Self { aliases, ..self }
    }

    /// The column header: `memory.total [MiB]`, `name`.
    pub(crate) fn header(&self) -> String {
        match self.unit {
            Some(unit) => format!("{} [{unit}]", self.name),
            None => self.name.to_owned(),
        }
    }
}

fn text(value: impl ToString) -> Cell {
    Cell::Text(value.to_string())
}

fn mib(value: u64) -> Cell {
    Cell::Measure(value.to_string(), "MiB")
}

fn mhz(value: u32) -> Cell {
    Cell::Measure(value.to_string(), "MHz")
}

fn percent(value: u32) -> Cell {
    Cell::Measure(value.to_string(), "%")
}

fn watts(value: f64) -> Cell {
    Cell::Measure(format!("{value:.2}"), "W")
}

fn yes_no(on: bool) -> &'static str {
    if on { "Yes" } else { "No" }
}

fn enabled(on: bool) -> Cell {
    text(if on { "Enabled" } else { "Disabled" })
}

/// A clock event reason as the csv prints it.
fn active(on: bool) -> Cell {
    text(if on { "Active" } else { "Not Active" })
}

fn mig(gpu: &GpuDevice) -> Cell {
    match gpu.mig_mode {
        MigMode::Unsupported => Cell::NotAvailable,
        MigMode::Disabled => text("Disabled"),
        MigMode::Enabled => text("Enabled"),
    }
}

const fn field(name: &'static str, value: Getter) -> Field {
    Field {
        name,
        aliases: &[],
        unit: None,
        value,
    }
}

const fn measured(name: &'static str, unit: &'static str, value: Getter) -> Field {
    Field {
        name,
        aliases: &[],
        unit: Some(unit),
        value,
    }
}

/// The fields the twin answers, in `--help-query-gpu` order.
pub(crate) const FIELDS: &[Field] = &[
    field("timestamp", |h, _| text(csv_timestamp(&h.timestamp))),
    field("driver_version", |h, _| text(&h.driver_version)),
    field("count", |h, _| text(h.gpus.len())),
    field("name", |_, g| text(&g.name)).or(&["gpu_name"]),
    field("serial", |_, g| text(&g.serial)).or(&["gpu_serial"]),
    field("uuid", |_, g| text(&g.uuid)).or(&["gpu_uuid"]),
    field("pci.bus_id", |_, g| text(g.bus_id())).or(&["gpu_bus_id"]),
    field("pci.domain", |_, g| text(format!("0x{:04X}", g.pci_domain))),
    field("pci.bus", |_, g| text(format!("0x{:02X}", g.pci_bus))),
    field("pci.device", |_, g| text(format!("0x{:02X}", g.pci_device))),
    field("pci.device_id", |_, g| {
        text(format!("0x{:08X}", g.pci_device_id))
    }),
    field("pci.sub_device_id", |_, g| {
        text(format!("0x{:08X}", g.pci_sub_system_id))
    }),
    field("pcie.link.gen.current", |_, g| {
        text(if g.performance_state == 8 { 1 } else { 4 })
    }),
    field("pcie.link.gen.max", |_, _| text(4)),
    field("pcie.link.width.current", |_, g| text(g.pcie_width)),
    field("pcie.link.width.max", |_, _| text(16)),
    field("index", |_, g| text(g.index)),
    field("display_mode", |_, _| text("Disabled")),
    field("display_active", |_, _| text("Disabled")),
    field("persistence_mode", |_, g| enabled(g.persistence_mode)),
    field("accounting.mode", |_, _| text("Disabled")),
    field("accounting.buffer_size", |_, _| text(4000)),
    field("driver_model.current", |_, _| Cell::NotAvailable),
    field("driver_model.pending", |_, _| Cell::NotAvailable),
    field("vbios_version", |_, g| text(&g.vbios_version)),
    field("inforom.img", |_, g| text(&g.inforom_image)).or(&["inforom.image"]),
    field("gpu_recovery_action", |_, g| text(&g.recovery_action)),
    field("gom.current", |_, _| Cell::NotAvailable).or(&["gpu_operation_mode.current"]),
    field("gom.pending", |_, _| Cell::NotAvailable).or(&["gpu_operation_mode.pending"]),
    measured("fan.speed", "%", |_, g| {
        g.fan_percent.map_or(Cell::NotAvailable, percent)
    }),
    field("pstate", |_, g| text(g.pstate())),
    measured("memory.total", "MiB", |_, g| mib(g.memory_total_mib)),
    measured("memory.reserved", "MiB", |_, g| mib(g.memory_reserved_mib)),
    measured("memory.used", "MiB", |_, g| mib(g.memory_used_mib)),
    measured("memory.free", "MiB", |_, g| mib(g.memory_free_mib())),
    field("compute_mode", |_, g| text(&g.compute_mode)),
    field("compute_cap", |_, g| text(&g.compute_cap)),
    measured("utilization.gpu", "%", |_, g| {
        percent(g.utilization_percent)
    }),
    measured("utilization.memory", "%", |_, g| {
        percent(g.memory_utilization_percent)
    }),
    measured("utilization.encoder", "%", |_, _| percent(0)),
    measured("utilization.decoder", "%", |_, _| percent(0)),
    field("ecc.mode.current", |_, g| enabled(g.ecc_enabled)),
    field("ecc.mode.pending", |_, g| enabled(g.ecc_enabled)),
    field("ecc.errors.corrected.volatile.total", |_, _| text(0)),
    field("ecc.errors.corrected.aggregate.total", |_, _| text(0)),
    field("ecc.errors.uncorrected.volatile.total", |_, g| {
        text(g.ecc_uncorrected_volatile)
    }),
    field("ecc.errors.uncorrected.aggregate.total", |_, g| {
        text(g.ecc_uncorrected_volatile)
    }),
    field("remapped_rows.correctable", |_, _| text(0)),
    field("remapped_rows.uncorrectable", |_, g| {
        text(g.remapped_rows_uncorrectable)
    }),
    field("remapped_rows.pending", |_, g| {
        text(yes_no(g.remapped_rows_pending))
    }),
    field("remapped_rows.failure", |_, _| text("No")),
    // The A10G retires no pages and reports no SRAM threshold (its `-q` prints N/A there).
    field("retired_pages.single_bit_ecc.count", |_, _| {
        Cell::NotAvailable
    })
    .or(&["retired_pages.sbe"]),
    field("retired_pages.double_bit.count", |_, _| Cell::NotAvailable).or(&["retired_pages.dbe"]),
    field("retired_pages.pending", |_, _| Cell::NotAvailable),
    field(
        "ecc.errors.uncorrected.aggregate.sram.thresholdExceeded",
        |_, _| Cell::NotAvailable,
    ),
    field("clocks_event_reasons.gpu_idle", |_, g| {
        active(g.performance_state == 8)
    })
    .or(&["clocks_throttle_reasons.gpu_idle"]),
    field("clocks_event_reasons.hw_slowdown", |_, _| active(false))
        .or(&["clocks_throttle_reasons.hw_slowdown"]),
    field("clocks_event_reasons.hw_thermal_slowdown", |_, _| {
        active(false)
    })
    .or(&["clocks_throttle_reasons.hw_thermal_slowdown"]),
    field("clocks_event_reasons.hw_power_brake_slowdown", |_, _| {
        active(false)
    })
    .or(&["clocks_throttle_reasons.hw_power_brake_slowdown"]),
    field("clocks_event_reasons.sw_thermal_slowdown", |_, _| {
        active(false)
    })
    .or(&["clocks_throttle_reasons.sw_thermal_slowdown"]),
    field("temperature.gpu", |_, g| text(g.temperature_c)),
    field("temperature.memory", |_, _| Cell::NotAvailable),
    measured("power.draw", "W", |_, g| watts(g.power_draw_w)),
    measured("power.draw.average", "W", |_, g| watts(g.power_draw_w)),
    measured("power.draw.instant", "W", |_, g| watts(g.power_draw_w)),
    measured("power.limit", "W", |_, g| watts(f64::from(g.power_cap_w))),
    measured("enforced.power.limit", "W", |_, g| {
        watts(f64::from(g.power_cap_w))
    }),
    measured("power.default_limit", "W", |_, g| {
        watts(f64::from(g.power_max_w))
    }),
    measured("power.min_limit", "W", |_, g| {
        watts(f64::from(g.power_min_w))
    }),
    measured("power.max_limit", "W", |_, g| {
        watts(f64::from(g.power_max_w))
    }),
    measured("clocks.current.graphics", "MHz", |_, g| {
        mhz(g.clock_graphics_mhz)
    })
    .or(&["clocks.gr"]),
    measured("clocks.current.sm", "MHz", |_, g| mhz(g.clock_sm_mhz)).or(&["clocks.sm"]),
    measured("clocks.current.memory", "MHz", |_, g| mhz(g.clock_mem_mhz)).or(&["clocks.mem"]),
    measured("clocks.current.video", "MHz", |_, g| mhz(g.clock_video_mhz)).or(&["clocks.video"]),
    // Application clocks at their defaults, the boards' maximum (the A10G capture: 1710 MHz).
    measured("clocks.applications.graphics", "MHz", |_, g| {
        mhz(g.max_clock_graphics_mhz)
    })
    .or(&["clocks.applications.gr"]),
    measured("clocks.default_applications.graphics", "MHz", |_, g| {
        mhz(g.max_clock_graphics_mhz)
    })
    .or(&["clocks.default_applications.gr"]),
    measured("clocks.max.graphics", "MHz", |_, g| {
        mhz(g.max_clock_graphics_mhz)
    })
    .or(&["clocks.max.gr"]),
    measured("clocks.max.sm", "MHz", |_, g| mhz(g.max_clock_graphics_mhz)),
    measured("clocks.max.memory", "MHz", |_, g| mhz(g.max_clock_mem_mhz)).or(&["clocks.max.mem"]),
    field("mig.mode.current", |_, g| mig(g)),
    field("mig.mode.pending", |_, g| mig(g)),
    field("fabric.state", |_, g| {
        g.fabric.map_or(text("N/A"), |(state, _)| text(state))
    }),
    field("fabric.status", |_, g| {
        g.fabric.map_or(text("N/A"), |(_, status)| text(status))
    }),
];

/// `--query-remapped-rows`: a row per GPU, its flags as `0`/`1` (the scripts that read it sum
/// the pending column).
const REMAPPED_ROW_FIELDS: &[Field] = &[
    field("timestamp", |h, _| text(csv_timestamp(&h.timestamp))),
    field("gpu_bus_id", |_, g| text(g.bus_id())),
    field("gpu_uuid", |_, g| text(&g.uuid)),
    field("gpu_name", |_, g| text(&g.name)),
    field("gpu_serial", |_, g| text(&g.serial)),
    field("remapped_rows.correctable", |_, _| text(0)),
    field("remapped_rows.uncorrectable", |_, g| {
        text(g.remapped_rows_uncorrectable)
    }),
    field("remapped_rows.pending", |_, g| {
        text(u8::from(g.remapped_rows_pending))
    }),
    field("remapped_rows.failure", |_, _| text(0)),
];

fn find_in(table: &'static [Field], name: &str) -> Option<&'static Field> {
    table
        .iter()
        .find(|f| f.name == name || f.aliases.contains(&name))
}

/// The `--query-gpu` csv for `fields` over `gpus`; `Err(name)` for the first name that is not
/// a field.
pub(crate) fn csv(
    host: &GpuHost,
    gpus: &[&GpuDevice],
    names: &[&str],
    header: bool,
    units: bool,
) -> Result<String, String> {
    render(FIELDS, host, gpus, names, header, units)
}

/// The `--query-remapped-rows` csv, as [`csv`].
pub(crate) fn remapped_rows_csv(
    host: &GpuHost,
    gpus: &[&GpuDevice],
    names: &[&str],
    header: bool,
) -> Result<String, String> {
    render(REMAPPED_ROW_FIELDS, host, gpus, names, header, true)
}

fn render(
    table: &'static [Field],
    host: &GpuHost,
    gpus: &[&GpuDevice],
    names: &[&str],
    header: bool,
    units: bool,
) -> Result<String, String> {
    let fields = names
        .iter()
        .map(|name| find_in(table, name).ok_or_else(|| (*name).to_owned()))
        .collect::<Result<Vec<_>, _>>()?;
    let mut out = String::new();
    if header {
        out.push_str(
            &fields
                .iter()
                .map(|f| f.header())
                .collect::<Vec<_>>()
                .join(", "),
        );
        out.push('\n');
    }
    for gpu in gpus {
        let cells: Vec<String> = fields
            .iter()
            .map(|f| match (f.value)(host, gpu) {
                Cell::Text(text) => text,
                Cell::Measure(number, unit) if units => format!("{number} {unit}"),
                Cell::Measure(number, _) => number,
                Cell::NotAvailable => "[N/A]".to_owned(),
            })
            .collect();
        out.push_str(&cells.join(", "));
        out.push('\n');
    }
    Ok(out)
}

/// `Mon Nov 30 04:43:45 2026` (ctime) as the query's `2026/11/30 04:43:45.000`; anything else
/// is passed through unchanged.
pub(crate) fn csv_timestamp(ctime: &str) -> String {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let parts: Vec<&str> = ctime.split_whitespace().collect();
    let [_, month, day, time, year] = parts[..] else {
        return ctime.to_owned();
    };
    let (Some(month), Ok(day)) = (MONTHS.iter().position(|m| *m == month), day.parse::<u32>())
    else {
        return ctime.to_owned();
    };
    format!("{year}/{:02}/{day:02} {time}.000", month + 1)
}

#[cfg(test)]
mod tests {
    use super::super::super::test_support::fixture;
    use super::*;

    fn host() -> GpuHost {
        GpuHost::a10g("node", 42, "Mon Nov  2 04:43:45 2026")
    }

    fn query(names: &[&str], header: bool, units: bool) -> Result<String, String> {
        let host = host();
        let gpus: Vec<&GpuDevice> = host.gpus.iter().collect();
        csv(&host, &gpus, names, header, units)
    }

    #[test]
    fn header_and_units_follow_the_real_style() {
        let out = query(
            &[
                "index",
                "name",
                "memory.total",
                "memory.used",
                "temperature.gpu",
                "mig.mode.current",
                "clocks.sm",
                "power.limit",
            ],
            true,
            true,
        )
        .unwrap();
        assert_eq!(
            out,
            "index, name, memory.total [MiB], memory.used [MiB], temperature.gpu, \
             mig.mode.current, clocks.current.sm [MHz], power.limit [W]\n\
             0, NVIDIA A10G, 23028 MiB, 0 MiB, "
                .to_owned()
                + host().gpus[0].temperature_c.to_string().as_str()
                + ", [N/A], 210 MHz, 300.00 W\n"
        );
    }

    #[test]
    fn noheader_nounits() {
        let out = query(
            &["memory.total", "utilization.gpu", "mig.mode.pending"],
            false,
            false,
        );
        assert_eq!(out.unwrap(), "23028, 0, [N/A]\n");
    }

    #[test]
    fn unknown_field_is_named() {
        assert_eq!(query(&["index", "foo"], true, true), Err("foo".to_owned()));
    }

    #[test]
    fn timestamp_is_the_query_form() {
        assert_eq!(
            csv_timestamp("Mon Nov  2 04:43:45 2026"),
            "2026/11/02 04:43:45.000"
        );
        assert_eq!(csv_timestamp("now"), "now");
    }

    #[test]
    fn headers_and_na_cells_match_the_real_capture() {
        let real = fixture("nvidia_smi_query_gpu_csv_h100_allfields_590.csv");
        let real_headers: Vec<&str> = real.lines().next().unwrap_or("").split(", ").collect();
        for field in FIELDS {
            if real_headers
                .iter()
                .any(|h| h.split(" [").next() == Some(field.name))
            {
                assert!(
                    real_headers.contains(&field.header().as_str()),
                    "{} is not in the real header",
                    field.header()
                );
            }
        }
        assert!(real.lines().nth(1).unwrap_or("").contains("[N/A]"));
    }
}
