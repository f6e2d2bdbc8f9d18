//! The command line: clap definitions, and their translation into plain configs.

mod args;
mod completion;
mod config;
mod flags;

pub use args::{
    CaptureArgs, CheckArgs, Cli, ClockKind, Command, CompletionShell, CompletionsArgs, DocsArgs,
    DoctorArgs, EvalArgs, HistoryArgs, HistoryCheckArgs, HistoryCommandArgs, HistoryDiffArgs,
    HistoryGpuArgs, HistoryListArgs, HistoryShowArgs, HistorySubcommand, HistoryTrendArgs,
    IfHistoryDamaged, JournalArgs, LabCommand, NewArgs, PlanArgs, Progress, RecoverArgs, ReplArgs,
    RunArgs, ServeArgs, StateCommand, Template,
};
pub use completion::COMPLETE_VAR;
pub use config::{RunConfig, Sets, parse_sets, project_folder, runbook_folder, snapshot_dir_for};
pub use flags::{ReadArgs, TargetArgs};
