//! The MCP result types a host reads: what `initialize`, `tools/*`, `resources/*` and
//! `prompts/*` return. Unknown members are kept in `extra` maps (schemas stay byte-exact, new
//! fields survive), unknown content types degrade to [`Content::Unknown`] instead of failing
//! the whole result.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `Implementation`: a client's or server's name and version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Version string.
    pub version: String,
    /// Human-facing name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Other members (description, icons, websiteUrl, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Implementation {
    /// An implementation with just a name and a version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Implementation {
            name: name.into(),
            version: version.into(),
            title: None,
            extra: Map::new(),
        }
    }
}

/// What the server said about itself in its `InitializeResult`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// The version the server chose.
    pub protocol_version: String,
    /// The server's capabilities, as sent.
    #[serde(default)]
    pub capabilities: Value,
    /// The server's name and version.
    pub server_info: Implementation,
    /// Usage hints for the model, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
}

/// A filesystem root the host exposes to servers (`roots/list`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Root {
    /// A `file://` URI.
    pub uri: String,
    /// Optional display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// A tool definition from `tools/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// Programmatic name, used in `tools/call`.
    pub name: String,
    /// Human-facing name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the arguments, exactly as received.
    pub input_schema: Value,
    /// JSON Schema of `structuredContent`, if declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Behaviour hints (untrusted unless the server is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// Other members (icons, execution, _meta, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A content block of a tool result or prompt message.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Content {
    /// `{type:"text", text}`.
    Text {
        /// The text.
        text: String,
        /// The block's other members as received (annotations, _meta, ...): everything but
        /// `type` and `text`, which serialising writes back.
        raw: Map<String, Value>,
    },
    /// Any other block (image, audio, resource_link, resource, or a type from a newer
    /// revision), kept as received.
    Other {
        /// The block's `type`.
        kind: String,
        /// The whole block.
        raw: Map<String, Value>,
    },
}

impl Content {
    /// The block's `type` member.
    pub fn kind(&self) -> &str {
        match self {
            Content::Text { .. } => "text",
            Content::Other { kind, .. } => kind,
        }
    }

    /// The text, for a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Content::Text { text, .. } => Some(text),
            Content::Other { .. } => None,
        }
    }

    /// The block as one map (what `Serialize` writes, without building it).
    #[cfg(test)]
    fn to_map(&self) -> Map<String, Value> {
        match self {
            Content::Text { text, raw } => {
                let mut m = raw.clone();
                m.insert("type".into(), Value::String("text".into()));
                m.insert("text".into(), Value::String(text.clone()));
                m
            }
            Content::Other { raw, .. } => raw.clone(),
        }
    }
}

impl Serialize for Content {
    /// As [`Content::to_map`] would give it (keys in order), without copying the block.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let (text, raw) = match self {
            Content::Text { text, raw } => (text, raw),
            Content::Other { raw, .. } => return raw.serialize(s),
        };
        // `raw` is sorted; "text" and "type" go where they sort, whether or not it has them.
        let own = [("text", Value::String(String::new())), ("type", Value::from("text"))];
        let extra = raw.keys().filter(|k| *k != "text" && *k != "type").count();
        let mut map = s.serialize_map(Some(extra + 2))?;
        let mut rest = raw.iter().filter(|(k, _)| *k != "text" && *k != "type").peekable();
        for (key, value) in own {
            while let Some((k, v)) = rest.next_if(|(k, _)| k.as_str() < key) {
                map.serialize_entry(k, v)?;
            }
            match key {
                "text" => map.serialize_entry(key, text)?,
                _ => map.serialize_entry(key, &value)?,
            }
        }
        for (k, v) in rest {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// Read member by member: a plain text block builds no map at all.
impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(ContentVisitor)
    }
}

struct ContentVisitor;

