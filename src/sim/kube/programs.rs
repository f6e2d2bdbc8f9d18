//! What containers run in the twin: a small, deterministic interpreter for the commands
//! runbooks use (`echo`, `sleep`, `sh -c`, `cat`, `env`, `hostname`, ...), for pod lifecycles,
//! pod logs and exec. Other layers add programs (the GPU side: `nvidia-smi`, nccl-tests)
//! through [`KubeState::exec_programs`](super::storage::state::KubeState).

use std::time::Duration;

use serde_json::Value;

use super::storage::state::{KubeState, ProgramRun};

/// The result of running a command to completion (exec, or one step of a container).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Output {
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    pub(crate) exit_code: i32,
    /// How long the command takes; `None` for one that never ends.
    pub(crate) duration: Option<Duration>,
}

/// Where a command runs: the pod, its container, and the node it is on.
pub(crate) struct Context<'a> {
    pub(crate) pod: &'a Value,
    pub(crate) container: &'a Value,
    pub(crate) node: Option<&'a Value>,
}

/// The argv of a container: `command` + `args`, or what the image would run.
pub(crate) fn container_argv(container: &Value) -> Vec<String> {
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect()
    };
    let mut argv = strings(&container["command"]);
    argv.extend(strings(&container["args"]));
    argv
}

/// What a pod's container does over its life (the default decider of [`KubeState`]).
pub(crate) fn container_program(pod: &Value, container: &Value, state: &KubeState) -> ProgramRun {
    let argv = container_argv(container);
    let node = pod["spec"]["nodeName"]
        .as_str()
        .and_then(|n| state.object("nodes", "", n));
    let context = Context {
        pod,
        container,
        node: node.as_ref(),
    };
    let image_program = argv
        .first()
        .is_some_and(|p| !KNOWN.contains(&p.rsplit('/').next().unwrap_or(p)));
    if argv.is_empty() || image_program {
        // Image defaults, and the image's own programs (`nfd-worker`, `gpu-operator`): servers
        // run until deleted; in a Job they stand for a batch program that finishes.
        let in_job = pod["metadata"]["ownerReferences"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|o| o["kind"] == "Job");
        let duration = in_job.then_some(Duration::from_secs(5));
        return ProgramRun {
            stdout: String::new(),
            exit_code: 0,
            duration,
            later: Vec::new(),
        };
    }
    let output = run(&argv, &context);
    ProgramRun {
        stdout: format!("{}{}", output.stdout, output.stderr),
        exit_code: output.exit_code,
        duration: output.duration,
        later: Vec::new(),
    }
}

/// The commands the twin interprets; any other main program of a container is the image's own.
const KNOWN: [&str; 15] = [
    "echo",
    "true",
    "false",
    "sleep",
    "hostname",
    "env",
    "printenv",
    "cat",
    "uname",
    "tail",
    "sh",
    "bash",
    "nvidia-smi",
    "all_reduce_perf",
    "mpirun",
];

