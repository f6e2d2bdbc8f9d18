//! What a render amounts to, per chart: installed resources, hooks and CRDs counted apart, the
//! way the lab reads a preview ("operator 7 + 4 CRD-upgrade hooks; NFD 12 + 4 post-delete").

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;

use super::RenderedObject;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub struct Summary {
    /// Every object, hooks and CRDs included.
    pub total: u64,
    /// Every object by kind.
    pub by_kind: BTreeMap<String, u64>,
    /// The top chart first, then its subcharts by name.
    pub by_chart: Vec<ChartSummary>,
    /// Sorted by hook, weight, chart, kind and name, so the order does not depend on helm's.
    pub hooks: Vec<HookSummary>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub struct ChartSummary {
    pub chart: String,
    /// Objects installed with the release: neither hooks nor CRDs.
    pub resources: u64,
    pub hooks: u64,
    pub crds: u64,
    /// The `resources` by kind (hooks and CRDs are not in here).
    pub kinds: BTreeMap<String, u64>,
    /// The distinct events its hooks run at (`pre-upgrade`, `post-delete`, ...), sorted.
    pub hook_events: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub struct HookSummary {
    pub kind: String,
    pub name: String,
    pub chart: String,
    /// The `helm.sh/hook` value, e.g. `pre-upgrade` or `post-delete`.
    pub hook: String,
    pub weight: Option<i64>,
    pub delete_policy: Option<String>,
}

pub fn summary(objects: &[RenderedObject]) -> Summary {
    let mut by_kind = BTreeMap::new();
    let mut charts: BTreeMap<&str, ChartSummary> = BTreeMap::new();
    let mut hooks = Vec::new();
    for object in objects {
        *by_kind.entry(object.kind().to_string()).or_insert(0) += 1;
        let chart = charts
            .entry(object.chart.as_str())
            .or_insert_with(|| ChartSummary {
                chart: object.chart.clone(),
                resources: 0,
                hooks: 0,
                crds: 0,
                kinds: BTreeMap::new(),
                hook_events: Vec::new(),
            });
        // A CRD that is also a hook counts as a hook: helm does not install it with the release.
        if let Some(hook) = &object.hook {
            chart.hooks += 1;
            // One annotation may name several events: `pre-install,pre-upgrade`.
            for event in hook.split(',').map(str::trim).filter(|e| !e.is_empty()) {
                if !chart.hook_events.iter().any(|known| known == event) {
                    chart.hook_events.push(event.to_string());
                    chart.hook_events.sort();
                }
            }
            hooks.push(HookSummary {
                kind: object.kind().to_string(),
                name: object.name().to_string(),
                chart: object.chart.clone(),
                hook: hook.clone(),
                weight: object.hook_weight,
                delete_policy: object.hook_delete_policy.clone(),
            });
        } else if object.is_crd {
            chart.crds += 1;
        } else {
            chart.resources += 1;
            *chart.kinds.entry(object.kind().to_string()).or_insert(0) += 1;
        }
    }
    hooks.sort_by(|a, b| {
        // helm runs an absent weight as 0.
        (&a.hook, a.weight.unwrap_or(0), &a.chart, &a.kind, &a.name).cmp(&(
            &b.hook,
            b.weight.unwrap_or(0),
            &b.chart,
            &b.kind,
            &b.name,
        ))
    });
    let top = top_chart(objects);
    let mut by_chart: Vec<ChartSummary> = charts.into_values().collect();
    // Stable: the BTreeMap already ordered them by name; this only moves the top chart first.
    by_chart.sort_by_key(|chart| Some(chart.chart.as_str()) != top);
    Summary {
        total: objects.len() as u64,
        by_kind,
        by_chart,
        hooks,
    }
}

/// Every source path starts with the top chart's name.
fn top_chart(objects: &[RenderedObject]) -> Option<&str> {
    objects
        .iter()
        .filter_map(|object| object.source.split('/').next())
        .find(|name| !name.is_empty())
}

impl fmt::Display for Summary {
    /// A line for the total, then one per chart (see [`ChartSummary`]'s `Display`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", counted(self.total, "object"))?;
        for chart in &self.by_chart {
            write!(f, "\n{chart}")?;
        }
        Ok(())
    }
}

impl fmt::Display for ChartSummary {
    /// `gpu-operator: 7 resources [ClusterPolicy 1, ...] + 4 hooks (pre-upgrade) + 2 CRDs`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.chart, counted(self.resources, "resource"))?;
        if !self.kinds.is_empty() {
            let kinds: Vec<String> = self
                .kinds
                .iter()
                .map(|(kind, count)| format!("{kind} {count}"))
                .collect();
            write!(f, " [{}]", kinds.join(", "))?;
        }
        if self.hooks > 0 {
            write!(f, " + {}", counted(self.hooks, "hook"))?;
            write!(f, " ({})", self.hook_events.join(", "))?;
        }
        if self.crds > 0 {
            write!(f, " + {}", counted(self.crds, "CRD"))?;
        }
        Ok(())
    }
}

