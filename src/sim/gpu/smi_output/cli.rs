//! The `nvidia-smi` command line: which output an argv asks for, and the errors and exit codes
//! of the real tool for arguments it rejects.

use super::super::gpu_model::{GpuDevice, GpuHost, MigMode};
use super::super::mig_profiles;
use super::query_log::Display;
use super::{query, query_log, table, text, xml};

/// What the command printed and how it ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Output {
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    pub(crate) exit_code: i32,
}

impl Output {
    fn ok(stdout: String) -> Self {
        Self {
            stdout,
            stderr: String::new(),
            exit_code: 0,
        }
    }
}

/// `nvidia-smi`'s exit status for a bad argument or flag.
pub(crate) const EXIT_INVALID_ARGUMENT: i32 = 2;
/// `nvidia-smi`'s exit status when a query finds no object (no such GPU, no MIG device).
pub(crate) const EXIT_NOT_FOUND: i32 = 6;
/// `nvidia-smi`'s exit status when a GPU has fallen off the bus or is otherwise inaccessible.
pub(crate) const EXIT_GPU_LOST: i32 = 15;

const INVALID_COMBINATION: &str =
    "Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n";

/// Options the real tool knows but the twin does not simulate: they answer as a bad combination.
const KNOWN_OPTIONS: &[&str] = &[
    "-B",
    "--list-excluded-gpus",
    "-u",
    "--unit",
    "-f",
    "-l",
    "-lms",
    "--dtd",
    "-pm",
    "-e",
    "-p",
    "-c",
    "-r",
    "--gpu-reset",
    "-ac",
    "-rac",
    "-pl",
    "-lgc",
    "-rgc",
    "-lmc",
    "-rmc",
    "-am",
    "-caa",
    "-mig",
    "-gtt",
    "-t",
    "-vm",
    "--query-supported-clocks",
    "--query-compute-apps",
    "--query-accounted-apps",
    "--query-retired-pages",
    "--help-query-gpu",
];
/// Subcommands of the real tool that the twin does not simulate.
const SUBCOMMANDS: &[&str] = &[
    "dmon",
    "daemon",
    "replay",
    "pmon",
    "drain",
    "nvlink",
    "c2c",
    "clocks",
    "encodersessions",
    "fbcsessions",
    "vgpu",
    "compute-policy",
    "boost-slider",
    "power-hint",
    "base-clocks",
    "conf-compute",
    "gpm",
];

#[derive(Default)]
struct Request<'a> {
    help: bool,
    version: bool,
    list: bool,
    query: bool,
    xml: bool,
    query_gpu: Option<&'a str>,
    query_remapped_rows: Option<&'a str>,
    display: Option<&'a str>,
    format: Option<&'a str>,
    id: Option<&'a str>,
    unsupported: bool,
}

/// Runs `nvidia-smi` with `args` (without the program name) against `host`.
pub(crate) fn run(host: &GpuHost, args: &[&str]) -> Output {
    let asks_for_help = args
        .iter()
        .any(|a| matches!(*a, "-h" | "--help" | "--version"));
    if !asks_for_help {
        if host.gpus.is_empty() {
            return no_devices();
        }
        if host.gpus.iter().any(|g| g.lost) {
            return with_lost_gpus(host, args);
        }
    }
    if let Some(output) = subcommand(host, args) {
        return output;
    }
    let request = match parse(args) {
        Ok(request) => request,
        Err(output) => return output,
    };
    if request.help {
        return Output::ok(text::help(host));
    }
    if request.version {
        return Output::ok(text::version(host));
    }
    let Some(selected) = select(host, request.id) else {
        return no_devices();
    };
    if request.unsupported {
        return invalid();
    }
    let csv = request.format.is_some()
        || request.query_gpu.is_some()
        || request.query_remapped_rows.is_some();
    if csv {
        csv_request(&request, host, &selected)
    } else {
        report_request(&request, &view_of(host, &selected))
    }
}

fn no_devices() -> Output {
    Output {
        stdout: "No devices were found\n".to_owned(),
        stderr: String::new(),
        exit_code: EXIT_NOT_FOUND,
    }
}

