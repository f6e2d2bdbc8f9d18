//! clap definitions only; nothing here does work.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use super::flags::{GuardArgs, ReadArgs, TargetArgs};

#[derive(Debug, Parser)]
#[command(
    name = "runbook",
    version,
    about = "Prove that a GPU cluster works: Rhai runbooks over typed AWS, Kubernetes and NVIDIA primitives",
    after_help = "Example: runbook run runbooks/gpu-lab.rhai   (the whole drill on the embedded lab twin)\n\nExit codes: 0 passed, 1 a step or assertion failed, 2 usage or script error, 3 a cleanup did not finish (something may be left behind), 130/143/129 stopped by SIGINT/SIGTERM/SIGHUP."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a runbook: steps with a live view, cleanups, snapshots, reports.
    #[command(
        after_help = "Example: runbook run runbooks/gpu-lab.rhai --set gpu_nodes=2 --report report.json"
    )]
    Run(Box<RunArgs>),
    /// Rehearse a runbook on the lab twin, or on a twin of a real target captured with read-only
    /// calls, and print what it would change, by step, with its cleanups' changes, how it
    /// ends, how long it takes and what runs meanwhile costs.
    #[command(
        after_help = "Example: runbook plan runbooks/gpu-lab.rhai --kubeconfig ~/.kube/config --max-cost-usd 5"
    )]
    Plan(Box<PlanArgs>),
    /// Parse runbooks and resolve their imports without running them; report every error.
    #[command(after_help = "Example: runbook check --json runbooks/*.rhai")]
    Check(CheckArgs),
    /// Evaluate a snippet with every module loaded and print the result.
    #[command(after_help = "Example: runbook eval 'k8s::nodes().map(|n| n.name)' --json")]
    Eval(EvalArgs),
    /// List host functions with their signatures and docs.
    #[command(after_help = "Example: runbook docs k8s   (or --definitions .rhai-defs, --man man/)")]
    Docs(DocsArgs),
    /// An interactive session with every module loaded, on the lab twin or a cluster.
    #[command(after_help = "Example: runbook repl --kubeconfig ~/.kube/config --read-only")]
    Repl(ReplArgs),
    /// The lab twin as a server, for kubectl and the aws CLI.
    #[command(subcommand)]
    #[command(
        after_help = "Example: runbook lab serve --write-kubeconfig lab.kubeconfig --write-env lab.env"
    )]
    Lab(LabCommand),
    /// Put back what a killed run changed, from its journal: what its pending cleanups were
    /// there to undo.
    #[command(after_help = "Example: runbook recover --list")]
    Recover(RecoverArgs),
    /// The runs kept in the history, newest first: status, duration, failing step, metrics;
    /// `history check` fails when a drill has not passed recently enough.
    #[command(after_help = "Example: runbook history trend nccl_avg_busbw")]
    History(HistoryCommandArgs),
    /// The state of a lab: `state capture` reads it into a lab-state file, which the twin can
    /// start from (`--scenario @FILE`).
    #[command(subcommand)]
    #[command(after_help = "Example: runbook state capture --cluster myeks5w -o lab-state.json")]
    State(StateCommand),
    /// A shell's completion script: subcommands, flags, runbook files and the `--set` keys of
    /// the runbook on the command line (asked of runbook itself as you type).
    #[command(
        after_help = "Example: runbook completions bash > ~/.local/share/bash-completion/completions/runbook"
    )]
    Completions(CompletionsArgs),
    /// Start a runbook in the house style (params at the top, imports, the cleanup before the
    /// first change, snapshots) from a template; it passes `check` and runs on the lab twin.
    #[command(after_help = "Example: runbook new runbooks/my-drill --template drill")]
    New(NewArgs),
    /// Read-only probes of a target before a run: the Kubernetes API and its readyz, the EKS
    /// cluster, that the kubeconfig points at that cluster, helm; a table of what passed.
    #[command(after_help = "Example: runbook doctor --cluster myeks5w --region ap-northeast-2")]
    Doctor(DoctorArgs),
}

#[derive(Debug, Args)]
pub struct PlanArgs {
    /// The runbook to rehearse (a .rhai file).
    #[arg(add = super::completion::runbook_files())]
    pub file: PathBuf,
    /// Override a parameter declared with params(); `KEY=@path` reads the value from a file.
    #[arg(long = "set", value_name = "KEY=VALUE", add = super::completion::set_keys())]
    pub sets: Vec<String>,
    /// Print the plan as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub guards: GuardArgs,
    #[command(flatten)]
    pub read: ReadArgs,
    #[command(flatten)]
    pub target: TargetArgs,
}

