//! The protobuf bodies kubectl sends for reviews and token requests (client-go posts
//! SelfSubjectAccessReview, SelfSubjectRulesReview, SubjectAccessReview and TokenRequest as
//! `application/vnd.kubernetes.protobuf`, whatever the kubeconfig says): Kubernetes' `k8s\0`
//! envelope (runtime.Unknown) around the object, read into the JSON shape the rest of the twin
//! answers from. Only the fields of their specs.

use serde_json::{Value, json};

use super::wire::{Field, fields, message};

/// The string fields of a message, by name.
fn strings(bytes: &[u8], names: &[(u64, &str)]) -> Value {
    let mut out = json!({});
    for field in fields(bytes).unwrap_or_default() {
        if let Field::Bytes(n, b) = field
            && let Some((_, name)) = names.iter().find(|(number, _)| *number == n)
        {
            out[*name] = json!(String::from_utf8_lossy(b));
        }
    }
    out
}

/// Every string of a repeated string field.
fn repeated(bytes: &[u8], number: u64) -> Vec<Value> {
    fields(bytes)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|f| match f {
            Field::Bytes(n, b) if n == number => Some(json!(String::from_utf8_lossy(b))),
            _ => None,
        })
        .collect()
}

fn integer(bytes: &[u8], number: u64) -> Option<i64> {
    fields(bytes)?.into_iter().find_map(|f| match f {
        Field::Varint(n, v) if n == number => i64::try_from(v).ok(),
        _ => None,
    })
}

/// ResourceAttributes = 1 and NonResourceAttributes = 2 of an access review's spec.
fn access_attributes(spec: &[u8], into: &mut Value) {
    if let Some(resource) = message(spec, 1) {
        into["resourceAttributes"] = strings(
            resource,
            &[
                (1, "namespace"),
                (2, "verb"),
                (3, "group"),
                (4, "version"),
                (5, "resource"),
                (6, "subresource"),
                (7, "name"),
            ],
        );
    }
    if let Some(path) = message(spec, 2) {
        into["nonResourceAttributes"] = strings(path, &[(1, "path"), (2, "verb")]);
    }
}

/// The object in a `k8s\0` protobuf body as JSON, or None when it is not one.
pub(crate) fn decode(body: &[u8]) -> Option<Value> {
    let unknown = body.strip_prefix(b"k8s\0")?;
    // runtime.Unknown: typeMeta = 1 (apiVersion = 1, kind = 2), raw = 2.
    let type_meta = strings(message(unknown, 1)?, &[(1, "apiVersion"), (2, "kind")]);
    let raw = message(unknown, 2).unwrap_or_default();
    // Every one of these objects: metadata = 1 (name = 1, namespace = 3), spec = 2.
    let metadata = strings(
        message(raw, 1).unwrap_or_default(),
        &[(1, "name"), (3, "namespace")],
    );
    let mut object = json!({"apiVersion": type_meta["apiVersion"], "kind": type_meta["kind"], "metadata": metadata, "spec": {}});
    let spec = message(raw, 2).unwrap_or_default();
    match type_meta["kind"].as_str().unwrap_or_default() {
        "SelfSubjectAccessReview" => access_attributes(spec, &mut object["spec"]),
        // Who am I? asks nothing more.
        "SelfSubjectReview" => {}
        "SubjectAccessReview" | "LocalSubjectAccessReview" => {
            access_attributes(spec, &mut object["spec"]);
            let who = strings(spec, &[(3, "user"), (6, "uid")]);
            for (key, value) in who.as_object().into_iter().flatten() {
                object["spec"][key] = value.clone();
            }
            object["spec"]["groups"] = json!(repeated(spec, 4));
        }
        // SelfSubjectRulesReviewSpec: namespace = 1.
        "SelfSubjectRulesReview" => object["spec"] = strings(spec, &[(1, "namespace")]),
        // TokenRequestSpec: audiences = 1, expirationSeconds = 4.
        "TokenRequest" => {
            object["spec"]["audiences"] = json!(repeated(spec, 1));
            if let Some(seconds) = integer(spec, 4) {
                object["spec"]["expirationSeconds"] = json!(seconds);
            }
        }
        _ => return None,
    }
    Some(object)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(number: u8, bytes: &[u8]) -> Vec<u8> {
        let mut out = vec![(number << 3) | 2, u8::try_from(bytes.len()).unwrap_or(0)];
        out.extend_from_slice(bytes);
        out
    }

    #[test]
    fn protobuf_reviews_and_token_requests_read_as_their_json() {
        let attributes = [
            field(1, b"kube-system"),
            field(2, b"list"),
            field(5, b"pods"),
        ]
        .concat();
        let raw = field(2, &field(1, &attributes));
        let type_meta = [
            field(1, b"authorization.k8s.io/v1"),
            field(2, b"SelfSubjectAccessReview"),
        ]
        .concat();
        let body = [b"k8s\0".to_vec(), field(1, &type_meta), field(2, &raw)].concat();
        let review = decode(&body).expect("a review");
        assert_eq!(review["kind"], "SelfSubjectAccessReview");
        assert_eq!(
            review["spec"]["resourceAttributes"],
            json!({"namespace": "kube-system", "verb": "list", "resource": "pods"})
        );
        assert!(decode(b"{}").is_none());
        let spec = [
            field(1, b"https://kubernetes.default.svc"),
            vec![4 << 3, 0x90, 0x1c],
        ]
        .concat();
        let type_meta = [
            field(1, b"authentication.k8s.io/v1"),
            field(2, b"TokenRequest"),
        ]
        .concat();
        let body = [
            b"k8s\0".to_vec(),
            field(1, &type_meta),
            field(2, &field(2, &spec)),
        ]
        .concat();
        let request = decode(&body).expect("a token request");
        assert_eq!(
            request["spec"],
            json!({"audiences": ["https://kubernetes.default.svc"], "expirationSeconds": 3600})
        );
        assert!(
            decode(b"k8s\0\x0a\xff").is_none(),
            "a truncated body is no review"
        );
    }
}
