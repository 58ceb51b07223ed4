//! Checking a tool's `structuredContent` against its `outputSchema` (docs/protocol.md,
//! "Tools"): JSON Schema 2020-12 by default, draft-07 (and the other drafts) when the schema says
//! `$schema`; a `$ref` to anything outside the schema is never fetched (the validator is built
//! without any network or file resolver, so such a schema is reported as unusable).

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;

use crate::protocol::Tool;

/// A compiled `outputSchema`, or why it cannot be used.
pub(crate) type Compiled = crate::policy::schema::Compiled;

/// The output schemas of one tool list, compiled once each, on first use: a new list (a new
/// tool-list epoch, after `list_changed`) starts afresh. The list is held, so its address is
/// not reused while it identifies the entries.
#[derive(Default)]
pub(crate) struct OutputSchemas(Mutex<Option<ListSchemas>>);

/// The list the schemas belong to, and each tool's compiled schema once asked for.
struct ListSchemas {
    list: Arc<Vec<Tool>>,
    compiled: Vec<Option<Arc<Compiled>>>,
}

impl std::fmt::Debug for OutputSchemas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OutputSchemas")
    }
}

impl OutputSchemas {
    /// The compiled `outputSchema` of `list[index]`, if it has one.
    pub(crate) fn get(&self, list: &Arc<Vec<Tool>>, index: usize) -> Option<Arc<Compiled>> {
        let schema = list.get(index)?.output_schema.as_ref()?;
        let mut cache = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if !cache.as_ref().is_some_and(|c| Arc::ptr_eq(&c.list, list)) {
            *cache = Some(ListSchemas { list: Arc::clone(list), compiled: vec![None; list.len()] });
        }
        let slot = &mut cache.as_mut().expect("set above").compiled[index];
        Some(Arc::clone(slot.get_or_insert_with(|| Arc::new(compile(schema)))))
    }
}

/// Compiles `schema` (2020-12 unless its `$schema` names another draft; bounded, no
/// resolver, linear-time patterns: `policy::schema`).
pub(crate) fn compile(schema: &Value) -> Compiled {
    crate::policy::schema::compile(schema, "outputSchema")
}

/// Why `instance` does not match the compiled schema, or why the schema cannot be used; `None`
/// when it matches.
pub(crate) fn output_error_compiled(compiled: &Compiled, instance: &Value) -> Option<String> {
    let validator = match compiled {
        Ok(v) => v,
        Err(e) => return Some(e.clone()),
    };
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .take(3)
        .map(|e| format!("{} (at {})", e, e.instance_path()))
        .collect();
    (!errors.is_empty())
        .then(|| format!("structuredContent does not match outputSchema: {}", errors.join("; ")))
}

/// [`output_error_compiled`] of a schema compiled for this one check.
#[cfg(test)]
pub(crate) fn output_error(schema: &Value, instance: &Value) -> Option<String> {
    output_error_compiled(&compile(schema), instance)
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

    #[test]
    fn each_schema_is_compiled_once_per_list() {
        let tool = |name: &str, schema: Option<Value>| -> Tool {
            serde_json::from_value(json!({"name": name, "inputSchema": {"type": "object"},
                                          "outputSchema": schema}))
            .unwrap()
        };
        let schema = json!({"type": "object", "required": ["a"]});
        let list = Arc::new(vec![tool("plain", None), tool("typed", Some(schema.clone()))]);
        let cache = OutputSchemas::default();
        assert!(cache.get(&list, 0).is_none(), "no outputSchema, nothing compiled");
        let first = cache.get(&list, 1).unwrap();
        assert!(Arc::ptr_eq(&first, &cache.get(&list, 1).unwrap()), "compiled once");
        assert!(output_error_compiled(&first, &json!({"a": 1})).is_none());
        // A new list (after list_changed), even with equal content, is compiled afresh.
        let next = Arc::new(vec![tool("plain", None), tool("typed", Some(schema))]);
        assert!(!Arc::ptr_eq(&first, &cache.get(&next, 1).unwrap()));
        assert!(cache.get(&next, 5).is_none());
    }
}
