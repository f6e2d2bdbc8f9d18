//! RebootInstances through aws-sdk-ec2: a node rebooted by hand, as a person repairing it would
//! (runbook's own repair loop in a drill).

use super::client::AwsClients;
use super::error::AwsError;

impl AwsClients {
    /// Asks EC2 to reboot `instance` (EC2 queues it and answers at once).
    pub async fn reboot_instance(&self, instance: &str) -> Result<(), AwsError> {
        super::path_values::checked("RebootInstances", &[("instance id", instance)])?;
        self.sdk()
            .await
            .ec2
            .reboot_instances()
            .instance_ids(instance)
            .send()
            .await
            .map_err(|e| self.failed("RebootInstances", e).about(instance))?;
        Ok(())
    }
}