/// Runs one command line.
pub(crate) fn run(argv: &[String], context: &Context<'_>) -> Output {
    let Some((program, args)) = argv.split_first() else {
        return Output::default();
    };
    let name = program.rsplit('/').next().unwrap_or(program);
    let ok = |stdout: String| Output {
        stdout,
        stderr: String::new(),
        exit_code: 0,
        duration: Some(Duration::ZERO),
    };
    match name {
        "echo" => {
            let (newline, words) = match args.first().map(String::as_str) {
                Some("-n") => (false, &args[1..]),
                _ => (true, args),
            };
            ok(format!(
                "{}{}",
                words.join(" "),
                if newline { "\n" } else { "" }
            ))
        }
        "true" => ok(String::new()),
        "false" => Output {
            exit_code: 1,
            duration: Some(Duration::ZERO),
            ..Output::default()
        },
        "sleep" => match args.first().map(String::as_str) {
            Some("infinity") => Output {
                duration: None,
                ..Output::default()
            },
            Some(n) => match n.trim_end_matches('s').parse::<f64>() {
                Ok(secs) if secs >= 0.0 => Output {
                    duration: Some(Duration::from_secs_f64(secs)),
                    ..Output::default()
                },
                _ => failure(1, format!("sleep: invalid time interval '{n}'\n")),
            },
            None => failure(1, "sleep: missing operand\n".into()),
        },
        "hostname" => ok(format!(
            "{}\n",
            context.pod["metadata"]["name"].as_str().unwrap_or_default()
        )),
        "env" | "printenv" => ok(environment(context).join("\n") + "\n"),
        "cat" => cat(args, context),
        "uname" => ok(if args.iter().any(|a| a == "-a") {
            "Linux twin 6.12.46-66.121.amzn2023.x86_64 #1 SMP x86_64 GNU/Linux\n".into()
        } else {
            "Linux\n".into()
        }),
        "tail" if args.iter().any(|a| a == "-f") => Output {
            duration: None,
            ..Output::default()
        },
        "sh" | "bash" | "/bin/sh" if args.first().is_some_and(|a| a == "-c") => {
            shell(args.get(1).map(String::as_str).unwrap_or_default(), context)
        }
        _ => failure(
            127,
            format!(
                "exec: \"{program}\": executable file not found in $PATH (the lab twin answers echo, sleep, sh -c, cat, env, hostname, uname, true, false)\n"
            ),
        ),
    }
}

fn failure(exit_code: i32, stderr: String) -> Output {
    Output {
        stdout: String::new(),
        stderr,
        exit_code,
        duration: Some(Duration::ZERO),
    }
}

/// `sh -c` with `;`, `&&`, `||` and `exit N` over the commands above.
fn shell(script: &str, context: &Context<'_>) -> Output {
    let mut total = Output {
        duration: Some(Duration::ZERO),
        ..Output::default()
    };
    let mut skip_next = false;
    let mut rest = script;
    while !rest.trim().is_empty() {
        let (segment, separator, remainder) = next_segment(rest);
        rest = remainder;
        if skip_next {
            skip_next = (separator == "&&" && total.exit_code != 0)
                || (separator == "||" && total.exit_code == 0);
            continue;
        }
        let words: Vec<String> = segment
            .split_whitespace()
            .map(|w| w.trim_matches(|c| c == '"' || c == '\'').to_string())
            .collect();
        if words.first().is_some_and(|w| w == "exit") {
            total.exit_code = words.get(1).and_then(|n| n.parse().ok()).unwrap_or(0);
            return total;
        }
        let step = run(&words, context);
        total.stdout.push_str(&step.stdout);
        total.stderr.push_str(&step.stderr);
        total.exit_code = step.exit_code;
        total.duration = match (total.duration, step.duration) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
        if total.duration.is_none() {
            return total;
        }
        skip_next = (separator == "&&" && total.exit_code != 0)
            || (separator == "||" && total.exit_code == 0);
    }
    total
}

fn next_segment(text: &str) -> (&str, &str, &str) {
    let candidates = [";", "&&", "||", "\n"];
    let found = candidates
        .iter()
        .filter_map(|sep| text.find(sep).map(|i| (i, *sep)))
        .min();
    match found {
        Some((i, sep)) => (&text[..i], sep, &text[i + sep.len()..]),
        None => (text, "", ""),
    }
}

fn environment(context: &Context<'_>) -> Vec<String> {
    let mut env = vec![
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".to_string(),
        format!(
            "HOSTNAME={}",
            context.pod["metadata"]["name"].as_str().unwrap_or_default()
        ),
    ];
    for var in context.container["env"].as_array().into_iter().flatten() {
        if let (Some(name), Some(value)) = (var["name"].as_str(), var["value"].as_str()) {
            env.push(format!("{name}={value}"));
        }
    }
    env.extend([
        "KUBERNETES_SERVICE_HOST=10.100.0.1".to_string(),
        "KUBERNETES_SERVICE_PORT=443".to_string(),
        "HOME=/root".to_string(),
    ]);
    env
}

