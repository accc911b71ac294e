//! Whether a result stays valid against its tool's `outputSchema` when one
//! string in its structured content is replaced by a stub.
//!
//! A capture changes nothing in structured content but string values, each
//! to another string. So the result's validity can change only where some
//! subschema judges that very string: every subschema that applies at its
//! place is found (through `properties`, `items`, `anyOf`, `$ref`, …), and
//! each must judge the stub as it judged the string it replaces. Keywords
//! whose judgement the stub could change in ways not worked out here
//! (`format`, `const` or `enum` over a whole object, a `$ref` outside the
//! schema) make the answer "not known", which the caller takes as "no".
//!
//! This is not a validator: it never says whether the result was valid to
//! begin with, only whether a replacement can change that.

use serde_json::{Map, Value};

/// `Step` is one step of the path from the structured content's top to a
/// string in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    /// A member of an object.
    Key(String),
    /// An element of an array.
    Index(usize),
}

/// `MAX_SCHEMA_DEPTH` is how many subschemas deep (`$ref`s followed
/// included) the search goes; a recursive schema ends there as "not known".
const MAX_SCHEMA_DEPTH: usize = 64;

/// Marks an answer that is not known.
struct Unknown;

/// Whether putting `after` in place of the string `before` at `path` keeps
/// every judgement `schema` makes of it, and so the result as valid (or not)
/// as it was.
pub(crate) fn replacement_keeps_validity(
    schema: &Map<String, Value>,
    path: &[Step],
    before: &str,
    after: &str,
) -> bool {
    let mut found = Vec::new();
    if applying(schema, schema, path, 0, &mut found).is_err() {
        return false;
    }
    found.into_iter().all(
        |subschema| match (judge(subschema, before), judge(subschema, after)) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        },
    )
}

/// Collects into `found` every object subschema of `node` that applies to
/// the value at `path`.
fn applying<'s>(
    root: &'s Map<String, Value>,
    node: &'s Map<String, Value>,
    path: &[Step],
    depth: usize,
    found: &mut Vec<&'s Map<String, Value>>,
) -> Result<(), Unknown> {
    if depth > MAX_SCHEMA_DEPTH {
        return Err(Unknown);
    }
    let visit = |value: &'s Value, path: &[Step], found: &mut Vec<&'s Map<String, Value>>| {
        visit_value(root, value, path, depth + 1, found)
    };
    if node.contains_key("$dynamicRef") || node.contains_key("$recursiveRef") {
        return Err(Unknown);
    }
    if let Some(reference) = node.get("$ref") {
        visit(resolve(root, reference)?, path, found)?;
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(list) = node.get(key) {
            for sub in list.as_array().ok_or(Unknown)? {
                visit(sub, path, found)?;
            }
        }
    }
    for key in ["not", "if", "then", "else"] {
        if let Some(sub) = node.get(key) {
            visit(sub, path, found)?;
        }
    }
    if let Some(Value::Object(dependent)) = node.get("dependentSchemas") {
        for sub in dependent.values() {
            visit(sub, path, found)?;
        }
    }
    let Some((step, rest)) = path.split_first() else {
        found.push(node);
        return Ok(());
    };
    // A keyword that judges a whole object or array holding the string
    // could judge it differently once the string changes.
    if ["const", "enum"].iter().any(|k| node.contains_key(*k))
        || node.get("uniqueItems") == Some(&Value::Bool(true))
    {
        return Err(Unknown);
    }
    match step {
        Step::Key(key) => {
            let mut matched = false;
            if let Some(sub) = node.get("properties").and_then(|p| p.get(key)) {
                matched = true;
                visit(sub, rest, found)?;
            }
            if let Some(Value::Object(patterns)) = node.get("patternProperties") {
                for (pattern, sub) in patterns {
                    let regex = regex::Regex::new(pattern).map_err(|_| Unknown)?;
                    if regex.is_match(key) {
                        matched = true;
                        visit(sub, rest, found)?;
                    }
                }
            }
            if !matched && let Some(sub) = node.get("additionalProperties") {
                visit(sub, rest, found)?;
            }
            if let Some(sub) = node.get("unevaluatedProperties") {
                visit(sub, rest, found)?;
            }
        }
        Step::Index(index) => {
            let prefix = node.get("prefixItems").and_then(Value::as_array);
            // Before 2020-12, an array of `items` is what `prefixItems` is
            // now, and `additionalItems` covers the rest.
            let sub = match (prefix.and_then(|p| p.get(*index)), node.get("items")) {
                (Some(sub), _) => Some(sub),
                (None, Some(Value::Array(items))) => {
                    items.get(*index).or_else(|| node.get("additionalItems"))
                }
                (None, items) => items,
            };
            if let Some(sub) = sub {
                visit(sub, rest, found)?;
            }
            for key in ["contains", "unevaluatedItems"] {
                if let Some(sub) = node.get(key) {
                    visit(sub, rest, found)?;
                }
            }
        }
    }
    Ok(())
}

/// [`applying`] for a subschema, which may also be `true` or `false`.
fn visit_value<'s>(
    root: &'s Map<String, Value>,
    value: &'s Value,
    path: &[Step],
    depth: usize,
    found: &mut Vec<&'s Map<String, Value>>,
) -> Result<(), Unknown> {
    match value {
        Value::Object(sub) => applying(root, sub, path, depth, found),
        // `true` accepts anything and `false` nothing, before and after.
        Value::Bool(_) => Ok(()),
        _ => Err(Unknown),
    }
}

