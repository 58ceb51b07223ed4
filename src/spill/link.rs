//! Turning a scanned answer's placeholders into MCP references.
//!
//! After [`SpillScanner`](super::scan::SpillScanner) streamed the big strings of a `result` to
//! files, the skeleton holds `{"$ringmcp_spill":N}` where they were. [`link_spills`] replaces
//! each with something a caller can use, following where it sits:
//!
//! * the `text` of a text block, the `data` of an image/audio block, or the `text`/`blob` of an
//!   embedded resource in `content` → the whole block becomes a `resource_link` block
//!   (`uri`, `name`, `mimeType`, `size`), as MCP recommends for large outputs;
//! * the `text`/`blob` of a `resources/read` content item → the item keeps its `uri` and
//!   `mimeType`, loses the inline payload, and says where it went in
//!   `_meta["io.ringmcp/spilled"]`;
//! * anywhere else (e.g. a `structuredContent` member) → the string becomes a
//!   `resource_link`-shaped object.
//!
//! Pure: no I/O; the caller supplies each spill's URI.

#![forbid(unsafe_code)]

use serde_json::{Map, Value, json};

use super::scan::{PathSegment, SpillEncoding, SpillInfo};

/// The `_meta` key that marks spilled payloads.
pub const META_KEY: &str = "io.ringmcp/spilled";

/// One spilled string and where it now lives.
#[derive(Debug, Clone)]
pub struct Placed<'a> {
    /// What the scanner found.
    pub info: &'a SpillInfo,
    /// The URI it can be read back from.
    pub uri: String,
}

/// Replaces every placeholder in `result` (the value of the message's `result` member).
/// Spills are handled last-to-first so that array indices of earlier ones stay valid.
pub fn link_spills(result: &mut Value, placed: &[Placed<'_>]) {
    for p in placed.iter().rev() {
        link_one(result, p);
    }
}

fn mime_of(block: &Map<String, Value>, encoding: SpillEncoding) -> String {
    match block.get("mimeType").and_then(Value::as_str) {
        Some(m) => m.to_owned(),
        None if encoding == SpillEncoding::Base64Decoded => "application/octet-stream".into(),
        None => "text/plain".into(),
    }
}

fn link_block(
    uri: &str,
    name: String,
    mime: String,
    info: &SpillInfo,
    original: Option<&Value>,
) -> Value {
    let mut meta = json!({ "encoding": encoding_name(info.encoding), "path": info.pointer() });
    if let Some(original) = original {
        meta["originalUri"] = original.clone();
    }
    json!({
        "type": "resource_link",
        "uri": uri,
        "name": name,
        "mimeType": mime,
        "size": info.len,
        "_meta": { META_KEY: meta },
    })
}

fn encoding_name(e: SpillEncoding) -> &'static str {
    match e {
        SpillEncoding::Utf8Text => "utf-8",
        SpillEncoding::Base64Decoded => "base64-decoded",
    }
}

