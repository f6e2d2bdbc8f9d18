//! `metric`: a number the run measured, kept in the report (and the history) with the step
//! that measured it; fixed bounds and a baseline from earlier runs fail that step.

use std::collections::BTreeMap;
use std::sync::Arc;

use rhai::{Dynamic, Engine, EvalAltResult, Map, NativeCallContext, Position};

use super::doc;
use crate::report::{
    BaselineResult, BaselineSpec, BaselineVerdict, Better, MetricRecord, RESERVED_LABELS,
    is_label_name, runs_named, shown_number,
};
use crate::script::convert::from_json;
use crate::script::error::{failure, usage_error};
use crate::script::host::Host;

type Result<T> = std::result::Result<T, Box<EvalAltResult>>;

const OPTIONS: &[&str] = &["unit", "better", "labels", "min", "max", "baseline"];

pub(super) fn register(engine: &mut Engine, host: &Arc<Host>) {
    let h = host.clone();
    doc(
        "metric",
        &["name: &str", "value: Dynamic", "Map"],
        "Records a measured number (`name`: lowercase letters, digits and _) in the step that\n\
         measured it: in the report, the run history, `--metrics-file` and the summary.",
    )
    .register_into_engine(
        engine,
        move |ctx: NativeCallContext, name: &str, value: Dynamic| {
            metric(&h, name, &value, &Map::new(), ctx.call_position())
        },
    );
    let h = host.clone();
    doc(
        "metric",
        &["name: &str", "value: Dynamic", "options: Map", "Map"],
        "The same with options: `unit` (\"GB/s\"), `better` (\"higher\" or \"lower\"), `labels` (a map\n\
         of strings), `min` and `max` (fixed bounds), `baseline` (#{ runs: 20, drop: 0.2 }: fail when\n\
         worse than the median of the last `runs` earlier runs of this runbook, target and\n\
         parameters where it passed, by more than `drop` of it; needs `better`). A value out of\n\
         bounds or worse than its baseline fails the step, naming the runs compared. Answers\n\
         #{ name, value, ok, baseline }.",
    )
    .register_into_engine(
        engine,
        move |ctx: NativeCallContext, name: &str, value: Dynamic, options: Map| {
            metric(&h, name, &value, &options, ctx.call_position())
        },
    );
}

fn metric(host: &Host, name: &str, value: &Dynamic, options: &Map, at: Position) -> Result<Map> {
    let mut record = parse(name, value, options, at)?;
    record.step = host.metric_step();
    let baseline = match options.get("baseline") {
        Some(spec) => Some(baseline_spec(spec, at)?),
        None => None,
    };
    let (record, problem) = judge(host, record, baseline);
    let answer = answer(&record);
    host.record_metric(record).map_err(|e| usage_error(e, at))?;
    match problem {
        Some(problem) => Err(failure(problem, at)),
        None => Ok(answer),
    }
}

/// The record as the options say, before any judging.
fn parse(name: &str, value: &Dynamic, options: &Map, at: Position) -> Result<MetricRecord> {
    if !is_metric_name(name) {
        return Err(usage_error(
            format!(
                "metric: the name `{name}` is lowercase letters, digits and _ (not first), e.g. `nccl_busbw_gbps`"
            ),
            at,
        ));
    }
    if let Some(unknown) = options.keys().find(|k| !OPTIONS.contains(&k.as_str())) {
        return Err(usage_error(
            format!(
                "metric: unknown option `{unknown}` (known: {})",
                OPTIONS.join(", ")
            ),
            at,
        ));
    }
    let value = number(value, &format!("metric `{name}`: the value"), at)?;
    let text = |key: &str| -> Result<Option<String>> {
        match options.get(key) {
            None => Ok(None),
            Some(v) if v.is_unit() => Ok(None),
            Some(v) => v.clone().into_string().map(Some).map_err(|t| {
                usage_error(format!("metric `{name}`: `{key}` is a string, got {t}"), at)
            }),
        }
    };
    let better = match text("better")? {
        None => None,
        Some(word) => Some(Better::parse(&word).ok_or_else(|| {
            usage_error(
                format!("metric `{name}`: `better` is \"higher\" or \"lower\", got \"{word}\""),
                at,
            )
        })?),
    };
    let bound = |key: &str| -> Result<Option<f64>> {
        match options.get(key) {
            None => Ok(None),
            Some(v) if v.is_unit() => Ok(None),
            Some(v) => number(v, &format!("metric `{name}`: `{key}`"), at).map(Some),
        }
    };
    if options.contains_key("baseline") && better.is_none() {
        return Err(usage_error(
            format!(
                "metric `{name}`: a baseline needs `better: \"higher\"` or `\"lower\"`, to know which way is worse"
            ),
            at,
        ));
    }
    Ok(MetricRecord {
        name: name.to_string(),
        value,
        unit: text("unit")?,
        better,
        labels: labels(name, options.get("labels"), at)?,
        step: Vec::new(),
        min: bound("min")?,
        max: bound("max")?,
        baseline: None,
        ok: true,
    })
}