/// The subschema a `$ref` names, when it points into the schema itself
/// (`#`, `#/$defs/…`).
fn resolve<'s>(root: &'s Map<String, Value>, reference: &Value) -> Result<&'s Value, Unknown> {
    let pointer = reference
        .as_str()
        .and_then(|r| r.strip_prefix('#'))
        .ok_or(Unknown)?;
    if pointer.is_empty() {
        return Err(Unknown);
    }
    let mut at: Option<&Value> = None;
    for token in pointer.strip_prefix('/').ok_or(Unknown)?.split('/') {
        let token = token.replace("~1", "/").replace("~0", "~");
        let next = match at {
            None => root.get(&token),
            Some(Value::Object(map)) => map.get(&token),
            Some(Value::Array(list)) => token.parse::<usize>().ok().and_then(|i| list.get(i)),
            Some(_) => None,
        };
        at = Some(next.ok_or(Unknown)?);
    }
    at.ok_or(Unknown)
}

/// How one subschema's own keywords judge a string.
fn judge(schema: &Map<String, Value>, text: &str) -> Result<bool, Unknown> {
    if schema.contains_key("format") {
        return Err(Unknown);
    }
    if let Some(kind) = schema.get("type") {
        let string_allowed = match kind {
            Value::String(kind) => kind == "string",
            Value::Array(kinds) => kinds.iter().any(|k| k == "string"),
            _ => return Err(Unknown),
        };
        if !string_allowed {
            return Ok(false);
        }
    }
    let chars = text.chars().count() as u64;
    if let Some(least) = schema.get("minLength")
        && chars < least.as_u64().ok_or(Unknown)?
    {
        return Ok(false);
    }
    if let Some(most) = schema.get("maxLength")
        && chars > most.as_u64().ok_or(Unknown)?
    {
        return Ok(false);
    }
    if let Some(pattern) = schema.get("pattern") {
        let regex = regex::Regex::new(pattern.as_str().ok_or(Unknown)?).map_err(|_| Unknown)?;
        if !regex.is_match(text) {
            return Ok(false);
        }
    }
    if let Some(constant) = schema.get("const")
        && constant.as_str() != Some(text)
    {
        return Ok(false);
    }
    if let Some(values) = schema.get("enum")
        && !values
            .as_array()
            .ok_or(Unknown)?
            .iter()
            .any(|v| v.as_str() == Some(text))
    {
        return Ok(false);
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn path(steps: &[&str]) -> Vec<Step> {
        steps
            .iter()
            .map(|s| match s.parse::<usize>() {
                Ok(i) => Step::Index(i),
                Err(_) => Step::Key((*s).to_owned()),
            })
            .collect()
    }

    #[test]
    fn a_stub_keeps_a_schema_valid_only_where_nothing_judges_the_string_differently() {
        const BEFORE: &str = "iVBORw0KGgoAAAANSUhEUgAA";
        const STUB: &str = "[file: volume:inbox:a.png · image/png]";
        // The shape server-filesystem declares for read_media_file.
        let media = json!({"type": "object", "properties": {"content": {"type": "array", "items": {
        "anyOf": [
            {"type": "object", "properties": {"type": {"type": "string", "enum": ["image", "audio"]},
             "data": {"type": "string"}, "mimeType": {"type": "string"}},
             "required": ["type", "data", "mimeType"], "additionalProperties": false},
            {"type": "object", "properties": {"type": {"const": "resource"}, "resource": {
                "type": "object", "properties": {"uri": {"type": "string"}, "blob": {"type": "string"}}}}}
        ]}}}});
        let with_defs = json!({"type": "object", "properties": {"file": {"$ref": "#/$defs/File"}},
            "$defs": {"File": {"type": "object", "properties": {"data": {"type": "string", "maxLength": 30}}}}});
        let patterned = json!({"type": "object", "properties": {"data": {"type": "string", "pattern": "^[A-Za-z0-9+/=]+$"}}});
        let formatted = json!({"properties": {"data": {"type": "string", "format": "byte"}}});
        let remote = json!({"properties": {"data": {"$ref": "https://example.org/s.json"}}});
        let whole_const = json!({"properties": {"file": {"const": {"data": BEFORE}}}});
        let loose = json!({"type": "object", "additionalProperties": {"type": "string"}});
        let cases: [(&str, Value, &[&str], bool); 9] = [
            ("image data", media.clone(), &["content", "0", "data"], true),
            (
                "resource blob",
                media,
                &["content", "1", "resource", "blob"],
                true,
            ),
            (
                "a $ref with a maxLength",
                with_defs.clone(),
                &["file", "data"],
                false,
            ),
            (
                "a $ref, the string unjudged",
                with_defs,
                &["file", "name"],
                true,
            ),
            ("a base64 pattern", patterned, &["data"], false),
            ("a format", formatted, &["data"], false),
            ("a $ref outside", remote, &["data"], false),
            (
                "a const over the object",
                whole_const,
                &["file", "data"],
                false,
            ),
            ("additionalProperties", loose, &["anything"], true),
        ];
        for (case, schema, steps, expected) in cases {
            let schema = schema.as_object().expect("an object").clone();
            assert_eq!(
                replacement_keeps_validity(&schema, &path(steps), BEFORE, STUB),
                expected,
                "{case}"
            );
        }
    }

    #[test]
    fn a_recursive_schema_ends_as_not_known() {
        let schema = json!({"$defs": {"Node": {"properties": {"next": {"$ref": "#/$defs/Node"}}}},
            "$ref": "#/$defs/Node"});
        let schema = schema.as_object().expect("an object").clone();
        let deep: Vec<Step> = (0..200).map(|_| Step::Key("next".to_owned())).collect();
        assert!(!replacement_keeps_validity(&schema, &deep, "a", "b"));
        assert!(replacement_keeps_validity(
            &schema,
            &path(&["next", "next"]),
            "a",
            "b"
        ));
    }
}
