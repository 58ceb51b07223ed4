//! How the reference server writes what it sends: JSON-RPC lines, tool results, and the
//! streamed `blob` and export texts (a leaf: the handler and the tools both write with it).

use std::borrow::Cow;
use std::io::{self, Write};

use ringmcp::jsonrpc::{self, ErrorObject, Id, codes};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// The repeating pattern of the `blob` tool's text: byte `i` of the text is
/// `BLOB_PATTERN[i % 36]` (see [`blob_byte`]). Plain ASCII letters and digits, so the text needs
/// no JSON escaping and can be streamed as is.
pub(crate) const BLOB_PATTERN: &[u8; 36] = b"abcdefghijklmnopqrstuvwxyz0123456789";

/// Byte `i` of any `blob` answer's text: `b"abcdefghijklmnopqrstuvwxyz0123456789"[i % 36]`.
/// Tests outside this binary recompute it from that formula.
pub(crate) const fn blob_byte(i: usize) -> u8 {
    BLOB_PATTERN[i % BLOB_PATTERN.len()]
}

/// The `blob` text is written in pieces of this size: a multiple of the pattern's length, so
/// every piece starts at pattern index 0 and the same static buffer serves them all.
const PIECE: usize = 36 * 1820;
const _: () = assert!(PIECE.is_multiple_of(BLOB_PATTERN.len()) && PIECE <= 64 * 1024);

static BLOB_PIECE: [u8; PIECE] = {
    let mut piece = [0; PIECE];
    let mut i = 0;
    while i < PIECE {
        piece[i] = blob_byte(i);
        i += 1;
    }
    piece
};

/// A tool result made of one text content.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolResult<'a> {
    content: [TextContent<'a>; 1],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) structured_content: Option<Value>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    is_error: bool,
}

#[derive(Debug, Serialize)]
struct TextContent<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: Cow<'a, str>,
}

/// `{content:[{type:"text", text}], isError?}`.
pub(crate) fn text_result<'a>(text: impl Into<Cow<'a, str>>, is_error: bool) -> ToolResult<'a> {
    let text = text.into();
    ToolResult { content: [TextContent { kind: "text", text }], structured_content: None, is_error }
}

/// Writes a `blob` answer straight to `out`: the JSON prefix, `len` pattern bytes in pieces of
/// [`PIECE`] bytes from a static buffer, then the suffix. Nothing of size `len` is allocated.
pub(super) fn write_blob(out: &mut impl Write, id: &Id, len: u64) -> io::Result<()> {
    write_blob_paused(out, id, len, |_| Ok(()))
}

/// [`write_blob`] with `pause` called (to flush and wait) once half of the pattern is out.
pub(crate) fn write_blob_paused(
    out: &mut impl Write,
    id: &Id,
    len: u64,
    pause: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    out.write_all(br#"{"jsonrpc":"2.0","id":"#)?;
    serde_json::to_writer(&mut *out, id)?;
    out.write_all(br#","result":{"content":[{"type":"text","text":""#)?;
    // Split at a whole number of patterns, so the second part starts at pattern index 0 too.
    let pattern = BLOB_PATTERN.len() as u64;
    let first = len / 2 / pattern * pattern;
    write_pattern(out, first)?;
    pause(&mut *out)?;
    write_pattern(out, len - first)?;
    out.write_all(b"\"}]}}\n")
}

/// Writes `len` bytes of the blob pattern (it needs no JSON escaping) in static pieces.
fn write_pattern(out: &mut impl Write, len: u64) -> io::Result<()> {
    let mut left = len;
    while left > 0 {
        let n = usize::try_from(left).map_or(PIECE, |l| l.min(PIECE));
        out.write_all(&BLOB_PIECE[..n])?;
        left -= n as u64;
    }
    Ok(())
}

/// Writes the `resources/read` answer for an export of `len` bytes, streamed like a blob.
pub(crate) fn write_export(out: &mut impl Write, id: &Id, uri: &str, len: u64) -> io::Result<()> {
    out.write_all(br#"{"jsonrpc":"2.0","id":"#)?;
    serde_json::to_writer(&mut *out, id)?;
    out.write_all(br#","result":{"contents":[{"uri":"#)?;
    serde_json::to_writer(&mut *out, uri)?;
    out.write_all(br#","mimeType":"text/plain","text":""#)?;
    write_pattern(out, len)?;
    out.write_all(b"\"}]}}\n")
}

pub(super) fn write_notification(
    out: &mut impl Write,
    method: &str,
    params: Option<Value>,
) -> io::Result<()> {
    out.write_all(&jsonrpc::encode_notification(method, params).map_err(io::Error::other)?)
}

/// Writes a success response line.
pub(super) fn write_result(
    out: &mut impl Write,
    id: &Id,
    result: &impl Serialize,
) -> io::Result<()> {
    out.write_all(&jsonrpc::encode_result(id, result).map_err(io::Error::other)?)
}

/// Writes an error response line.
pub(super) fn write_error(
    out: &mut impl Write,
    id: Option<&Id>,
    error: &ErrorObject,
) -> io::Result<()> {
    out.write_all(&jsonrpc::encode_error(id, error))
}

/// Deserialises a method's params (absent params read as `{}`), or explains in a -32602 error
/// what is wrong with them.
pub(super) fn parse<T: DeserializeOwned>(
    method: &str,
    params: Option<Value>,
) -> Result<T, ErrorObject> {
    serde_json::from_value(params.unwrap_or_else(|| Value::Object(Map::new()))).map_err(|e| {
        ErrorObject::new(codes::INVALID_PARAMS, format!("Invalid params for {method}: {e}"))
    })
}
