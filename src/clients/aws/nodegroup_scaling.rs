//! Scaling a node group so that it gets there: wait out an update already in flight (EKS
//! refuses a second one with ResourceInUseException), skip the call when the group already
//! has the size, then wait for the update to succeed. A cleanup that scales GPUs back to 0
//! after a Ctrl-C in the middle of the scale-up relies on exactly this.

use std::time::Duration;

use serde_json::{Value, json};

use super::client::AwsClients;
use super::error::AwsError;
use super::retry::Backoff;
use super::waiter::{Probe, wait_for};
use crate::clock::Clock;

/// Node group states in which EKS takes no new update.
const BUSY: [&str; 2] = ["UPDATING", "CREATING"];
/// States a node group will not leave for one that takes updates.
const GONE: [&str; 3] = ["DELETING", "DELETE_FAILED", "CREATE_FAILED"];

impl AwsClients {
    /// Sets the desired size and, with `wait`, waits on `clock` until the update is Successful.
    /// Answers the update `#{ id, status, type }`, or `#{ id: (), status: "Unchanged" }` when
    /// the group already had that size and nothing was in flight.
    pub async fn scale_nodegroup_to(
        &self,
        cluster: &str,
        name: &str,
        desired: i32,
        max: Option<i32>,
        wait: Option<Duration>,
        clock: &dyn Clock,
    ) -> Result<Value, AwsError> {
        // However long the caller waits for the update, an update in flight gets as long.
        let patience = wait.unwrap_or(Duration::from_secs(1200));
        let deadline = clock.now() + patience;
        // Another caller's update may start between the look and the call: look again.
        let busy = |error: &AwsError| error.code == "ResourceInUseException";
        super::retry::until_deadline(
            clock,
            Some(deadline),
            Backoff::EVERY_5S,
            busy,
            |_, _| {},
            || async {
                let described = self.wait_until_free(cluster, name, patience, clock).await?;
                let current = described["scaling_config"]["desired_size"].as_i64();
                let current_max = described["scaling_config"]["max_size"].as_i64();
                let max_as_asked = max.is_none_or(|m| current_max == Some(i64::from(m)));
                if current == Some(i64::from(desired)) && max_as_asked {
                    return Ok(json!({"id": null, "status": "Unchanged", "type": "ConfigUpdate"}));
                }
                let update = self.scale_nodegroup(cluster, name, desired, max).await?;
                let Some(timeout) = wait else {
                    return Ok(update);
                };
                let id = update["id"].as_str().unwrap_or_default().to_string();
                self.wait_update(cluster, name, &id, timeout, clock).await?;
                let mut done = update;
                done["status"] = json!("Successful");
                Ok(done)
            },
        )
        .await
    }

    /// Describes the node group once it takes updates again (no update in flight).
    pub(super) async fn wait_until_free(
        &self,
        cluster: &str,
        name: &str,
        timeout: Duration,
        clock: &dyn Clock,
    ) -> Result<Value, AwsError> {
        let last = std::sync::Mutex::new(Value::Null);
        let what = format!("node group {name} of cluster {cluster}");
        wait_for(
            clock,
            timeout,
            "DescribeNodegroup",
            &what,
            "free of updates in flight",
            || {
                let described = self.nodegroup(cluster, name);
                let last = &last;
                async move {
                    let described = described.await?;
                    let status = described["status"]
                        .as_str()
                        .unwrap_or("UNKNOWN")
                        .to_string();
                    *last
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner) = described;
                    Ok(if BUSY.contains(&status.as_str()) {
                        Probe::Pending(status)
                    } else if GONE.contains(&status.as_str()) {
                        Probe::Failed(status)
                    } else {
                        Probe::Done(status)
                    })
                }
            },
        )
        .await?;
        Ok(last
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner))
    }
}
