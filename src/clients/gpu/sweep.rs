//! nccl-tests on node pairs, a few pairs at a time (or on each node alone: NCCL inside it):
//! each pair one [`AllReduce`] pinned to its two nodes and cleaned up when it ends, all of them
//! labelled with the sweep's group so that one cleanup finds whatever a cut-short sweep left.

use serde_json::Value;

use super::nccl::{AllReduce, AllReduceSpec};
use super::pause::concurrency;
use crate::clients::kube::{KubeClient, KubeError, ListOptions};
use crate::clock::Clock;

pub struct SweepSpec {
    /// What every pair runs; its `names` are set per pair.
    pub run: AllReduceSpec,
    pub pairs: Vec<(String, String)>,
    /// Pairs at once (a node is in at most two pairs of a ring, so this bounds the GPUs busy).
    pub concurrency: usize,
    /// `runbook/nccl-group` of every object the sweep makes.
    pub group: String,
}

async fn one_pair(
    kube: &KubeClient,
    spec: &SweepSpec,
    index: usize,
    clock: &dyn Clock,
) -> Result<Value, KubeError> {
    let (a, b) = &spec.pairs[index];
    let names = [a.clone(), b.clone()];
    run_on(kube, &spec.run, &spec.group, index, &names, clock).await
}

/// One run of `spec` pinned to `names`, the `index`-th of `group`, cleaned up when it ends
/// (the sweep's pairs, and each group an acceptance search runs).
pub async fn run_on(
    kube: &KubeClient,
    spec: &AllReduceSpec,
    group: &str,
    index: usize,
    names: &[String],
    clock: &dyn Clock,
) -> Result<Value, KubeError> {
    let mut run_spec = spec.clone();
    run_spec.names = Some(names.to_vec());
    run_spec.nodes = names.len();
    let mut run = AllReduce::in_group(&run_spec, group, index);
    let outcome = run.run(kube, &run_spec, clock).await;
    let cleaned = run.cleanup(kube).await;
    let result = outcome?;
    cleaned?;
    Ok(result)
}

/// `spec` on each of `names` alone (every GPU of one node: NCCL inside it), `concurrency` nodes
/// at a time, each run cleaned up; the answers in `names` order.
pub async fn run_each(
    kube: &KubeClient,
    spec: &AllReduceSpec,
    group: &str,
    names: &[String],
    concurrency_limit: usize,
    clock: &dyn Clock,
) -> Vec<Result<Value, KubeError>> {
    use futures::StreamExt;
    let mut answers: Vec<(usize, Result<Value, KubeError>)> =
        futures::stream::iter(names.iter().enumerate())
            .map(|(i, node)| async move {
                let one = std::slice::from_ref(node);
                (i, run_on(kube, spec, group, i, one, clock).await)
            })
            .buffer_unordered(concurrency(concurrency_limit, clock))
            .collect()
            .await;
    answers.sort_by_key(|(i, _)| *i);
    answers.into_iter().map(|(_, answer)| answer).collect()
}

/// The pairs in waves that share no node (a pair takes its nodes' GPUs: two pairs on one node
/// would each hold half and wait for the other), at most `concurrency` pairs a wave. Greedy,
/// in pair order: a ring of n nodes takes 2 waves (3 when n is odd).
pub(super) fn waves(pairs: &[(String, String)], concurrency: usize) -> Vec<Vec<usize>> {
    let mut waves: Vec<Vec<usize>> = Vec::new();
    for (index, (a, b)) in pairs.iter().enumerate() {
        let fits = |wave: &Vec<usize>| {
            wave.len() < concurrency.max(1)
                && wave.iter().all(|&other| {
                    let (c, d) = &pairs[other];
                    a != c && a != d && b != c && b != d
                })
        };
        match waves.iter_mut().find(|wave| fits(wave)) {
            Some(wave) => wave.push(index),
            None => waves.push(vec![index]),
        }
    }
    waves
}

/// Runs every pair, wave after wave; the answers in pair order (a pair that could not run is
/// its error).
pub async fn sweep(
    kube: &KubeClient,
    spec: &SweepSpec,
    clock: &dyn Clock,
) -> Vec<Result<Value, KubeError>> {
    let mut answers: Vec<(usize, Result<Value, KubeError>)> = Vec::new();
    for wave in waves(&spec.pairs, concurrency(spec.concurrency, clock)) {
        let done: Vec<(usize, Result<Value, KubeError>)> = futures::future::join_all(
            wave.into_iter()
                .map(|i| async move { (i, one_pair(kube, spec, i, clock).await) }),
        )
        .await;
        answers.extend(done);
    }
    answers.sort_by_key(|(i, _)| *i);
    answers.into_iter().map(|(_, answer)| answer).collect()
}

/// Deletes what a cut-short sweep left: its pods and Services, by group.
pub async fn remove_sweep(
    kube: &KubeClient,
    namespace: &str,
    group: &str,
) -> Result<(), KubeError> {
    let options = ListOptions {
        namespace: Some(namespace.to_string()),
        labels: Some(format!("runbook/nccl-group={group}")),
        fields: None,
    };
    for kind in ["Pod", "Service"] {
        for object in kube.list(kind, &options).await? {
            if let Some(name) = object["metadata"]["name"].as_str() {
                match kube.delete(kind, name, Some(namespace)).await {
                    Ok(()) | Err(KubeError::Api { code: 404, .. }) => {}
                    Err(e) => return Err(e),
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(n: usize) -> Vec<(String, String)> {
        (0..n)
            .map(|i| (format!("n{i}"), format!("n{}", (i + 1) % n)))
            .collect()
    }

    #[test]
    fn no_wave_uses_a_node_twice() {
        for n in [3, 4, 16, 17] {
            let pairs = ring(n);
            let waves = waves(&pairs, 64);
            assert!(waves.len() <= 3, "{n} nodes: {} waves", waves.len());
            for wave in &waves {
                let mut nodes: Vec<&String> = wave
                    .iter()
                    .flat_map(|&i| [&pairs[i].0, &pairs[i].1])
                    .collect();
                let all = nodes.len();
                nodes.sort();
                nodes.dedup();
                assert_eq!(nodes.len(), all);
            }
            assert_eq!(waves.iter().map(Vec::len).sum::<usize>(), n);
        }
        assert!(waves(&ring(16), 2).iter().all(|w| w.len() <= 2));
    }
}
