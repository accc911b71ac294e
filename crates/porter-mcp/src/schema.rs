//! Tool schemas in standard JSON Schema.
//!
//! schemars marks Rust's integer and float types with formats of its own
//! (`uint64`, `uint32`, `int64`, `uint`, `double`, …). JSON Schema 2020-12
//! defines none of them, and clients that validate with a standard
//! validator (the TypeScript SDK's) warn about each one on every listing.
//! [`standard_numbers`] says the same thing in standard keywords: the
//! format goes, and what it meant stays as `minimum`/`maximum`.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool};
use serde_json::Value;

/// `NUMBER_FORMATS` are schemars' numeric formats with the bounds each
/// implies (`None`: no bound worth writing, as for 64-bit values, whose
/// limits lie beyond what JSON numbers hold exactly).
const NUMBER_FORMATS: &[(&str, Option<i64>, Option<i64>)] = &[
    ("int8", Some(i8::MIN as i64), Some(i8::MAX as i64)),
    ("int16", Some(i16::MIN as i64), Some(i16::MAX as i64)),
    ("int32", Some(i32::MIN as i64), Some(i32::MAX as i64)),
    ("int64", None, None),
    ("int", None, None),
    ("uint8", Some(0), Some(u8::MAX as i64)),
    ("uint16", Some(0), Some(u16::MAX as i64)),
    ("uint32", Some(0), Some(u32::MAX as i64)),
    ("uint64", Some(0), None),
    ("uint", Some(0), None),
    ("float", None, None),
    ("double", None, None),
];

/// `MAX_DEPTH` bounds the walk: a tool schema is a few levels deep, and an
/// upstream's could be anything.
const MAX_DEPTH: usize = 64;

/// Rewrites every numeric `format` in `schema` (at any depth) as standard
/// keywords: the format is dropped, and the bounds it implied are written
/// as `minimum` and `maximum` unless the schema already sets them.
pub fn standard_numbers(schema: &mut JsonObject) {
    rewrite(schema, 0);
}

/// The input schema of a tool whose arguments are `T`, as rmcp generates
/// it, in standard JSON Schema ([`standard_numbers`]).
#[must_use]
pub fn schema_for<T: schemars::JsonSchema + std::any::Any>() -> Arc<JsonObject> {
    let mut schema = rmcp::handler::server::tool::schema_for_type::<T>();
    standard_numbers(Arc::make_mut(&mut schema));
    schema
}

/// A tool with [`standard_numbers`] applied to its input and output schemas.
#[must_use]
pub fn standard_tool(mut tool: Tool) -> Tool {
    standard_numbers(Arc::make_mut(&mut tool.input_schema));
    if let Some(output) = tool.output_schema.as_mut() {
        standard_numbers(Arc::make_mut(output));
    }
    tool
}

fn rewrite(object: &mut JsonObject, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    let bounds = object
        .get("format")
        .and_then(Value::as_str)
        .and_then(|format| NUMBER_FORMATS.iter().find(|(name, ..)| *name == format))
        .map(|(_, low, high)| (*low, *high));
    if let Some((low, high)) = bounds {
        object.remove("format");
        if let Some(low) = low {
            object.entry("minimum").or_insert(Value::from(low));
        }
        if let Some(high) = high {
            object.entry("maximum").or_insert(Value::from(high));
        }
    }
    for value in object.values_mut() {
        walk(value, depth + 1);
    }
}

fn walk(value: &mut Value, depth: usize) {
    match value {
        Value::Object(inner) => rewrite(inner, depth),
        Value::Array(items) => {
            for item in items {
                walk(item, depth + 1);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn standard(value: Value) -> Value {
        let Value::Object(mut object) = value else {
            panic!("an object")
        };
        standard_numbers(&mut object);
        Value::Object(object)
    }

    #[test]
    fn integer_formats_become_bounds_at_every_depth() {
        let schema = json!({
            "type": "object",
            "properties": {
                "limit": {"type": "integer", "format": "uint32", "minimum": 0},
                "offset": {"type": ["integer", "null"], "format": "uint64", "minimum": 0},
                "page": {"type": "integer", "format": "uint"},
                "delta": {"type": "integer", "format": "int64"},
                "items": {"type": "array", "items": {"type": "integer", "format": "uint8"}},
                "when": {"type": "string", "format": "date-time"}
            },
            "$defs": {"Inner": {"anyOf": [{"type": "number", "format": "double"}, {"type": "null"}]}}
        });
        let out = standard(schema);
        let p = &out["properties"];
        assert_eq!(
            p["limit"],
            json!({"type": "integer", "minimum": 0, "maximum": 4_294_967_295_i64})
        );
        assert_eq!(
            p["offset"],
            json!({"type": ["integer", "null"], "minimum": 0})
        );
        assert_eq!(p["page"], json!({"type": "integer", "minimum": 0}));
        assert_eq!(p["delta"], json!({"type": "integer"}));
        assert_eq!(
            p["items"]["items"],
            json!({"type": "integer", "minimum": 0, "maximum": 255})
        );
        // A standard format is the schema's own business and stays.
        assert_eq!(p["when"], json!({"type": "string", "format": "date-time"}));
        assert_eq!(out["$defs"]["Inner"]["anyOf"][0], json!({"type": "number"}));
    }

    #[test]
    fn a_bound_the_schema_sets_itself_is_kept() {
        let out =
            standard(json!({"type": "integer", "format": "uint32", "minimum": 1, "maximum": 200}));
        assert_eq!(
            out,
            json!({"type": "integer", "minimum": 1, "maximum": 200})
        );
    }
}