impl<'de> serde::de::Visitor<'de> for ContentVisitor {
    type Value = Content;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a content block (an object)")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Content, A::Error> {
        let (mut kind, mut text, mut raw) = (None, None, Map::new());
        // A repeated member: the last one counts, as in a map.
        while let Some(key) = map.next_key_seed(Member(&["type", "text"]))? {
            match key {
                Ok(0) => kind = Some(map.next_value::<Value>()?),
                Ok(_) => text = Some(map.next_value::<Value>()?),
                Err(name) => {
                    raw.insert(name, map.next_value()?);
                }
            }
        }
        if let (Some(Value::String(k)), Some(Value::String(_))) = (&kind, &text)
            && k == "text"
        {
            let Some(Value::String(text)) = text else { unreachable!("matched above") };
            return Ok(Content::Text { text, raw });
        }
        let name = match &kind {
            Some(Value::String(k)) => k.clone(),
            _ => String::new(),
        };
        raw.extend(kind.map(|k| ("type".to_owned(), k)));
        raw.extend(text.map(|t| ("text".to_owned(), t)));
        Ok(Content::Other { kind: name, raw })
    }
}

/// A member name read against the names a visitor knows: `Ok(index)` for one of them, the
/// name itself for any other (the only names allocated).
struct Member(&'static [&'static str]);

impl<'de> serde::de::DeserializeSeed<'de> for Member {
    type Value = Result<usize, String>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_identifier(self)
    }
}

impl serde::de::Visitor<'_> for Member {
    type Value = Result<usize, String>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a member name")
    }

    fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<Self::Value, E> {
        Ok(self.0.iter().position(|known| *known == name).ok_or_else(|| name.to_owned()))
    }
}

/// The result of `tools/call`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// Unstructured content blocks.
    #[serde(default)]
    pub content: Vec<Content>,
    /// Structured output (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// True when the tool ran and failed (absent means false).
    #[serde(default)]
    pub is_error: bool,
    /// Other members (_meta, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
    /// Set by the host when `structured_content` does not match the tool's `outputSchema`
    /// (or that schema cannot be used): what is wrong. The result is delivered all the same;
    /// its text content remains the fallback (docs/protocol.md, "Tools").
    #[serde(skip)]
    pub output_schema_error: Option<String>,
}

/// By hand rather than derived: a derived `flatten` buffers every member of every result
/// before sorting them out (the largest part of a small call's parse).
impl<'de> Deserialize<'de> for CallToolResult {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(ResultVisitor)
    }
}

struct ResultVisitor;

impl<'de> serde::de::Visitor<'de> for ResultVisitor {
    type Value = CallToolResult;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a tools/call result object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        use serde::de::Error;
        let (mut content, mut structured, mut is_error) = (None, None, None);
        let mut extra = Map::new();
        while let Some(key) =
            map.next_key_seed(Member(&["content", "structuredContent", "isError"]))?
        {
            match key {
                Ok(0) if content.is_some() => return Err(A::Error::duplicate_field("content")),
                Ok(0) => content = Some(map.next_value()?),
                Ok(1) if structured.is_some() => {
                    return Err(A::Error::duplicate_field("structuredContent"));
                }
                Ok(1) => structured = Some(map.next_value::<Option<Value>>()?),
                Ok(_) if is_error.is_some() => return Err(A::Error::duplicate_field("isError")),
                Ok(_) => is_error = Some(map.next_value()?),
                Err(name) => {
                    extra.insert(name, map.next_value()?);
                }
            }
        }
        Ok(CallToolResult {
            content: content.unwrap_or_default(),
            structured_content: structured.flatten(),
            is_error: is_error.unwrap_or(false),
            extra,
            output_schema_error: None,
        })
    }
}

impl CallToolResult {
    /// All text blocks joined with newlines.
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self.content.iter().filter_map(Content::as_text).collect();
        texts.join("\n")
    }
}

/// A resource from `resources/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    /// The resource's URI.
    pub uri: String,
    /// Programmatic name.
    pub name: String,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Other members (title, size, annotations, icons, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One item of a `resources/read` result: text or base64 blob.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceContents {
    /// The URI these contents belong to.
    pub uri: String,
    /// MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Text contents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Base64 contents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
    /// Other members.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The result of `resources/read`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadResourceResult {
    /// One or more content items.
    pub contents: Vec<ResourceContents>,
}

/// A prompt from `prompts/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prompt {
    /// Programmatic name.
    pub name: String,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Declared arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<Value>,
    /// Other members.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One message of a `prompts/get` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptMessage {
    /// `user` or `assistant`.
    pub role: String,
    /// One content block.
    pub content: Content,
}

