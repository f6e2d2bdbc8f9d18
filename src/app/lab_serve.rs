//! `runbook lab serve`: the twin as a standalone server, with a kubeconfig kubectl can use.

use std::sync::Arc;
use std::time::Duration;

use super::{AppResult, lab_files, runtime};
use crate::cli::ServeArgs;
use crate::clock::VirtualClock;
use crate::error::{Error, Exit};
use crate::sim::Twin;

/// How often the clock is moved on at the speed factor.
const TICK: Duration = Duration::from_millis(20);

pub(crate) fn execute(args: &ServeArgs) -> AppResult {
    let scenario = crate::target::scenario::parse(&args.scenario)?;
    if !(args.speed.is_finite() && args.speed > 0.0) {
        return Err(Error::Usage(format!(
            "--speed must be a positive number, got {}",
            args.speed
        )));
    }
    let runtime = runtime::build()?;
    let twin = start_twin(args, &scenario)?;
    let endpoints = serve(&runtime, &twin, args)?;
    let written = write_files(args, &endpoints, &twin)?;
    say_where(args, &endpoints);
    tick_until_stopped(&runtime, twin, args.speed);
    undo_all(&written);
    Ok(Exit::Passed)
}

/// Where the twin serves, and the CA its clients trust.
struct Endpoints {
    /// The Kubernetes API's URL.
    kube: String,
    /// The AWS endpoint's URL.
    aws: String,
    ca_pem: String,
}

/// The twin with its scenario loaded and the faults asked for applied.
fn start_twin(args: &ServeArgs, scenario: &crate::sim::Scenario) -> Result<Arc<Twin>, Error> {
    let twin = Twin::new(Arc::new(VirtualClock::new()));
    // Its clients may ask which requests they made (`GET /twin/audit`).
    twin.audit.enable();
    twin.aws_audit.enable();
    crate::target::scenario::load(&twin, scenario);
    for fault in &args.faults {
        crate::sim::apply_fault(&twin, fault).map_err(Error::Usage)?;
    }
    Ok(twin)
}

/// The Kubernetes API and the AWS endpoint listening, on one CA.
fn serve(
    runtime: &tokio::runtime::Runtime,
    twin: &Arc<Twin>,
    args: &ServeArgs,
) -> Result<Endpoints, Error> {
    let cannot_listen = |port: u16| {
        move |source| Error::Usage(format!("cannot listen on 127.0.0.1:{port}: {source}"))
    };
    let served = runtime
        .block_on(crate::sim::serve_kube(twin.clone(), args.port))
        .map_err(cannot_listen(args.port))?;
    let aws_address = runtime
        .block_on(crate::sim::serve_aws(
            twin.clone(),
            args.aws_port,
            served.acceptor.clone(),
        ))
        .map_err(cannot_listen(args.aws_port))?;
    Ok(Endpoints {
        kube: served.url,
        aws: format!("https://{aws_address}"),
        ca_pem: served.ca_pem,
    })
}

/// The env file (with its CA beside it) and the kubeconfig asked for; when one cannot be
/// written, those written before it are taken back.
fn write_files(
    args: &ServeArgs,
    endpoints: &Endpoints,
    twin: &Twin,
) -> Result<Vec<lab_files::Written>, Error> {
    let mut written = Vec::new();
    if let Some(path) = &args.write_env {
        let ca_bundle = lab_files::ca_path_beside(path);
        written.push(lab_files::write_ca(&ca_bundle, &endpoints.ca_pem)?);
        let env = lab_files::LabEnv {
            aws_endpoint: &endpoints.aws,
            kube_server: &endpoints.kube,
            secrets: &twin.secrets,
            ca_bundle: &ca_bundle,
        };
        keep_or_undo(&mut written, lab_files::write_env(path, &env))?;
    }
    if let Some(path) = &args.write_kubeconfig {
        let kubeconfig = lab_files::write_kubeconfig(
            path,
            &endpoints.kube,
            &endpoints.ca_pem,
            &twin.secrets.admin_token,
        );
        keep_or_undo(&mut written, kubeconfig)?;
    }
    Ok(written)
}

/// A file written joins `written`; a failure takes back everything written so far.
fn keep_or_undo(
    written: &mut Vec<lab_files::Written>,
    file: Result<lab_files::Written, Error>,
) -> Result<(), Error> {
    match file {
        Ok(file) => {
            written.push(file);
            Ok(())
        }
        Err(error) => {
            undo_all(written);
            Err(error)
        }
    }
}

/// Where the twin serves, how to reach it with the files written, and how to move its clock.
fn say_where(args: &ServeArgs, endpoints: &Endpoints) {
    let (server, aws) = (&endpoints.kube, &endpoints.aws);
    say(format!(
        "lab twin ({}) serving the Kubernetes API on {server} and AWS (EKS, EC2, IAM, KMS, STS) on {aws}",
        crate::target::scenario::describe(&args.scenario)
    ));
    if let Some(path) = &args.write_env {
        say(format!(
            "aws env: {}   (set -a; . {}; set +a; aws eks describe-cluster --name {}; runbook run runbooks/verify.rhai --cluster {} --read-only)",
            path.display(),
            path.display(),
            crate::lab::CLUSTER_NAME,
            crate::lab::CLUSTER_NAME
        ));
    } else {
        say("calls must be signed with the lab's keys and carry its token: --write-env and --write-kubeconfig write them (0600)".to_string());
    }
    if let Some(path) = &args.write_kubeconfig {
        say(format!(
            "kubeconfig: {}   (kubectl --kubeconfig {} get nodes)",
            path.display(),
            path.display()
        ));
    }
    say(format!(
        "virtual clock: {}x; GET {server}/twin/clock, POST {server}/twin/advance?by=5m (with the kubeconfig's token); Ctrl-C stops",
        args.speed
    ));
}

/// Moves the twin's clock on at `speed` until Ctrl-C or SIGTERM, saying each request the twin
/// refused.
fn tick_until_stopped(runtime: &tokio::runtime::Runtime, twin: Arc<Twin>, speed: f64) {
    let step = TICK.mul_f64(speed);
    runtime.block_on(async move {
        let mut ticker = tokio::time::interval(TICK);
        // SIGTERM (a CI job cancelled, `kill`) stops it like Ctrl-C: the files come back out.
        let mut terminate =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        loop {
            tokio::select! {
                _ = ticker.tick() => {
                    twin.clock.advance(step);
                    for why in twin.refusals.drain() {
                        eprintln!("lab twin: refused a Kubernetes request: {why}");
                    }
                }
                _ = tokio::signal::ctrl_c() => break,
                Some(()) = async { match terminate.as_mut() { Some(t) => t.recv().await, None => std::future::pending().await } } => break,
            }
        }
    });
}

/// Takes back what `lab serve` wrote (newest first); says so when it cannot.
fn undo_all(written: &[lab_files::Written]) {
    for file in written.iter().rev() {
        if let Err(error) = file.undo() {
            eprint!("{}", error.render());
        }
    }
}

/// Prints a line; a closed stdout (the reader went away) must not stop the server.
fn say(line: String) {
    use std::io::Write;
    let mut out = std::io::stdout();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}
