//! The protobuf form of the reviews `kubectl auth can-i` sends (client-go posts
//! SelfSubjectAccessReview as `application/vnd.kubernetes.protobuf`, whatever the kubeconfig
//! says): Kubernetes' `k8s\0` envelope (runtime.Unknown) around the review, read into the JSON
//! shape the rest of the twin answers from. Only the fields a review's spec has.

use serde_json::{Value, json};

/// One protobuf field: a length-delimited one's number and bytes (the only kind a review's
/// strings and messages are), or another kind, skipped.
enum Field<'a> {
    Bytes(u64, &'a [u8]),
    Other,
}

fn varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*at)?;
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

fn fields(bytes: &[u8]) -> Option<Vec<Field<'_>>> {
    let mut at = 0;
    let mut out = Vec::new();
    while at < bytes.len() {
        let key = varint(bytes, &mut at)?;
        let (number, wire) = (key >> 3, key & 7);
        match wire {
            0 => {
                varint(bytes, &mut at)?;
                out.push(Field::Other);
            }
            2 => {
                let len = usize::try_from(varint(bytes, &mut at)?).ok()?;
                let end = at.checked_add(len).filter(|e| *e <= bytes.len())?;
                out.push(Field::Bytes(number, &bytes[at..end]));
                at = end;
            }
            1 => {
                at = at.checked_add(8).filter(|e| *e <= bytes.len())?;
                out.push(Field::Other);
            }
            5 => {
                at = at.checked_add(4).filter(|e| *e <= bytes.len())?;
                out.push(Field::Other);
            }
            _ => return None,
        }
    }
    Some(out)
}

fn message(bytes: &[u8], number: u64) -> Option<&[u8]> {
    fields(bytes)?.into_iter().find_map(|f| match f {
        Field::Bytes(n, b) if n == number => Some(b),
        _ => None,
    })
}

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

/// The review in a `k8s\0` protobuf body as JSON, or None when it is not one.
pub fn decode(body: &[u8]) -> Option<Value> {
    let unknown = body.strip_prefix(b"k8s\0")?;
    // runtime.Unknown: typeMeta = 1 (apiVersion = 1, kind = 2), raw = 2.
    let type_meta = strings(message(unknown, 1)?, &[(1, "apiVersion"), (2, "kind")]);
    let raw = message(unknown, 2).unwrap_or_default();
    let mut review =
        json!({"apiVersion": type_meta["apiVersion"], "kind": type_meta["kind"], "metadata": {}});
    // SelfSubjectAccessReview: spec = 2; its spec: resourceAttributes = 1, nonResourceAttributes = 2.
    if let Some(spec) = message(raw, 2) {
        if let Some(resource) = message(spec, 1) {
            review["spec"]["resourceAttributes"] = strings(
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
            review["spec"]["nonResourceAttributes"] = strings(path, &[(1, "path"), (2, "verb")]);
        }
    }
    Some(review)
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
    fn a_protobuf_access_review_reads_as_its_json() {
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
        assert!(
            decode(b"k8s\0\x0a\xff").is_none(),
            "a truncated body is no review"
        );
    }
}
