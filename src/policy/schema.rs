//! JSON Schema, compiled safely: a tool's `inputSchema` (the arguments the policy validates) and
//! `outputSchema` (the structured results the client checks). JSON Schema 2020-12 unless
//! `$schema` names another draft (draft-07 and the others are honoured); a `$ref` to anything
//! outside the schema is never fetched (no network or file resolver is built in); `pattern`s
//! run on a linear-time regex engine, so no schema can make validation backtrack
//! catastrophically; a schema too large or too deeply nested is refused before compiling.

use serde_json::Value;

/// The largest schema compiled, in bytes of its JSON text.
pub const MAX_SCHEMA_BYTES: usize = 256 * 1024;
/// The deepest nesting of a schema compiled.
pub const MAX_SCHEMA_DEPTH: usize = 64;
/// The most validation errors reported for one instance.
const MAX_ERRORS: usize = 5;

/// A compiled schema, or why it cannot be used.
pub type Compiled = Result<jsonschema::Validator, String>;

fn depth(v: &Value, limit: usize) -> usize {
    if limit == 0 {
        return 1;
    }
    match v {
        Value::Array(a) => 1 + a.iter().map(|x| depth(x, limit - 1)).max().unwrap_or(0),
        Value::Object(o) => 1 + o.values().map(|x| depth(x, limit - 1)).max().unwrap_or(0),
        _ => 0,
    }
}

/// Compiles `schema` (`what` names it in errors, e.g. "inputSchema").
pub fn compile(schema: &Value, what: &str) -> Compiled {
    let len = serde_json::to_vec(schema).map_or(usize::MAX, |v| v.len());
    if len > MAX_SCHEMA_BYTES {
        return Err(format!(
            "the tool's {what} cannot be used: {len} bytes, more than the {MAX_SCHEMA_BYTES} accepted"
        ));
    }
    if depth(schema, MAX_SCHEMA_DEPTH + 1) > MAX_SCHEMA_DEPTH {
        return Err(format!(
            "the tool's {what} cannot be used: nested deeper than {MAX_SCHEMA_DEPTH} levels"
        ));
    }
    jsonschema::options()
        .with_pattern_options(jsonschema::PatternOptions::regex().size_limit(1 << 20))
        .build(schema)
        .map_err(|e| format!("the tool's {what} cannot be used: {e}"))
}

/// Why `instance` does not match, each error with where (a JSON pointer) and what; `None` when
/// it matches. An unusable schema is reported as such.
pub fn errors(compiled: &Compiled, instance: &Value) -> Option<String> {
    let validator = match compiled {
        Ok(v) => v,
        Err(e) => return Some(e.clone()),
    };
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .take(MAX_ERRORS)
        .map(|e| {
            let at = e.instance_path().to_string();
            if at.is_empty() { e.to_string() } else { format!("{at}: {e}") }
        })
        .collect();
    (!errors.is_empty()).then(|| errors.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn drafts_refs_and_bounds() {
        let s = json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}},
                       "required": ["n"], "additionalProperties": false});
        let c = compile(&s, "inputSchema");
        assert_eq!(errors(&c, &json!({"n": 2})), None);
        let e = errors(&c, &json!({"n": 0})).unwrap();
        assert!(e.starts_with("/n: "), "{e}");
        assert!(errors(&c, &json!({})).is_some());
        assert!(errors(&c, &json!({"n": 1, "x": 1})).is_some());
        let d7 = json!({"$schema": "http://json-schema.org/draft-07/schema#",
                        "items": [{"type": "string"}], "additionalItems": false});
        let c = compile(&d7, "inputSchema");
        assert!(errors(&c, &json!(["a", "b"])).is_some(), "draft-07 tuple items honoured");
        let remote = json!({"$ref": "https://example.invalid/schema.json"});
        assert!(compile(&remote, "inputSchema").is_err(), "never fetched");
        let mut deep = json!({"type": "string"});
        for _ in 0..100 {
            deep = json!({"type": "object", "properties": {"a": deep}});
        }
        assert!(compile(&deep, "inputSchema").unwrap_err().contains("nested deeper"));
        let huge = json!({"enum": vec!["x".repeat(1000); 300]});
        assert!(compile(&huge, "inputSchema").unwrap_err().contains("bytes"));
    }

    /// A pattern that backtracks exponentially on a backtracking engine is linear here.
    #[test]
    fn catastrophic_patterns_do_not_hang() {
        let s = json!({"type": "string", "pattern": "^(a+)+$"});
        let c = compile(&s, "inputSchema");
        let evil = format!("{}!", "a".repeat(50_000));
        assert!(errors(&c, &json!(evil)).is_some());
        let backref = json!({"type": "string", "pattern": "(a)\\1"});
        assert!(compile(&backref, "inputSchema").is_err(), "backreferences need backtracking");
    }
}
