//! Large payloads by reference, as a [`Client`] hands them over: the spilled answers it
//! received (read back in chunks by URI) and resources fetched into the same handle.

use std::future::Future;

use serde_json::Value;

use super::Client;
use crate::host::error::{Error, Result};
use crate::spill::link::META_KEY;
use crate::spill::scan::decode_base64;
use crate::spill::store::{SpillError, SpillFile};

impl Client {
    /// What the content scan found in each spilled payload `value` links to (a result or a
    /// resource read), with the JSON pointer of the item that links to it.
    pub(crate) fn spill_reports(
        &self,
        value: &Value,
    ) -> Vec<(String, crate::policy::content::stream::Report)> {
        fn walk(
            client: &Client,
            v: &Value,
            at: String,
            out: &mut Vec<(String, crate::policy::content::stream::Report)>,
        ) {
            match v {
                Value::Object(m) => {
                    let uri = m.get("uri").and_then(Value::as_str).or_else(|| {
                        m.get("_meta")
                            .and_then(|x| x.get(META_KEY))
                            .and_then(|x| x.get("uri"))
                            .and_then(Value::as_str)
                    });
                    if let Some(report) = uri.and_then(|u| client.inner().spilled.report(u)) {
                        out.push((at, report));
                        return;
                    }
                    for (k, x) in m {
                        walk(
                            client,
                            x,
                            format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                            out,
                        );
                    }
                }
                Value::Array(a) => a
                    .iter()
                    .enumerate()
                    .for_each(|(i, x)| walk(client, x, format!("{at}/{i}"), out)),
                _ => {}
            }
        }
        let mut out = Vec::new();
        if self.inner().gate.is_some() {
            walk(self, value, String::new(), &mut out);
        }
        out
    }

    /// A resource's contents about to reach the caller, past the gate's content screen
    /// (resources read from the open world taint the session only when flagged).
    pub(crate) fn screen_read(&self, uri: &str, value: &mut Value) {
        if let Some(gate) = &self.inner().gate {
            let spilled = self.spill_reports(value);
            gate.screen(&format!("resources/read {uri}"), false, value, spilled);
        }
    }

    /// A spilled payload this client received (a `ringmcp-spill://` URI from a result), as a
    /// handle: `read_at`, `read_range`, or `reader()` for `std::io::Read + Seek`.
    pub fn spilled(&self, uri: &str) -> Option<SpillFile> {
        self.inner().spilled.get(uri)
    }

    /// Reads up to `len` bytes of a spilled payload from `offset` (fewer at its end).
    ///
    /// # Errors
    /// [`Error::Spill`] when the URI is unknown (or released) or the file cannot be read.
    pub fn read_spilled(&self, uri: &str, offset: u64, len: usize) -> Result<Vec<u8>> {
        let file = self
            .inner()
            .spilled
            .get(uri)
            .ok_or_else(|| Error::Spill(SpillError::NotFound(uri.into())))?;
        file.read_range(offset, len).map_err(Error::Spill)
    }

    /// Follows a `resource_link` (or any resource URI of this server): reads the resource and
    /// returns its payload as a [`SpillFile`], the same chunked handle as a spilled result
    /// (`read_at`, `read_range`, `reader()`, `stream()`), also reachable by
    /// [`read_spilled`](Self::read_spilled) under the handle's URI until released.
    ///
    /// A `ringmcp-spill://` URI this client received is returned as it is; one of another
    /// process's store (a `ringmcp gateway`'s) is the server's, read like any other resource
    /// (a large one in ranges, `URI?offset=N&length=M`, as `ringmcp call --save` does). Otherwise the
    /// `resources/read` answer is received like any other: a large one streams to the spill
    /// store as it arrives and is handed over without being copied; a small one is written to
    /// the store (a `blob` base64-decoded, a `text` as its UTF-8 bytes). Of several content
    /// items, the one whose `uri` is `uri` is taken, else the first.
    ///
    /// # Errors
    /// As [`read_resource`](Self::read_resource); [`Error::Spill`] when the host does not
    /// spill ([`HostBuilder::spill`](super::HostBuilder::spill)`(None)`), when the answer holds
    /// no text or blob, when a blob is not valid base64, or when the store is full.
    pub fn fetch_resource(
        &self,
        uri: &str,
    ) -> impl Future<Output = Result<SpillFile>> + Send + 'static {
        let known = self.spilled(uri);
        // A spill URI of this host's own store that this client did not receive (another
        // server's payload, or one released) is not sent to this server to read. One of
        // another store is the server's (a `ringmcp gateway` hands its large results over so),
        // and is read from it like any resource.
        let foreign = known.is_none() && crate::spill::store::is_own_spill_uri(uri);
        if foreign {
            let error = Error::Spill(SpillError::NotFound(uri.into()));
            return futures::future::Either::Left(std::future::ready(Err(error)));
        }
        let read = known.is_none().then(|| self.read_resource(uri));
        let (client, uri) = (self.clone(), uri.to_owned());
        futures::future::Either::Right(async move {
            if let Some(file) = known {
                return Ok(file);
            }
            let Some(store) = client.inner().store.clone() else {
                return Err(Error::Spill(SpillError::Disabled));
            };
            let result = read.expect("read is sent when the URI is not a spilled one").await?;
            let item = result
                .contents
                .iter()
                .find(|c| c.uri == uri)
                .or(result.contents.first())
                .ok_or_else(|| Error::Spill(SpillError::NoPayload(uri.clone())))?;
            let spilled = item
                .extra
                .get("_meta")
                .and_then(|m| m.get(META_KEY))
                .and_then(|m| m.get("uri"))
                .and_then(Value::as_str);
            if let Some(spilled) = spilled {
                return client
                    .spilled(spilled)
                    .ok_or_else(|| Error::Spill(SpillError::NotFound(spilled.into())));
            }
            let bytes = match (&item.text, &item.blob) {
                (Some(text), _) => std::borrow::Cow::Borrowed(text.as_bytes()),
                (None, Some(blob)) => {
                    decode_base64(blob.as_bytes()).map(std::borrow::Cow::Owned).map_err(|at| {
                        Error::Spill(SpillError::BadBase64 { uri: uri.clone(), at })
                    })?
                }
                (None, None) => return Err(Error::Spill(SpillError::NoPayload(uri))),
            };
            let mut writer = store.create("resource").map_err(Error::Spill)?;
            writer.write_all(&bytes).map_err(Error::Spill)?;
            let file = writer.finish().map_err(Error::Spill)?;
            client.inner().spilled.insert(vec![file.clone()]);
            Ok(file)
        })
    }

    /// Lets go of a spilled payload: its file is removed once no handle to it is left.
    pub fn release_spilled(&self, uri: &str) -> Option<SpillFile> {
        self.inner().spilled.remove(uri)
    }
}
