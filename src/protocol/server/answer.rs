//! The server session's answers: to a request it handed out (`respond`, as a `Value` or as
//! JSON text), taken over by the application (`claim`), or given at once to one it never
//! handed out (a refusal, an immediate result).

use serde_json::Value;

use crate::jsonrpc::{self, ErrorObject, Id, JsonRepr, RawJson};

use super::{ServerSession, ServerTransmit, ServerTransmitKind};

impl<T> ServerSession<T> {
    /// Answers the client's request `id`. Ignored (and `false`) when it is not open: already
    /// answered, cancelled by the client, or never received.
    ///
    /// A 2026-07-28 result gets `resultType` (and the caching hints on cacheable methods)
    /// when it lacks them.
    pub fn respond(&mut self, id: &Id, outcome: Result<Value, ErrorObject>) -> bool {
        self.respond_json(id, outcome.map(RawJson::from_value))
    }

    /// [`respond`](Self::respond) with a result that may be JSON text (a large result built
    /// as text, or passed on as it arrived): the text is written as it is, only the id is the
    /// session's; a 2026-07-28 answer gets the members it lacks spliced in.
    pub fn respond_json(&mut self, id: &Id, outcome: Result<RawJson, ErrorObject>) -> bool {
        let Some(open) = self.close(id) else {
            return false;
        };
        let wire = open.wire(id);
        let (line, error) = match outcome.map(RawJson::into_repr) {
            Ok(JsonRepr::Parsed(mut v)) => {
                if open.version.is_modern() {
                    self.stamp(&open.method, &mut v);
                }
                (jsonrpc::encode_result(&wire, v).expect("Value serialises"), None)
            }
            Ok(raw) => {
                let mut text = raw.into_text();
                if open.version.is_modern() {
                    self.stamp_raw(&open.method, &mut text);
                }
                (jsonrpc::encode_raw_result(&wire, text), None)
            }
            Err(e) => (jsonrpc::encode_error(Some(&wire), &e), Some(e.code)),
        };
        self.queue_response(line, error, open.stream);
        true
    }

    /// Takes over answering request `id` (the application writes the answer itself, e.g.
    /// streamed); `false` when it is not open.
    pub fn claim(&mut self, id: &Id) -> bool {
        let Some(open) = self.close(id) else { return false };
        if let Some(stream) = open.stream {
            self.settle(stream);
        }
        true
    }

    /// Answers a message the driver could not hand over (too long to buffer) with `error`, by
    /// its id when one was found in it.
    pub fn reject(&mut self, id: Option<&Id>, error: ErrorObject) {
        self.error(id, error);
    }

    /// Queues an answer of `stream`'s.
    pub(super) fn queue_response(
        &mut self,
        line: Vec<u8>,
        error: Option<i64>,
        stream: Option<u64>,
    ) {
        let kind = ServerTransmitKind::Response { error, ends_stream: false };
        self.transmit.push_back(ServerTransmit { bytes: line.into(), kind, stream });
    }

    /// Answers a request of the frame being handled at once (it was never handed out).
    pub(super) fn result(&mut self, id: &Id, value: Value) {
        let line = jsonrpc::encode_result(id, value).expect("Value serialises");
        self.immediate(line, None);
    }

    /// Refuses a message of the frame being handled at once (by its id when it has one).
    pub(super) fn error(&mut self, id: Option<&Id>, error: ErrorObject) {
        self.immediate(jsonrpc::encode_error(id, &error), Some(error.code));
    }

    fn immediate(&mut self, line: Vec<u8>, error: Option<i64>) {
        let stream = self.origin.map(|o| o.stream);
        if let Some(stream) = stream {
            *self.owed.entry(stream).or_default() += 1;
        }
        self.queue_response(line, error, stream);
    }
}
