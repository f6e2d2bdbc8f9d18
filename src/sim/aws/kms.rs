//! KMS over its JSON protocol (`X-Amz-Target: TrentService.*`): the key that encrypts a
//! cluster's Secrets. CreateKey, DescribeKey, ScheduleKeyDeletion (7 to 30 days, 30 by default;
//! the key stays until then, `PendingDeletion`), CreateAlias, ListAliases and DeleteAlias, with
//! KMS's errors; EKS's CreateCluster takes such a key in `encryptionConfig`.

use std::time::Duration;

use serde_json::{Value, json};

use super::error::AwsError;
use super::state::{AwsState, KmsKey};
use super::wire::epoch;
use crate::lab;

const DAY: Duration = Duration::from_secs(86_400);

fn error(code: &'static str, message: String) -> AwsError {
    AwsError::new(400, code, message)
}

fn alias_arn(alias: &str) -> String {
    format!("arn:aws:kms:{}:{}:{alias}", lab::REGION, lab::ACCOUNT_ID)
}

fn metadata(key: &KmsKey) -> Value {
    let mut meta = json!({
        "AWSAccountId": lab::ACCOUNT_ID,
        "KeyId": key.id,
        "Arn": key.arn(),
        "CreationDate": epoch(key.created_at),
        "Enabled": key.deletion_at.is_none(),
        "Description": key.description,
        "KeyUsage": "ENCRYPT_DECRYPT",
        "KeyState": if key.deletion_at.is_some() { "PendingDeletion" } else { "Enabled" },
        "Origin": "AWS_KMS",
        "KeyManager": "CUSTOMER",
        "CustomerMasterKeySpec": "SYMMETRIC_DEFAULT",
        "KeySpec": "SYMMETRIC_DEFAULT",
        "EncryptionAlgorithms": ["SYMMETRIC_DEFAULT"],
        "MultiRegion": false,
    });
    if let Some(at) = key.deletion_at {
        meta["DeletionDate"] = json!(epoch(at));
    }
    meta
}

fn alias_missing(alias: &str) -> AwsError {
    error(
        "NotFoundException",
        format!("Alias {} is not found.", alias_arn(alias)),
    )
}

/// The key id a `KeyId` names: the id, its ARN, an alias or an alias ARN.
fn key_id(state: &AwsState, wanted: &str) -> Result<String, AwsError> {
    let alias = wanted
        .split_once(":alias/")
        .map(|(_, name)| format!("alias/{name}"))
        .or_else(|| wanted.starts_with("alias/").then(|| wanted.to_string()));
    if let Some(alias) = alias {
        return state
            .kms_aliases
            .get(&alias)
            .cloned()
            .ok_or_else(|| alias_missing(&alias));
    }
    let id = wanted.rsplit('/').next().unwrap_or(wanted);
    if state.kms_keys.contains_key(id) {
        Ok(id.to_string())
    } else {
        Err(error(
            "NotFoundException",
            format!(
                "Key 'arn:aws:kms:{}:{}:key/{id}' does not exist",
                lab::REGION,
                lab::ACCOUNT_ID
            ),
        ))
    }
}

fn text<'a>(body: &'a Value, field: &str) -> Result<&'a str, AwsError> {
    body[field].as_str().ok_or_else(|| {
        error(
            "ValidationException",
            format!("1 validation error detected: Value null at '{field}' failed to satisfy constraint: Member must not be null"),
        )
    })
}

/// The answer to `TrentService.<operation>`.
pub(crate) fn handle(
    state: &mut AwsState,
    operation: &str,
    body: &Value,
) -> Result<Value, AwsError> {
    match operation {
        "CreateKey" => create_key(state, body),
        "DescribeKey" => describe_key(state, body),
        "ScheduleKeyDeletion" => schedule_key_deletion(state, body),
        "CreateAlias" => create_alias(state, body),
        "DeleteAlias" => delete_alias(state, body),
        "ListAliases" => list_aliases(state, body),
        other => Err(error(
            "UnknownOperationException",
            format!(
                "the lab twin's KMS serves CreateKey, DescribeKey, ScheduleKeyDeletion and the alias calls, not {other}"
            ),
        )),
    }
}

fn create_key(state: &mut AwsState, body: &Value) -> Result<Value, AwsError> {
    let id = state.next_uuid();
    let key = KmsKey {
        id: id.clone(),
        description: body["Description"].as_str().unwrap_or_default().into(),
        created_at: state.now,
        deletion_at: None,
    };
    let answer = json!({"KeyMetadata": metadata(&key)});
    state.kms_keys.insert(id, key);
    Ok(answer)
}

