//! One reading of a request's path for both of the twin's ports: the router and every check
//! (the admin endpoints' token above all) look at the same normalised path, so `//twin/...`
//! cannot reach a route that the check did not recognise.

/// The path with empty segments dropped (`//twin//faults/` is `/twin/faults`), as the
/// Kubernetes router has always read it; `/` for an empty path.
pub(crate) fn normalized(raw: &str) -> String {
    let segments: Vec<&str> = raw.split('/').filter(|s| !s.is_empty()).collect();
    format!("/{}", segments.join("/"))
}

/// Whether `path` (normalised) is one of the twin's own control endpoints: the admin token's.
pub(crate) fn is_admin_endpoint(path: &str) -> bool {
    path == "/twin" || path.starts_with("/twin/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubled_and_trailing_slashes_read_as_the_router_reads_them() {
        assert_eq!(normalized("//twin/faults"), "/twin/faults");
        assert_eq!(normalized("/twin//advance/"), "/twin/advance");
        assert_eq!(normalized(""), "/");
        assert_eq!(normalized("/api/v1/pods"), "/api/v1/pods");
        for raw in ["//twin/faults", "///twin/audit", "/twin", "//twin//"] {
            assert!(is_admin_endpoint(&normalized(raw)), "{raw}");
        }
        assert!(!is_admin_endpoint(&normalized("/twinkle")));
    }
}