/// The subcommands the twin answers (the summary table without arguments, `mig`, `topo -m`,
/// `nvlink -s`) or refuses; `None` when `args` are options for the main command.
fn subcommand(host: &GpuHost, args: &[&str]) -> Option<Output> {
    match args.first().copied() {
        None => Some(Output::ok(table::render(host))),
        Some("mig") => Some(mig(host, &args[1..])),
        Some("topo") if args.get(1..) == Some(&["-m"][..]) => {
            Some(Output::ok(text::topology(host)))
        }
        Some("nvlink") if matches!(args.get(1..), Some(["-s" | "--status"])) => {
            Some(Output::ok(text::nvlink_status(host)))
        }
        Some(sub) if sub == "topo" || SUBCOMMANDS.contains(&sub) => Some(invalid()),
        _ => None,
    }
}

/// `host` as the GPUs `-i` selected see it: only their processes.
fn view_of(host: &GpuHost, selected: &[&GpuDevice]) -> GpuHost {
    GpuHost {
        gpus: selected.iter().map(|g| (*g).clone()).collect(),
        processes: host
            .processes
            .iter()
            .filter(|p| selected.iter().any(|g| g.index == p.gpu_index))
            .cloned()
            .collect(),
        ..host.clone()
    }
}

/// `--query-gpu` or `--query-remapped-rows` with `--format`, alone: the csv; anything mixed in
/// (or a format without a query) is a bad combination.
fn csv_request(request: &Request<'_>, host: &GpuHost, selected: &[&GpuDevice]) -> Output {
    match request {
        Request {
            query_gpu: Some(fields),
            query_remapped_rows: None,
            display: None,
            format,
            list: false,
            query: false,
            xml: false,
            ..
        } => csv_query(fields, *format, |names, header, units| {
            query::csv(host, selected, names, header, units)
        }),
        Request {
            query_remapped_rows: Some(fields),
            query_gpu: None,
            display: None,
            format,
            list: false,
            query: false,
            xml: false,
            ..
        } => csv_query(fields, *format, |names, header, _| {
            query::remapped_rows_csv(host, selected, names, header)
        }),
        _ => invalid(),
    }
}

/// The reports of the selected GPUs: `-L`, `-q` (with `-d`, `-x`) or the summary table.
fn report_request(request: &Request<'_>, view: &GpuHost) -> Output {
    match request {
        Request {
            query: true,
            display: Some(types),
            xml: false,
            list: false,
            ..
        } => match Display::parse_list(types) {
            Some(display) => Output::ok(query_log::query(view, Some(&display))),
            None => invalid(),
        },
        Request {
            display: Some(_), ..
        } => invalid(),
        Request {
            list: true,
            query: false,
            xml: false,
            ..
        } => Output::ok(text::list(view)),
        Request {
            query: true,
            xml: true,
            list: false,
            ..
        } => Output::ok(xml::render(view)),
        Request {
            query: true,
            xml: false,
            list: false,
            ..
        } => Output::ok(query_log::query(view, None)),
        Request {
            list: false,
            query: false,
            xml: false,
            ..
        } => Output::ok(table::render(view)),
        _ => invalid(),
    }
}

fn parse<'a>(args: &[&'a str]) -> Result<Request<'a>, Output> {
    let mut request = Request::default();
    let mut rest = args.iter().copied();
    while let Some(arg) = rest.next() {
        let (flag, value) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => (flag, Some(value)),
            _ => (arg, None),
        };
        match (flag, value) {
            ("-h" | "--help", None) => request.help = true,
            ("--version", None) => request.version = true,
            ("-L" | "--list-gpus", None) => request.list = true,
            ("-q" | "--query", None) => request.query = true,
            ("-x" | "--xml-format", None) => request.xml = true,
            ("--query-gpu", Some(fields)) => request.query_gpu = Some(fields),
            ("--query-remapped-rows", Some(fields)) => request.query_remapped_rows = Some(fields),
            ("-d", None) => request.display = Some(rest.next().ok_or_else(invalid)?),
            ("--display", Some(types)) => request.display = Some(types),
            ("--format", Some(format)) => request.format = Some(format),
            ("--id", Some(id)) => request.id = Some(id),
            ("-i", None) => request.id = Some(rest.next().ok_or_else(invalid)?),
            (flag, _) if KNOWN_OPTIONS.contains(&flag) => {
                // Its value (if any) follows; the twin answers the whole line as unsupported.
                request.unsupported = true;
                break;
            }
            _ => {
                return Err(Output {
                    stdout: format!(
                        "ERROR: Option {arg} is not recognized. Please run 'nvidia-smi -h' for help.\n"
                    ),
                    stderr: String::new(),
                    exit_code: EXIT_INVALID_ARGUMENT,
                });
            }
        }
    }
    Ok(request)
}