/// Bounds, then the baseline: the record with `ok` and its baseline filled in, and what is
/// wrong with the value if anything.
fn judge(
    host: &Host,
    mut record: MetricRecord,
    baseline: Option<BaselineSpec>,
) -> (MetricRecord, Option<String>) {
    let shown = record.shown();
    let unit = record
        .unit
        .clone()
        .map(|u| format!(" {u}"))
        .unwrap_or_default();
    let name = record.name.clone();
    let mut problem = None;
    if let Some(min) = record.min.filter(|min| record.value < *min) {
        problem = Some(format!(
            "metric `{name}` = {shown} is below its minimum {}{unit}",
            shown_number(min)
        ));
    } else if let Some(max) = record.max.filter(|max| record.value > *max) {
        problem = Some(format!(
            "metric `{name}` = {shown} is above its maximum {}{unit}",
            shown_number(max)
        ));
    }
    if let (Some(spec), Some(better)) = (baseline, record.better) {
        let result = match host.compare_with_history(&record, better, spec) {
            None => BaselineResult {
                compared: Vec::new(),
                median: None,
                limit: None,
                verdict: BaselineVerdict::NoHistory,
            },
            Some(Err(error)) => {
                host.log(&format!(
                    "metric `{name}`: the baseline was not checked: {error}"
                ));
                BaselineResult {
                    compared: Vec::new(),
                    median: None,
                    limit: None,
                    verdict: BaselineVerdict::NoHistory,
                }
            }
            Some(Ok(result)) => result,
        };
        if result.verdict == BaselineVerdict::Worse && problem.is_none() {
            let median = result.median.map(shown_number).unwrap_or_default();
            let limit = result.limit.map(shown_number).unwrap_or_default();
            let side = match better {
                Better::Higher => "lowest",
                Better::Lower => "highest",
            };
            problem = Some(format!(
                "metric `{name}` = {shown} is worse than its baseline: the median of {} is {median}{unit}, \
                 and the {side} value within {:.0}% of it is {limit}{unit}",
                runs_named(&result.compared),
                spec.drop * 100.0
            ));
        }
        record.baseline = Some(result);
    }
    record.ok = problem.is_none();
    (record, problem)
}

fn baseline_spec(value: &Dynamic, at: Position) -> Result<BaselineSpec> {
    let bad = |why: &str| {
        usage_error(
            format!("metric: `baseline` is #{{ runs: 20, drop: 0.2 }}: {why}"),
            at,
        )
    };
    let Some(map) = value.read_lock::<Map>() else {
        return Err(bad(&format!("got {}", value.type_name())));
    };
    if let Some(unknown) = map.keys().find(|k| !["runs", "drop"].contains(&k.as_str())) {
        return Err(bad(&format!("unknown key `{unknown}`")));
    }
    let runs = match map.get("runs") {
        None => 20,
        Some(v) => v
            .as_int()
            .ok()
            .and_then(|n| usize::try_from(n).ok())
            .filter(|n| (1..=1000).contains(n))
            .ok_or_else(|| bad(&format!("`runs` is a whole number from 1 to 1000, got {v}")))?,
    };
    let drop = match map.get("drop") {
        None => 0.2,
        Some(v) => number(v, "metric: `baseline.drop`", at)
            .ok()
            .filter(|d| (0.0..1.0).contains(d))
            .ok_or_else(|| {
                bad(&format!(
                    "`drop` is a share from 0 up to 1 (0.2 for 20%), got {v}"
                ))
            })?,
    };
    Ok(BaselineSpec { runs, drop })
}

fn labels(name: &str, value: Option<&Dynamic>, at: Position) -> Result<BTreeMap<String, String>> {
    let Some(value) = value.filter(|v| !v.is_unit()) else {
        return Ok(BTreeMap::new());
    };
    let Some(map) = value.read_lock::<Map>() else {
        return Err(usage_error(
            format!(
                "metric `{name}`: `labels` is a map, got {}",
                value.type_name()
            ),
            at,
        ));
    };
    map.iter()
        .map(|(key, v)| {
            if !is_label_name(key) || RESERVED_LABELS.contains(&key.as_str()) {
                return Err(usage_error(
                    format!(
                        "metric `{name}`: the label `{key}` is letters, digits and _ (not first), and none of {}",
                        RESERVED_LABELS.join(", ")
                    ),
                    at,
                ));
            }
            let text = if v.is_string() { v.clone().into_string().unwrap_or_default() } else { v.to_string() };
            Ok((key.to_string(), text))
        })
        .collect()
}

fn number(value: &Dynamic, what: &str, at: Position) -> Result<f64> {
    #[expect(
        clippy::cast_precision_loss,
        reason = "a measured count far below 2^53"
    )]
    let number = value
        .as_float()
        .ok()
        .or_else(|| value.as_int().ok().map(|i| i as f64));
    number.filter(|n| n.is_finite()).ok_or_else(|| {
        usage_error(
            format!(
                "{what} is a finite number, got {} ({value})",
                value.type_name()
            ),
            at,
        )
    })
}

fn is_metric_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

fn answer(record: &MetricRecord) -> Map {
    let mut map = Map::new();
    map.insert("name".into(), record.name.clone().into());
    map.insert("value".into(), Dynamic::from_float(record.value));
    map.insert("ok".into(), record.ok.into());
    map.insert(
        "baseline".into(),
        record.baseline.as_ref().map_or(Dynamic::UNIT, |b| {
            from_json(&serde_json::to_value(b).unwrap_or_default())
        }),
    );
    map
}