fn describe_key(state: &AwsState, body: &Value) -> Result<Value, AwsError> {
    let id = key_id(state, text(body, "KeyId")?)?;
    Ok(json!({"KeyMetadata": metadata(&state.kms_keys[&id])}))
}

/// The key stays, `PendingDeletion`, for its waiting period; it cannot be scheduled twice.
fn schedule_key_deletion(state: &mut AwsState, body: &Value) -> Result<Value, AwsError> {
    let id = key_id(state, text(body, "KeyId")?)?;
    let days = pending_window_days(body)?;
    let now = state.now;
    let key = state
        .kms_keys
        .get_mut(&id)
        .ok_or_else(|| error("NotFoundException", format!("Key '{id}' does not exist")))?;
    if key.deletion_at.is_some() {
        return Err(error(
            "KMSInvalidStateException",
            format!("{} is pending deletion.", key.arn()),
        ));
    }
    let at = now + DAY * u32::try_from(days).unwrap_or(30);
    key.deletion_at = Some(at);
    Ok(json!({
        "KeyId": key.arn(),
        "DeletionDate": epoch(at),
        "KeyState": "PendingDeletion",
        "PendingWindowInDays": days,
    }))
}

/// `PendingWindowInDays`: 7 to 30, 30 when not given.
fn pending_window_days(body: &Value) -> Result<u64, AwsError> {
    let days = body["PendingWindowInDays"].as_u64().unwrap_or(30);
    if !(7..=30).contains(&days) {
        return Err(error(
            "ValidationException",
            format!(
                "1 validation error detected: Value '{days}' at 'pendingWindowInDays' failed to satisfy constraint: Member must have value less than or equal to 30 and greater than or equal to 7"
            ),
        ));
    }
    Ok(days)
}

/// An alias of the account's own (`alias/NAME`, not `alias/aws/...`) for a key.
fn create_alias(state: &mut AwsState, body: &Value) -> Result<Value, AwsError> {
    let alias = text(body, "AliasName")?.to_string();
    if !alias.starts_with("alias/") || alias.starts_with("alias/aws/") {
        return Err(error(
            "ValidationException",
            format!(
                "Alias must start with the prefix \"alias/\" and may not begin with \"alias/aws/\": {alias}"
            ),
        ));
    }
    if state.kms_aliases.contains_key(&alias) {
        return Err(error(
            "AlreadyExistsException",
            format!(
                "An alias with the name {} already exists",
                alias_arn(&alias)
            ),
        ));
    }
    let id = key_id(state, text(body, "TargetKeyId")?)?;
    state.kms_aliases.insert(alias, id);
    Ok(json!({}))
}

fn delete_alias(state: &mut AwsState, body: &Value) -> Result<Value, AwsError> {
    let alias = text(body, "AliasName")?;
    if state.kms_aliases.remove(alias).is_none() {
        return Err(alias_missing(alias));
    }
    Ok(json!({}))
}

/// Every alias, or those of the key `KeyId` names.
fn list_aliases(state: &AwsState, body: &Value) -> Result<Value, AwsError> {
    let only = body["KeyId"]
        .as_str()
        .map(|k| key_id(state, k))
        .transpose()?;
    let aliases: Vec<Value> = state
        .kms_aliases
        .iter()
        .filter(|(_, id)| only.as_ref().is_none_or(|o| o == *id))
        .map(|(alias, id)| {
            json!({"AliasName": alias, "AliasArn": alias_arn(alias), "TargetKeyId": id})
        })
        .collect();
    Ok(json!({"Aliases": aliases, "Truncated": false}))
}

/// The key of a CreateCluster `encryptionConfig` (Secrets only), which must exist and be
/// enabled, as EKS checks it.
pub(crate) fn secrets_key(state: &AwsState, config: &Value) -> Result<Option<String>, AwsError> {
    let Some(entry) = config.as_array().and_then(|a| a.first()) else {
        return Ok(None);
    };
    // `resources` is deprecated (EKS encrypts all API data); when given it must be Secrets.
    if !entry["resources"].is_null() && entry["resources"] != json!(["secrets"]) {
        return Err(AwsError::invalid_parameter(
            "encryptionConfig.resources must be [\"secrets\"]".to_string(),
        ));
    }
    let arn = entry["provider"]["keyArn"].as_str().unwrap_or_default();
    let id = key_id(state, arn).map_err(|e| AwsError::invalid_parameter(e.message))?;
    let key = &state.kms_keys[&id];
    if key.deletion_at.is_some() {
        return Err(AwsError::invalid_parameter(format!(
            "KMS key {} is pending deletion",
            key.arn()
        )));
    }
    Ok(Some(key.arn()))
}
