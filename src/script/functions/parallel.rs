//! `parallel`: independent checks at the same time. Each closure runs on a thread of its own
//! (the host's calls block that thread only), its steps keep their names under the step that
//! called `parallel`, and their records come back in the order the closures were given.
//!
//! On a virtual clock (the embedded twin) the closures run one after another instead: there,
//! a wait moves the one clock every branch shares, so branches at the same time would see a
//! different history on every run; one after another, a run is the same every time and costs
//! microseconds a call anyway.

use std::sync::Arc;

use rhai::{Array, Dynamic, Engine, EvalAltResult, FnPtr, NativeCallContext};

use super::doc;
use crate::script::error::{failure, usage_error};
use crate::script::host::{BranchRecords, Host};

/// Room for Rhai's native recursion, as on the script's own thread.
const BRANCH_STACK_BYTES: usize = 16 * 1024 * 1024;

pub(super) fn register(engine: &mut Engine, host: &Arc<Host>) {
    let h = host.clone();
    doc(
        "parallel",
        &["bodies: Array", "Array"],
        "Runs closures at the same time (`parallel([|| check_a(), || check_b()])`) and returns\n\
         their results in order. Steps inside keep their names and appear in reports in the\n\
         order given. All of them run to their end; if any fails, the first failure (in that\n\
         order) is raised, after a line that says how each ended. Ctrl-C stops them all; a\n\
         `defer` inside one runs at the end of the run, as anywhere else. For checks that do\n\
         not depend on each other: they share the run's clock and target. On the twin's virtual\n\
         clock they run one after another, so that every run has the same history.",
    )
    .register_into_engine(engine, move |ctx: NativeCallContext, bodies: Array| {
        run_parallel(&h, &ctx, bodies)
    });
}

fn run_parallel(
    host: &Host,
    ctx: &NativeCallContext,
    bodies: Array,
) -> Result<Array, Box<EvalAltResult>> {
    let position = ctx.call_position();
    let bodies: Vec<FnPtr> = bodies
        .into_iter()
        .enumerate()
        .map(|(index, body)| {
            let kind = body.type_name();
            body.try_cast::<FnPtr>().ok_or_else(|| {
                usage_error(
                    format!(
                        "parallel: item {} is {kind}, not a closure such as `|| check()`",
                        index + 1
                    ),
                    position,
                )
            })
        })
        .collect::<Result<_, _>>()?;
    if host.should_stop() {
        return Err(host.interrupted_error(position));
    }
    if host.clock.is_virtual() {
        let outcomes = bodies
            .iter()
            .map(|body| {
                (
                    body.call_within_context::<Dynamic>(ctx, ()),
                    BranchRecords::default(),
                )
            })
            .collect();
        return conclude(host, outcomes);
    }
    let prefix = host.open_path();
    let outcomes: Vec<(Result<Dynamic, Box<EvalAltResult>>, BranchRecords)> =
        std::thread::scope(|scope| {
            let running: Vec<_> = bodies
                .iter()
                .map(|body| {
                    let prefix = prefix.clone();
                    std::thread::Builder::new()
                        .name("runbook-parallel".into())
                        .stack_size(BRANCH_STACK_BYTES)
                        .spawn_scoped(scope, move || {
                            host.run_branch(prefix, || body.call_within_context::<Dynamic>(ctx, ()))
                        })
                })
                .collect();
            running
                .into_iter()
                .map(|spawned| match spawned {
                    Ok(handle) => handle.join().unwrap_or_else(|_| {
                        (
                            Err(failure("parallel: a branch crashed", position)),
                            BranchRecords::default(),
                        )
                    }),
                    Err(e) => (
                        Err(failure(
                            format!("parallel: cannot start a thread: {e}"),
                            position,
                        )),
                        BranchRecords::default(),
                    ),
                })
                .collect()
        });
    conclude(host, outcomes)
}

/// The results in order, or the first failure after a line that says how each branch ended.
fn conclude(
    host: &Host,
    outcomes: Vec<(Result<Dynamic, Box<EvalAltResult>>, BranchRecords)>,
) -> Result<Array, Box<EvalAltResult>> {
    let mut results = Array::with_capacity(outcomes.len());
    let mut first_error = None;
    let mut summary = Vec::with_capacity(outcomes.len());
    for (index, (result, records)) in outcomes.into_iter().enumerate() {
        host.adopt(records);
        match result {
            Ok(value) => {
                summary.push(format!("#{} passed", index + 1));
                results.push(value);
            }
            Err(error) => {
                summary.push(format!("#{} failed", index + 1));
                results.push(Dynamic::UNIT);
                first_error.get_or_insert(error);
            }
        }
    }
    match first_error {
        None => Ok(results),
        Some(error) => {
            host.log(&format!("parallel: {}", summary.join(", ")));
            Err(error)
        }
    }
}