/// The result of `prompts/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GetPromptResult {
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_content_and_members_survive() {
        let v = json!({
            "content": [
                {"type": "text", "text": "hi", "annotations": {"priority": 1}},
                {"type": "hologram", "data": 1}
            ],
            "isError": true,
            "_meta": {"x": 1}
        });
        let r: CallToolResult = serde_json::from_value(v.clone()).unwrap();
        assert!(r.is_error);
        assert_eq!(r.text(), "hi");
        assert_eq!(r.content[1].kind(), "hologram");
        assert_eq!(serde_json::to_value(&r).unwrap(), v);
    }

    /// The hand-written parse and serialisation agree with the map forms, byte for byte, for
    /// keys sorting before, between and after "text" and "type", and for blocks built in code.
    #[test]
    fn results_parse_and_serialise_as_their_maps() {
        let v = json!({
            "content": [
                {"type": "text", "text": "a\"b", "annotations": {"p": 1}, "textual": 2, "z": null},
                {"text": "no type member", "type": "text"},
                {"type": "image", "data": "AA==", "mimeType": "image/png"}
            ],
            "structuredContent": {"n": 1},
            "_meta": {"k": "v"},
            "zz": [1]
        });
        let text = v.to_string();
        let r: CallToolResult = serde_json::from_str(&text).unwrap();
        assert_eq!(r.structured_content, Some(json!({"n": 1})));
        assert_eq!(r.extra.len(), 2);
        let mut expected = v.clone();
        expected["isError"] = json!(false);
        assert_eq!(serde_json::to_value(&r).unwrap(), expected);
        for block in &r.content {
            let m = serde_json::to_string(&block.to_map()).unwrap();
            assert_eq!(serde_json::to_string(block).unwrap(), m);
        }
        // A text block keeps only its other members; anything not a text block is kept whole.
        let Content::Text { raw, .. } = &r.content[0] else { panic!("{:?}", r.content[0]) };
        assert_eq!(raw.keys().collect::<Vec<_>>(), ["annotations", "textual", "z"]);
        for (odd, kind) in [
            (json!({"type": "text", "text": 3}), "text"),
            (json!({"text": "no type"}), ""),
            (json!({"type": 7, "text": "x"}), ""),
        ] {
            let c: Content = serde_json::from_value(odd.clone()).unwrap();
            assert_eq!((c.kind(), c.as_text()), (kind, None), "{odd}");
            assert_eq!(serde_json::to_value(&c).unwrap(), odd);
        }
        let twice: Content =
            serde_json::from_str(r#"{"type":"text","text":"a","text":"b"}"#).unwrap();
        assert_eq!(twice.as_text(), Some("b"), "the last of a repeated member counts");
        let built = Content::Text { text: "x".into(), raw: Map::new() };
        assert_eq!(serde_json::to_string(&built).unwrap(), r#"{"text":"x","type":"text"}"#);
        // null structuredContent is none; duplicates and wrong types are errors, as derived.
        let r: CallToolResult = serde_json::from_str(r#"{"structuredContent":null}"#).unwrap();
        assert_eq!((r.structured_content, r.content.len(), r.is_error), (None, 0, false));
        for bad in
            [r#"{"content":[],"content":[]}"#, r#"{"isError":null}"#, r#"{"content":{}}"#, "[]"]
        {
            assert!(serde_json::from_str::<CallToolResult>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn tool_schema_is_kept_exactly() {
        let v = json!({"name": "t", "inputSchema": {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object", "$defs": {"a": {"type": "string"}}, "additionalProperties": false},
            "icons": [{"src": "data:,"}]});
        let t: Tool = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(serde_json::to_value(&t).unwrap(), v);
    }
}
