//! Checking a tool's `structuredContent` against its `outputSchema` (MCP-CLIENT.md checklist
//! 38–41): JSON Schema 2020-12 by default, draft-07 (and the other drafts) when the schema says
//! `$schema`; a `$ref` to anything outside the schema is never fetched (the validator is built
//! without any network or file resolver, so such a schema is reported as unusable).

use serde_json::Value;

/// Why `instance` does not match `schema`, or why `schema` cannot be used; `None` when it
/// matches.
pub(crate) fn output_error(schema: &Value, instance: &Value) -> Option<String> {
    let validator = match jsonschema::validator_for(schema) {
        Ok(v) => v,
        Err(e) => return Some(format!("the tool's outputSchema cannot be used: {e}")),
    };
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .take(3)
        .map(|e| format!("{} (at {})", e, e.instance_path()))
        .collect();
    (!errors.is_empty())
        .then(|| format!("structuredContent does not match outputSchema: {}", errors.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn both_dialects_validate_and_bad_schemas_are_reported() {
        let sum = json!({"type": "object", "properties": {"sum": {"type": "number"}},
                         "required": ["sum"]});
        assert_eq!(output_error(&sum, &json!({"sum": 3})), None);
        let e = output_error(&sum, &json!({"sum": "3"})).unwrap();
        assert!(e.contains("sum"), "{e}");
        let draft7 = json!({"$schema": "http://json-schema.org/draft-07/schema#",
                            "type": "object", "required": ["a"]});
        assert_eq!(output_error(&draft7, &json!({"a": 1})), None);
        assert!(output_error(&draft7, &json!({})).is_some());
        // 2020-12 is the default dialect: `$defs` + `$ref` resolve inside the schema.
        let defs = json!({"$defs": {"n": {"type": "integer"}}, "properties": {"x": {"$ref": "#/$defs/n"}}});
        assert_eq!(output_error(&defs, &json!({"x": 1})), None);
        assert!(output_error(&defs, &json!({"x": 1.5})).is_some());
        // Never fetched: a network reference makes the schema unusable, not a request.
        let remote = json!({"properties": {"p": {"$ref": "http://127.0.0.1:9/never.json"}}});
        let e = output_error(&remote, &json!({"p": 1})).unwrap();
        assert!(e.contains("cannot be used"), "{e}");
        let unknown = json!({"$schema": "https://example.com/not-a-dialect", "type": "object"});
        assert!(output_error(&unknown, &json!({})).is_some());
    }
}
