//! Results as people read them: arrays of maps as tables, maps as indented trees, long output
//! trimmed with a note.

use rhai::{Array, Dynamic, Map};

use crate::script::to_json;

/// Lines shown before the rest is trimmed.
pub(super) const MAX_LINES: usize = 60;
const MAX_CELL: usize = 48;

fn cell(value: &Dynamic) -> String {
    let text = if value.is_unit() {
        String::new()
    } else if let Some(array) = value.read_lock::<Array>() {
        format!("[{} items]", array.len())
    } else if let Some(map) = value.read_lock::<Map>() {
        format!("{{{} keys}}", map.len())
    } else {
        value.to_string()
    };
    if text.chars().count() > MAX_CELL {
        let cut: String = text.chars().take(MAX_CELL - 1).collect();
        format!("{cut}…")
    } else {
        text
    }
}

fn table(rows: &[Map]) -> String {
    let mut columns: Vec<String> = Vec::new();
    for row in rows {
        for key in row.keys() {
            if !columns.iter().any(|c| c == key.as_str()) {
                columns.push(key.to_string());
            }
        }
    }
    // Names first, then plain values, then nested ones, as kubectl orders its columns.
    let nested = |column: &String| {
        rows.iter().any(|r| {
            r.get(column.as_str())
                .is_some_and(|v| v.is_map() || v.is_array())
        })
    };
    let rank = |column: &String| match column.as_str() {
        "name" => 0,
        "namespace" => 1,
        _ if nested(column) => 3,
        _ => 2,
    };
    columns.sort_by_key(|c| rank(c));
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            columns
                .iter()
                .map(|c| r.get(c.as_str()).map(cell).unwrap_or_default())
                .collect()
        })
        .collect();
    let widths: Vec<usize> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            cells
                .iter()
                .map(|r| r[i].chars().count())
                .chain([c.len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let render = |values: Vec<String>| -> String {
        values
            .iter()
            .enumerate()
            .map(|(i, v)| format!("{v:<width$}", width = widths[i]))
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_string()
    };
    let mut lines = vec![render(columns.iter().map(|c| c.to_uppercase()).collect())];
    lines.extend(cells.into_iter().map(render));
    lines.join("\n")
}

/// The text shown for a value; `None` for `()`.
pub(super) fn render(value: &Dynamic) -> Option<String> {
    if value.is_unit() {
        return None;
    }
    if let Some(text) = value.read_lock::<rhai::ImmutableString>() {
        return Some(text.to_string());
    }
    if let Some(array) = value.read_lock::<Array>() {
        let maps: Vec<Map> = array
            .iter()
            .filter_map(|v| v.read_lock::<Map>().map(|m| m.clone()))
            .collect();
        if !array.is_empty() && maps.len() == array.len() {
            return Some(table(&maps));
        }
    }
    if value.is_array() || value.is_map() {
        let yaml = serde_saphyr::to_string(&to_json(value)).unwrap_or_default();
        return Some(yaml.trim_end().to_string());
    }
    Some(value.to_string())
}

/// Keeps the first [`MAX_LINES`] lines and says how many were left out.
pub(super) fn trim(text: &str) -> String {
    let total = text.lines().count();
    if total <= MAX_LINES {
        return text.to_string();
    }
    let head: Vec<&str> = text.lines().take(MAX_LINES).collect();
    format!(
        "{}\n… {} more lines (keep the value in a variable and index into it, or print json::to_string(value))",
        head.join("\n"),
        total - MAX_LINES
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::from_json;

    #[test]
    fn arrays_of_maps_are_tables_and_maps_are_trees() {
        let nodes = from_json(
            &serde_json::json!([{"name": "a", "zone": "2a", "labels": {"x": "1"}}, {"name": "b", "zone": "2c"}]),
        );
        assert_eq!(
            render(&nodes).unwrap(),
            "NAME  ZONE  LABELS\na     2a    {1 keys}\nb     2c"
        );
        let map = from_json(&serde_json::json!({"b": [1, 2], "a": "x"}));
        assert_eq!(render(&map).unwrap(), "a: x\nb:\n- 1\n- 2");
        assert_eq!(render(&Dynamic::UNIT), None);
        let long: String = (0..100).map(|i| format!("{i}\n")).collect();
        assert!(trim(&long).ends_with("… 40 more lines (keep the value in a variable and index into it, or print json::to_string(value))"));
    }
}