fn counted(count: u64, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse_rendered;
    use super::*;

    fn doc(source: &str, kind: &str, name: &str, annotations: &str) -> String {
        format!(
            "---\n# Source: {source}\napiVersion: v1\nkind: {kind}\nmetadata:\n  name: {name}\n  \
             annotations: {{{annotations}}}\n"
        )
    }

    fn render() -> Vec<RenderedObject> {
        let nfd = "op/charts/nfd/templates";
        let text = [
            doc(&format!("{nfd}/sa.yaml"), "ServiceAccount", "nfd", ""),
            doc("op/templates/sa.yaml", "ServiceAccount", "op", ""),
            doc(&format!("{nfd}/cr.yaml"), "ClusterRole", "nfd", ""),
            doc(&format!("{nfd}/cr.yaml"), "ClusterRole", "nfd-gc", ""),
            doc("op/templates/deploy.yaml", "Deployment", "op", ""),
            doc(
                &format!("{nfd}/prune.yaml"),
                "Job",
                "prune",
                "helm.sh/hook: post-delete",
            ),
            doc(
                "op/templates/upgrade.yaml",
                "Job",
                "upgrade",
                "helm.sh/hook: pre-upgrade, helm.sh/hook-weight: '1'",
            ),
            doc(
                "op/templates/upgrade.yaml",
                "ServiceAccount",
                "upgrade-sa",
                "helm.sh/hook: pre-upgrade, helm.sh/hook-weight: '0'",
            ),
            doc("op/crds/cp.yaml", "CustomResourceDefinition", "cp", ""),
            doc("op/charts/aaa/templates/cm.yaml", "ConfigMap", "a", ""),
        ]
        .concat();
        parse_rendered(&text).unwrap()
    }

    #[test]
    fn counts_resources_hooks_and_crds_per_chart() {
        let summary = summary(&render());
        assert_eq!(summary.total, 10);
        assert_eq!(summary.by_kind["ServiceAccount"], 3);
        assert_eq!(summary.by_kind["Job"], 2);
        let charts: Vec<(&str, u64, u64, u64)> = summary
            .by_chart
            .iter()
            .map(|c| (c.chart.as_str(), c.resources, c.hooks, c.crds))
            .collect();
        assert_eq!(
            charts,
            [("op", 2, 2, 1), ("aaa", 1, 0, 0), ("nfd", 3, 1, 0)]
        );
        let nfd = &summary.by_chart[2];
        assert_eq!(
            nfd.kinds,
            BTreeMap::from([("ClusterRole".into(), 2), ("ServiceAccount".into(), 1)])
        );
    }

    #[test]
    fn hooks_are_sorted_by_event_then_weight() {
        let summary = summary(&render());
        let hooks: Vec<(&str, Option<i64>, &str)> = summary
            .hooks
            .iter()
            .map(|h| (h.hook.as_str(), h.weight, h.name.as_str()))
            .collect();
        assert_eq!(
            hooks,
            [
                ("post-delete", None, "prune"),
                ("pre-upgrade", Some(0), "upgrade-sa"),
                ("pre-upgrade", Some(1), "upgrade"),
            ]
        );
    }

    #[test]
    fn reads_as_the_lab_writes_it() {
        let text = summary(&render()).to_string();
        assert_eq!(
            text,
            "10 objects\n\
             op: 2 resources [Deployment 1, ServiceAccount 1] + 2 hooks (pre-upgrade) + 1 CRD\n\
             aaa: 1 resource [ConfigMap 1]\n\
             nfd: 3 resources [ClusterRole 2, ServiceAccount 1] + 1 hook (post-delete)"
        );
    }

    #[test]
    fn serializes_with_snake_case_fields() {
        let json = serde_json::to_value(summary(&render())).unwrap();
        assert_eq!(json["by_chart"][0]["chart"], "op");
        assert_eq!(json["hooks"][0]["delete_policy"], serde_json::Value::Null);
    }

    #[test]
    fn a_hook_on_several_events_lists_each() {
        let text = doc(
            "op/templates/job.yaml",
            "Job",
            "migrate",
            "helm.sh/hook: 'pre-install, pre-upgrade'",
        );
        let summary = summary(&parse_rendered(&text).unwrap());
        assert_eq!(
            summary.by_chart[0].hook_events,
            ["pre-install", "pre-upgrade"]
        );
        assert_eq!(
            summary.to_string(),
            "1 object\nop: 0 resources + 1 hook (pre-install, pre-upgrade)"
        );
    }

    #[test]
    fn empty_render_is_empty() {
        let summary = summary(&[]);
        assert_eq!(summary.total, 0);
        assert!(summary.by_chart.is_empty());
        assert_eq!(summary.to_string(), "0 objects");
    }
}