fn link_one(result: &mut Value, p: &Placed<'_>) {
    use PathSegment::{Index, Key};
    let info = p.info;
    let path = info.path.as_slice();
    let key = |s: &PathSegment, k: &str| matches!(s, Key(x) if x == k);
    // content[i].text | content[i].data | content[i].resource.{text,blob}
    let block_at = match path {
        [Key(c), Index(i), last] if c == "content" && (key(last, "text") || key(last, "data")) => {
            Some(*i)
        }
        [Key(c), Index(i), r, last]
            if c == "content" && key(r, "resource") && (key(last, "text") || key(last, "blob")) =>
        {
            Some(*i)
        }
        _ => None,
    };
    if let Some(i) = block_at
        && let Some(block) = result.get_mut("content").and_then(|c| c.get_mut(i))
        && let Some(obj) = block.as_object()
    {
        let inner = obj.get("resource").and_then(Value::as_object).unwrap_or(obj);
        let mime = mime_of(inner, info.encoding);
        let original = inner.get("uri");
        let kind = obj.get("type").and_then(Value::as_str).unwrap_or("content");
        *block =
            link_block(&p.uri, format!("spilled {kind} #{}", info.index), mime, info, original);
        return;
    }
    // contents[i].text | contents[i].blob (resources/read)
    if let [Key(c), Index(i), last] = path
        && c == "contents"
        && (key(last, "text") || key(last, "blob"))
        && let Some(item) =
            result.get_mut("contents").and_then(|c| c.get_mut(*i)).and_then(Value::as_object_mut)
    {
        let Key(field) = last else { return };
        item.remove(field);
        let meta = json!({ "uri": p.uri, "size": info.len, "field": field,
                            "encoding": encoding_name(info.encoding) });
        let metas = item.entry("_meta").or_insert_with(|| json!({}));
        if let Some(m) = metas.as_object_mut() {
            m.insert(META_KEY.into(), meta);
        }
        return;
    }
    // Anywhere else: the string becomes a link object in place.
    if let Some(slot) = result.pointer_mut(&info.pointer()) {
        let mime = if info.encoding == SpillEncoding::Base64Decoded {
            "application/octet-stream"
        } else {
            "text/plain"
        };
        *slot =
            link_block(&p.uri, format!("spilled value #{}", info.index), mime.into(), info, None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(index: usize, path: Vec<PathSegment>, encoding: SpillEncoding, len: u64) -> SpillInfo {
        SpillInfo { index, path, encoding, len, placeholder: 0..0 }
    }

    fn key(k: &str) -> PathSegment {
        PathSegment::Key(k.into())
    }

    #[test]
    fn content_blocks_become_resource_links() {
        let mut result = json!({"content": [
            {"type": "text", "text": {"$ringmcp_spill": 0}},
            {"type": "image", "mimeType": "image/png", "data": {"$ringmcp_spill": 1}},
            {"type": "resource", "resource": {"uri": "file:///x", "mimeType": "text/csv", "text": {"$ringmcp_spill": 2}}}
        ], "structuredContent": {"dump": {"$ringmcp_spill": 3}}});
        let infos = [
            info(
                0,
                vec![key("content"), PathSegment::Index(0), key("text")],
                SpillEncoding::Utf8Text,
                10,
            ),
            info(
                1,
                vec![key("content"), PathSegment::Index(1), key("data")],
                SpillEncoding::Base64Decoded,
                20,
            ),
            info(
                2,
                vec![key("content"), PathSegment::Index(2), key("resource"), key("text")],
                SpillEncoding::Utf8Text,
                30,
            ),
            info(3, vec![key("structuredContent"), key("dump")], SpillEncoding::Utf8Text, 40),
        ];
        let placed: Vec<Placed<'_>> =
            infos.iter().map(|i| Placed { info: i, uri: format!("u{}", i.index) }).collect();
        link_spills(&mut result, &placed);
        let c = &result["content"];
        assert_eq!(c[0]["type"], "resource_link");
        assert_eq!(
            (c[0]["uri"].as_str(), c[0]["size"].as_u64(), c[0]["mimeType"].as_str()),
            (Some("u0"), Some(10), Some("text/plain"))
        );
        assert_eq!(
            (c[1]["mimeType"].as_str(), c[1]["size"].as_u64()),
            (Some("image/png"), Some(20))
        );
        assert_eq!(c[1]["_meta"][META_KEY]["encoding"], "base64-decoded");
        assert_eq!(
            (c[2]["mimeType"].as_str(), c[2]["_meta"][META_KEY]["originalUri"].as_str()),
            (Some("text/csv"), Some("file:///x"))
        );
        assert_eq!(result["structuredContent"]["dump"]["uri"], "u3");
        // The result still parses as a CallToolResult.
        serde_json::from_value::<crate::protocol::CallToolResult>(result).unwrap();
    }

    #[test]
    fn resource_contents_keep_their_uri_and_say_where_the_payload_went() {
        let mut result = json!({"contents": [{"uri": "file:///big", "mimeType": "text/plain", "text": {"$ringmcp_spill": 0}}]});
        let infos = [info(
            0,
            vec![key("contents"), PathSegment::Index(0), key("text")],
            SpillEncoding::Utf8Text,
            99,
        )];
        link_spills(
            &mut result,
            &[Placed { info: &infos[0], uri: "ringmcp-spill://1-2/0".into() }],
        );
        let item = &result["contents"][0];
        assert!(item.get("text").is_none());
        assert_eq!(item["uri"], "file:///big");
        assert_eq!(item["_meta"][META_KEY]["uri"], "ringmcp-spill://1-2/0");
        assert_eq!(item["_meta"][META_KEY]["size"], 99);
        serde_json::from_value::<crate::protocol::ReadResourceResult>(result).unwrap();
    }
}
