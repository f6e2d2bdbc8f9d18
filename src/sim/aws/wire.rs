//! Wire helpers: query-string/form decoding and a small XML writer for EC2 and IAM.

use std::collections::BTreeMap;

/// A decoded `application/x-www-form-urlencoded` body (or query string).
pub(crate) fn form(text: &str) -> BTreeMap<String, String> {
    text.split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (
                crate::sim::kube::http::routes::decode(k),
                crate::sim::kube::http::routes::decode(v),
            )
        })
        .collect()
}

/// One member of an indexed list of the query protocol (`IpPermissions.2`), read by its
/// fields: `get("IpProtocol")` is `IpPermissions.2.IpProtocol`.
#[derive(Debug, Clone)]
pub(crate) struct Member<'a> {
    params: &'a BTreeMap<String, String>,
    prefix: String,
}

impl<'a> Member<'a> {
    pub(crate) fn get(&self, field: &str) -> Option<&'a String> {
        self.params.get(&format!("{}.{field}", self.prefix))
    }

    /// The field, or "" when it is not given.
    pub(crate) fn text(&self, field: &str) -> String {
        self.get(field).cloned().unwrap_or_default()
    }

    /// A list inside this member (`IpRanges` of `IpPermissions.2`).
    pub(crate) fn members(&self, list: &str) -> Vec<Member<'a>> {
        members(self.params, &format!("{}.{list}", self.prefix))
    }

    /// The plain values of a list inside this member (`Value.1`, `Value.2` of `Filter.1`).
    pub(crate) fn values(&self, list: &str) -> Vec<String> {
        numbered(self.params, &format!("{}.{list}", self.prefix))
    }
}

/// `Prefix.1.*`, `Prefix.2.*`, ... as members, in order, up to the first number with no field:
/// how EC2 (`Filter.N.Name`, `IpPermissions.N.IpRanges.M.CidrIp`,
/// `TagSpecification.N.Tag.M.Key`) and IAM (`Tags.member.N.Key`) send lists.
pub(crate) fn members<'a>(params: &'a BTreeMap<String, String>, prefix: &str) -> Vec<Member<'a>> {
    (1..)
        .map(|n| format!("{prefix}.{n}"))
        .map_while(|member| {
            let fields = format!("{member}.");
            params
                .range(fields.clone()..)
                .next()
                .is_some_and(|(key, _)| key.starts_with(&fields))
                .then_some(Member {
                    params,
                    prefix: member,
                })
        })
        .collect()
}

/// `Prefix.1`, `Prefix.2`, ... values, in order.
pub(crate) fn numbered(params: &BTreeMap<String, String>, prefix: &str) -> Vec<String> {
    (1..)
        .map_while(|n| params.get(&format!("{prefix}.{n}")).cloned())
        .collect()
}

pub(crate) fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Builds XML by nesting; text is escaped.
#[derive(Default)]
pub(crate) struct Xml {
    out: String,
}

impl Xml {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    pub(crate) fn open(&mut self, tag: &str) -> &mut Self {
        self.out.push_str(&format!("<{tag}>"));
        self
    }

    pub(crate) fn close(&mut self, tag: &str) -> &mut Self {
        self.out.push_str(&format!("</{tag}>"));
        self
    }

    pub(crate) fn leaf(&mut self, tag: &str, text: impl std::fmt::Display) -> &mut Self {
        self.out
            .push_str(&format!("<{tag}>{}</{tag}>", escape(&text.to_string())));
        self
    }

    /// `<tag>...</tag>`, its content written by `content`.
    pub(super) fn element(&mut self, tag: &str, content: impl FnOnce(&mut Self)) -> &mut Self {
        self.open(tag);
        content(self);
        self.close(tag)
    }

    /// `<set><item>...</item>...</set>`, as EC2 writes its lists: each item's content written
    /// by `content`.
    pub(super) fn items<T>(
        &mut self,
        set: &str,
        items: impl IntoIterator<Item = T>,
        mut content: impl FnMut(&mut Self, T),
    ) -> &mut Self {
        self.open(set);
        for item in items {
            self.element("item", |xml| content(xml, item));
        }
        self.close(set)
    }

    pub(crate) fn raw(&mut self, xml: &str) -> &mut Self {
        self.out.push_str(xml);
        self
    }

    pub(crate) fn finish(&mut self) -> String {
        std::mem::take(&mut self.out)
    }
}

/// ISO 8601 for a virtual instant, as the query protocols write times.
pub(crate) fn iso(virtual_time: std::time::Duration) -> String {
    crate::sim::timestamps::rfc3339(virtual_time).replace('Z', ".000Z")
}

/// Epoch seconds (rest-json timestamps).
pub(crate) fn epoch(virtual_time: std::time::Duration) -> f64 {
    crate::sim::timestamps::unix_seconds(virtual_time) as f64
}

#[cfg(test)]
mod member_tests {
    use super::*;

    #[test]
    fn indexed_lists_are_read_member_by_member_to_the_first_gap() {
        let params = form(
            "IpPermissions.1.IpProtocol=tcp&IpPermissions.1.IpRanges.1.CidrIp=10.0.0.0%2F16&IpPermissions.1.IpRanges.2.CidrIp=10.1.0.0%2F16&IpPermissions.2.IpProtocol=-1&IpPermissions.4.IpProtocol=udp&Filter.1.Name=vpc-id&Filter.1.Value.1=vpc-1&Filter.1.Value.2=vpc-2",
        );
        let permissions = members(&params, "IpPermissions");
        assert_eq!(permissions.len(), 2, "stops at the gap before 4");
        assert_eq!(permissions[0].text("IpProtocol"), "tcp");
        let ranges: Vec<String> = permissions[0]
            .members("IpRanges")
            .iter()
            .map(|r| r.text("CidrIp"))
            .collect();
        assert_eq!(ranges, ["10.0.0.0/16", "10.1.0.0/16"]);
        assert!(permissions[1].members("IpRanges").is_empty());
        let filters = members(&params, "Filter");
        assert_eq!(filters[0].values("Value"), ["vpc-1", "vpc-2"]);
        // `IpPermissions.1` does not read `IpPermissions.10.*`'s fields as its own.
        let tenth = form("IpPermissions.10.IpProtocol=tcp");
        assert!(members(&tenth, "IpPermissions").is_empty());
    }
}