#[derive(Debug, Args)]
pub struct NewArgs {
    /// The runbook to write (`.rhai` is added when it has no extension); never overwritten.
    #[arg(value_hint = clap::ValueHint::FilePath)]
    pub name: PathBuf,
    /// What it starts from.
    #[arg(long, value_enum, default_value = "verify")]
    pub template: Template,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Template {
    /// Read-only checks: control plane, nodes, add-ons, with snapshots.
    Verify,
    /// A change made on purpose and put back, its cleanup registered first.
    Drill,
    /// GPU nodes up with the GPU Operator, every GPU checked, back to 0 at the end.
    Gpu,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell the script is for.
    pub shell: CompletionShell,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompletionShell {
    Bash,
    Zsh,
    Fish,
    Powershell,
}

#[derive(Debug, Subcommand)]
pub enum StateCommand {
    /// Read what the runbooks touch in a lab (VPC, subnets, NAT, security groups and rules,
    /// the EKS cluster, node groups, add-ons, access entries, OIDC provider, roles, instances;
    /// namespaces, nodes, workloads, Services, ConfigMaps, pods; Secrets by name) with
    /// read-only calls, into a versioned JSON file (docs/lab-state.md).
    #[command(after_help = "Example: runbook state capture --cluster myeks5w -o lab-state.json")]
    Capture(CaptureArgs),
}

#[derive(Debug, Args)]
pub struct CaptureArgs {
    /// Write the lab-state file to PATH (0600; `-` for standard output).
    #[arg(short = 'o', long = "output", value_name = "PATH")]
    pub output: PathBuf,
    /// The EKS cluster to read with --kubeconfig [default: the one whose endpoint the
    /// kubeconfig names, else the account's only cluster].
    #[arg(long, value_name = "NAME")]
    pub eks_cluster: Option<String>,
    #[command(flatten)]
    pub target: TargetArgs,
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Print the probes as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub target: TargetArgs,
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct HistoryCommandArgs {
    #[command(subcommand)]
    pub command: Option<HistorySubcommand>,
    #[command(flatten)]
    pub list: HistoryListArgs,
    #[command(flatten)]
    pub history: HistoryArgs,
    #[command(flatten)]
    pub journal: JournalArgs,
}

#[derive(Debug, Subcommand)]
pub enum HistorySubcommand {
    /// Exit 1 when a runbook's last passing run ended longer ago than --max-age, or it has
    /// none: a missed or dropped schedule fails too. Every runbook in the history, or FILE's.
    #[command(after_help = "Example: runbook history check --max-age 26h runbooks/gpu-lab.rhai")]
    Check(HistoryCheckArgs),
    /// What changed between two kept runs: status, steps, metrics, snapshot drift.
    #[command(after_help = "Example: runbook history diff 41 42")]
    Diff(HistoryDiffArgs),
    /// A metric's values run by run (a sparkline on a terminal), per step and labels.
    #[command(after_help = "Example: runbook history trend nccl_avg_busbw runbooks/gpu-lab.rhai")]
    Trend(HistoryTrendArgs),
    /// A kept run's JSON report, or with --html its page (timeline, changes, metrics and their
    /// runs up to it).
    #[command(after_help = "Example: runbook history show 42 --html run-42.html")]
    Show(HistoryShowArgs),
    /// A GPU node's health verdicts run by run, newest first, with what did not pass: by its
    /// machine (instance id) or node name.
    #[command(after_help = "Example: runbook history gpu i-0f0000000000000a1 --days 30")]
    Gpu(HistoryGpuArgs),
}

#[derive(Debug, Args)]
pub struct HistoryGpuArgs {
    /// The machine (`i-0f...`, which EKS does not reuse) or the node's name.
    pub node: String,
    /// How many days back.
    #[arg(long, default_value_t = 90, value_parser = clap::value_parser!(u64).range(1..=36_500))]
    pub days: u64,
    /// Print the record as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct HistoryShowArgs {
    /// The run's number (the RUN column of `runbook history`).
    pub run: u64,
    /// Write the run as one self-contained HTML page to PATH instead of printing its report.
    #[arg(long, value_name = "PATH")]
    pub html: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct HistoryDiffArgs {
    /// The earlier run's number (the RUN column of `runbook history`).
    pub run_a: u64,
    /// The later run's number.
    pub run_b: u64,
}

#[derive(Debug, Args)]
pub struct HistoryTrendArgs {
    /// The metric's name (`nccl_avg_busbw`).
    pub metric: String,
    /// Only the runs of this runbook (its file).
    pub runbook: Option<PathBuf>,
    /// How many values, the newest.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub limit: u64,
    /// Print the series as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct HistoryCheckArgs {
    /// Only this runbook (its file).
    pub runbook: Option<PathBuf>,
    /// The oldest a last passing run may be ("26h" for a daily drill with slack).
    #[arg(long, value_name = "DURATION")]
    pub max_age: String,
    /// Judge as of this time (RFC 3339, "2026-12-03T06:00:00Z", or Unix seconds) instead of now.
    #[arg(long, value_name = "TIME")]
    pub now: Option<String>,
}

/// Where the run history lives.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "History")]
pub struct HistoryArgs {
    /// Keep every run, and judge metric baselines, in the history in DIR; `off` keeps none
    /// [default: the state directory].
    #[arg(
        long = "history",
        value_name = "DIR",
        env = "RUNBOOK_HISTORY",
        global = true
    )]
    pub dir: Option<PathBuf>,
    /// What a run does when the history fails SQLite's integrity check before the first step:
    /// refuse to start, or run without it (no baseline judged, the run not kept).
    #[arg(
        long = "if-history-damaged",
        value_name = "WHAT",
        value_enum,
        default_value_t = IfHistoryDamaged::Refuse,
        env = "RUNBOOK_IF_HISTORY_DAMAGED",
        global = true
    )]
    pub if_damaged: IfHistoryDamaged,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum IfHistoryDamaged {
    /// Stop before anything runs, naming the file and what to do.
    Refuse,
    /// Say so in one line and run without a history.
    Without,
}

#[derive(Debug, Args)]
pub struct HistoryListArgs {
    /// Only the runs of this runbook (its file).
    pub runbook: Option<PathBuf>,
    /// How many runs to show.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub limit: u64,
    /// Print the runs as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RecoverArgs {
    /// The run to recover [default: the newest unfinished run against this target].
    pub run_id: Option<String>,
    /// List the unfinished runs (runbook, target, start, what a recover would do) and stop.
    #[arg(long)]
    pub list: bool,
    /// Say what would be done, and do nothing.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub journal: JournalArgs,
    #[command(flatten)]
    pub target: TargetArgs,
}

/// Where run journals and target locks live.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Journal")]
pub struct JournalArgs {
    /// Run journals and locks go here [default: $XDG_STATE_HOME/runbook, else
    /// ~/.local/state/runbook].
    #[arg(long, value_name = "DIR", global = true)]
    pub state_dir: Option<PathBuf>,
    /// A shared store of target locks and run journals for every runner of a fleet (CI, CronJobs,
    /// laptops): a PostgreSQL URL (postgres://USER@HOST:PORT/DB?sslmode=verify-full&sslrootcert=CA.pem;
    /// the password from the URL, PGPASSWORD, or a password file). Runs against the embedded
    /// twin keep theirs in the state folder.
    #[arg(
        long,
        value_name = "URL",
        env = "RUNBOOK_STATE",
        hide_env_values = true,
        global = true
    )]
    pub state: Option<String>,
    /// When another run holds the target, wait this long for it ("10m") instead of failing.
    #[arg(long, value_name = "DURATION", global = true)]
    pub wait_lock: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum LabCommand {
    /// Serve the twin on 127.0.0.1 until Ctrl-C; the virtual clock runs at `--speed`.
    #[command(
        after_help = "Example: runbook lab serve --write-kubeconfig lab.kubeconfig --write-env lab.env --speed 60"
    )]
    Serve(ServeArgs),
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The starting state: `deployed` (after the lab's Terraform apply), `hybrid` (the lab as
    /// an EKS Hybrid Nodes cluster), `empty`, or `@FILE`, a lab captured by `runbook state
    /// capture`.
    #[arg(long, default_value = "deployed")]
    pub scenario: String,
    /// Port of the Kubernetes API (0: any free port).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Write a kubeconfig for the twin to PATH (kubectl --kubeconfig PATH).
    #[arg(long, value_name = "PATH")]
    pub write_kubeconfig: Option<PathBuf>,
    /// Port of the AWS endpoint (EKS, EC2, IAM) (0: any free port).
    #[arg(long, default_value_t = 0)]
    pub aws_port: u16,
    /// Write an env file for the aws CLI and SDKs to PATH (AWS_ENDPOINT_URL, region, dummy
    /// credentials): `set -a; . PATH; set +a`.
    #[arg(long, value_name = "PATH")]
    pub write_env: Option<PathBuf>,
    /// Switch a fault on (repeatable): check=NAME, nodegroup-never-joins=NAME,
    /// aws-throttle=RATE, aws-5xx=RATE, aws-latency=DURATION,
    /// kube-latency=DURATION, nccl-busbw=SHARE (and a GPU node's hardware: see the README).
    #[arg(long = "fault", value_name = "NAME=VALUE")]
    pub faults: Vec<String>,
    /// Virtual seconds per wall second (outside clients cannot say when they are idle).
    #[arg(long, default_value_t = 60.0)]
    pub speed: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Progress {
    /// A live view when standard output is a terminal, plain lines otherwise.
    Auto,
    Always,
    Never,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ClockKind {
    /// Discrete-event time: waits and sleeps cost no wall time.
    Virtual,
    /// Wall-clock time.
    Real,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The runbook to run (a .rhai file).
    #[arg(add = super::completion::runbook_files())]
    pub file: PathBuf,
    /// Override a parameter declared with params(); `KEY=@path` reads the value from a file.
    #[arg(long = "set", value_name = "KEY=VALUE", add = super::completion::set_keys())]
    pub sets: Vec<String>,
    /// Write a JSON report to PATH.
    #[arg(long, value_name = "PATH")]
    pub report: Option<PathBuf>,
    /// Write JUnit XML (one test case per step) to PATH.
    #[arg(long, value_name = "PATH")]
    pub junit: Option<PathBuf>,
    /// Write a Markdown summary of the run to PATH (it is also appended to
    /// $GITHUB_STEP_SUMMARY when that is set).
    #[arg(long, value_name = "PATH")]
    pub summary: Option<PathBuf>,
    /// Write the run as one self-contained HTML page to PATH: its timeline, what went wrong,
    /// the changes and what put them back, the metrics with their last runs.
    #[arg(long, value_name = "PATH")]
    pub html: Option<PathBuf>,
    /// Push the run's metrics to this Prometheus Pushgateway (http://HOST:PORT), grouped by
    /// job and runbook; a passing run's time also goes to a group of its own, which a failing
    /// run's push leaves alone.
    #[arg(long, value_name = "URL")]
    pub pushgateway: Option<String>,
    /// The job the Pushgateway groups the run's metrics under.
    #[arg(
        long,
        value_name = "NAME",
        default_value = "runbook",
        requires = "pushgateway"
    )]
    pub pushgateway_job: String,
    /// Write the run's metrics in Prometheus' text format to PATH, for node_exporter's
    /// textfile collector (written to a temporary file and renamed: never read half-written).
    #[arg(long, value_name = "PATH")]
    pub metrics_file: Option<PathBuf>,
    /// Accept differing snapshots by rewriting them.
    #[arg(long)]
    pub update_snapshots: bool,
    /// Where snapshot files live [default: the nearest `snapshots/` folder above the runbook].
    #[arg(long, value_name = "DIR")]
    pub snapshot_dir: Option<PathBuf>,
    /// Live view or plain lines.
    #[arg(long, value_enum, default_value_t = Progress::Auto)]
    pub progress: Progress,
    /// The clock every wait, sleep and timeout uses [default: virtual on the lab twin, real
    /// on a cluster from a kubeconfig].
    #[arg(long, value_enum)]
    pub clock: Option<ClockKind>,
    /// Make changes to a target outside this process (a kubeconfig, --cluster, --in-cluster,
    /// --aws-endpoint) without asking; without a terminal to ask on, such a run is refused
    /// unless this or --read-only is given.
    #[arg(long, short = 'y')]
    pub yes: bool,
    #[command(flatten)]
    pub guards: GuardArgs,
    #[command(flatten)]
    pub read: ReadArgs,
    #[command(flatten)]
    pub journal: JournalArgs,
    #[command(flatten)]
    pub history: HistoryArgs,
    #[command(flatten)]
    pub target: TargetArgs,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Runbooks to check.
    #[arg(required = true, add = super::completion::runbook_files())]
    pub files: Vec<PathBuf>,
    /// Print every problem as JSON (file, line, column, severity, message, help), for editors
    /// and CI annotations.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// Rhai code, e.g. '1 + 1' or 'json::parse(`{"a": 1}`)'.
    pub script: String,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub guards: GuardArgs,
    #[command(flatten)]
    pub read: ReadArgs,
    #[command(flatten)]
    pub target: TargetArgs,
}

#[derive(Debug, Args)]
pub struct ReplArgs {
    /// The clock waits and sleeps use [default: virtual on the lab twin].
    #[arg(long, value_enum)]
    pub clock: Option<ClockKind>,
    #[command(flatten)]
    pub guards: GuardArgs,
    #[command(flatten)]
    pub read: ReadArgs,
    #[command(flatten)]
    pub target: TargetArgs,
}

#[derive(Debug, Args)]
pub struct DocsArgs {
    /// Only this module (`core` for the global functions, `json`, `yaml`, a stdlib module).
    pub module: Option<String>,
    /// Write Rhai definition files (`*.d.rhai`) for editors into DIR instead: every module,
    /// function, signature and doc comment, the stdlib modules too.
    #[arg(long, value_name = "DIR", conflicts_with = "module")]
    pub definitions: Option<PathBuf>,
    /// Write man pages into DIR instead: runbook.1 and one per subcommand (runbook-run.1, ...).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["module", "definitions"])]
    pub man: Option<PathBuf>,
}