const OS_RELEASE: &str = "NAME=\"Amazon Linux\"\nVERSION=\"2023\"\nID=\"amzn\"\nID_LIKE=\"fedora\"\nVERSION_ID=\"2023\"\nPLATFORM_ID=\"platform:al2023\"\nPRETTY_NAME=\"Amazon Linux 2023.9.20251208\"\nANSI_COLOR=\"0;33\"\nCPE_NAME=\"cpe:2.3:o:amazon:amazon_linux:2023\"\nHOME_URL=\"https://aws.amazon.com/linux/amazon-linux-2023/\"\nDOCUMENTATION_URL=\"https://docs.aws.amazon.com/linux/\"\nSUPPORT_URL=\"https://aws.amazon.com/premiumsupport/\"\nBUG_REPORT_URL=\"https://github.com/amazonlinux/amazon-linux-2023\"\nVENDOR_NAME=\"AWS\"\nVENDOR_URL=\"https://aws.amazon.com/\"\nSUPPORT_END=\"2029-06-30\"\n";

fn cat(args: &[String], context: &Context<'_>) -> Output {
    let mut out = String::new();
    for path in args {
        match path.as_str() {
            "/etc/os-release" => out.push_str(OS_RELEASE),
            "/etc/hostname" => out.push_str(&format!(
                "{}\n",
                context.pod["metadata"]["name"].as_str().unwrap_or_default()
            )),
            "/proc/cpuinfo" => out.push_str(&cpuinfo(context.node)),
            other => return failure(1, format!("cat: {other}: No such file or directory\n")),
        }
    }
    Output {
        stdout: out,
        stderr: String::new(),
        exit_code: 0,
        duration: Some(Duration::ZERO),
    }
}

/// `/proc/cpuinfo` for the node's instance type (processor model and vCPU count of the type).
fn cpuinfo(node: Option<&Value>) -> String {
    let instance_type = node
        .and_then(|n| n["metadata"]["labels"]["node.kubernetes.io/instance-type"].as_str())
        .unwrap_or("t3.medium");
    let (vendor, family, model, model_name, mhz, vcpus) = match instance_type {
        "g5.xlarge" => ("AuthenticAMD", 23, 49, "AMD EPYC 7R32", "2799.998", 4),
        "g5.2xlarge" => ("AuthenticAMD", 23, 49, "AMD EPYC 7R32", "2799.998", 8),
        _ => (
            "GenuineIntel",
            6,
            85,
            "Intel(R) Xeon(R) Platinum 8259CL CPU @ 2.50GHz",
            "2499.998",
            2,
        ),
    };
    (0..vcpus)
        .map(|i| {
            format!(
                "processor\t: {i}\nvendor_id\t: {vendor}\ncpu family\t: {family}\nmodel\t\t: {model}\nmodel name\t: {model_name}\ncpu MHz\t\t: {mhz}\nphysical id\t: 0\nsiblings\t: {vcpus}\ncore id\t\t: {}\ncpu cores\t: {}\n\n",
                i / 2,
                vcpus / 2
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run_line(argv: &[&str]) -> Output {
        let pod = json!({"metadata": {"name": "p-1"}});
        let container = json!({"name": "c", "env": [{"name": "A", "value": "b"}]});
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        run(
            &argv,
            &Context {
                pod: &pod,
                container: &container,
                node: None,
            },
        )
    }

    #[test]
    fn shell_sequences_and_exit_codes() {
        let out = run_line(&["sh", "-c", "echo hello; sleep 2 && echo done; exit 3"]);
        assert_eq!(out.stdout, "hello\ndone\n");
        assert_eq!(out.exit_code, 3);
        assert_eq!(out.duration, Some(Duration::from_secs(2)));
        assert_eq!(
            run_line(&["sh", "-c", "false || echo recovered"]).stdout,
            "recovered\n"
        );
        assert_eq!(run_line(&["nvidia-smi"]).exit_code, 127);
        assert_eq!(run_line(&["sleep", "infinity"]).duration, None);
        assert!(run_line(&["env"]).stdout.contains("A=b\n"));
    }
}