/// The GPUs `-i` names (an index, a UUID or a bus id); all of them without `-i`.
fn select<'h>(host: &'h GpuHost, id: Option<&str>) -> Option<Vec<&'h GpuDevice>> {
    let Some(id) = id else {
        return Some(host.gpus.iter().collect());
    };
    let found: Vec<&GpuDevice> = host
        .gpus
        .iter()
        .filter(|g| {
            id.parse::<u32>().is_ok_and(|i| i == g.index)
                || g.uuid.eq_ignore_ascii_case(id)
                || g.bus_id().eq_ignore_ascii_case(id)
        })
        .collect();
    (!found.is_empty()).then_some(found)
}

/// A csv query: `fields` checked against `--format`, answered by `answer(names, header, units)`
/// or, for a name that is no field, the real tool's complaint and exit 2.
fn csv_query(
    fields: &str,
    format: Option<&str>,
    answer: impl FnOnce(&[&str], bool, bool) -> Result<String, String>,
) -> Output {
    let Some(format) = format else {
        return invalid();
    };
    let options: Vec<&str> = format.split(',').map(str::trim).collect();
    let known = |o: &&str| matches!(*o, "csv" | "noheader" | "nounits");
    if !options.contains(&"csv") || !options.iter().all(known) {
        return invalid();
    }
    let names: Vec<&str> = fields.split(',').map(str::trim).collect();
    let header = !options.contains(&"noheader");
    let units = !options.contains(&"nounits");
    match answer(&names, header, units) {
        Ok(csv) => Output::ok(csv),
        Err(name) => Output {
            stdout: format!("Field \"{name}\" is not a valid field to query.\n\n"),
            stderr: String::new(),
            exit_code: EXIT_INVALID_ARGUMENT,
        },
    }
}

/// `nvidia-smi mig -lgip [-i N]`: the GPU instance profiles of the MIG-capable GPUs (MIG
/// disabled, as they boot, still lists them); a GPU without MIG finds nothing. Other `mig`
/// commands (making and listing instances) are not modelled.
fn mig(host: &GpuHost, args: &[&str]) -> Output {
    let mut list_profiles = false;
    let mut id = None;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match *arg {
            "-lgip" | "--list-gpu-instance-profiles" => list_profiles = true,
            "-i" | "--id" => id = rest.next().copied(),
            _ => return invalid(),
        }
    }
    if !list_profiles {
        return invalid();
    }
    let gpus: Vec<(u32, &str)> = host
        .gpus
        .iter()
        .filter(|g| id.is_none_or(|id| id == g.index.to_string() || id == g.uuid))
        .filter(|g| g.mig_mode != MigMode::Unsupported)
        .map(|g| (g.index, g.name.as_str()))
        .collect();
    if gpus.is_empty() {
        return Output {
            stdout: "No MIG-supported devices found.\n".to_owned(),
            stderr: String::new(),
            exit_code: EXIT_NOT_FOUND,
        };
    }
    Output::ok(mig_profiles::render(&gpus))
}

/// What the driver's lost GPUs do to any command: a line each on stderr, the rest answered
/// for the GPUs that still respond, and exit status 15.
fn with_lost_gpus(host: &GpuHost, args: &[&str]) -> Output {
    let (lost, reachable): (Vec<GpuDevice>, Vec<GpuDevice>) =
        host.gpus.iter().cloned().partition(|g| g.lost);
    let mut out = if reachable.is_empty() {
        Output::default()
    } else {
        run(
            &GpuHost {
                gpus: reachable,
                ..host.clone()
            },
            args,
        )
    };
    let complaints: String = lost
        .iter()
        .map(|g| {
            format!(
                "Unable to determine the device handle for GPU{:04X}:{:02X}:{:02X}.0: GPU is lost.  Reboot the system to recover this GPU\n",
                g.pci_domain, g.pci_bus, g.pci_device
            )
        })
        .collect();
    out.stderr = complaints + out.stderr.as_str();
    out.exit_code = EXIT_GPU_LOST;
    out
}

fn invalid() -> Output {
    Output {
        stdout: INVALID_COMBINATION.to_owned(),
        stderr: String::new(),
        exit_code: EXIT_INVALID_ARGUMENT,
    }
}

#[cfg(test)]
#[path = "cli_tests.rs"]
mod tests;
