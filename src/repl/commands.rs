//! The REPL's own commands, which start with `:`.

/// `(command, what it does)`, for `:help` and completion.
pub(super) const COMMANDS: &[(&str, &str)] = &[
    (
        ":help",
        "`:help` lists commands and modules; `:help NAME` shows a function's or module's docs",
    ),
    (
        ":load",
        "`:load FILE` runs a runbook into this session; its cleanups run when the load ends",
    ),
    (":time", "shows the run's clock"),
    (
        ":advance",
        "`:advance 5m` moves the lab twin's virtual clock on",
    ),
    (":target", "shows where calls go"),
    (":quit", "runs pending cleanups and leaves (Ctrl-D too)"),
];

#[derive(Debug, PartialEq, Eq)]
pub(super) enum Command {
    Help(Option<String>),
    Load(String),
    Time,
    Advance(String),
    Target,
    Quit,
}

pub(super) fn parse(line: &str) -> Result<Command, String> {
    let mut words = line.trim().splitn(2, char::is_whitespace);
    let name = words.next().unwrap_or_default();
    let argument = words
        .next()
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .map(str::to_string);
    let needs = |what: &str| {
        argument
            .clone()
            .ok_or_else(|| format!("{name} needs {what}"))
    };
    match name {
        ":help" | ":h" => Ok(Command::Help(argument)),
        ":load" => Ok(Command::Load(needs(
            "a file, e.g. :load runbooks/k8s/cluster-health.rhai",
        )?)),
        ":time" => Ok(Command::Time),
        ":advance" => Ok(Command::Advance(needs("a duration, e.g. :advance 5m")?)),
        ":target" => Ok(Command::Target),
        ":quit" | ":q" | ":exit" => Ok(Command::Quit),
        other => Err(format!(
            "unknown command {other}; commands: {}",
            COMMANDS
                .iter()
                .map(|(c, _)| *c)
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse_with_arguments() {
        assert_eq!(
            parse(":help k8s::nodes"),
            Ok(Command::Help(Some("k8s::nodes".into())))
        );
        assert_eq!(parse(":advance  5m "), Ok(Command::Advance("5m".into())));
        assert_eq!(parse(":q"), Ok(Command::Quit));
        assert!(parse(":load").is_err());
        assert!(parse(":frob").unwrap_err().contains(":help"));
    }
}
