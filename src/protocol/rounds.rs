//! The session's 2026-07-28 steps that span more than one message: the `server/discover`
//! probe with its fallback to `initialize`, and `input_required` rounds (MRTR: the server
//! asks for input inside a result; the client fulfils every request and retries with a new
//! id, `inputResponses`, and the `requestState` echoed exactly).

use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use crate::jsonrpc::{ErrorObject, Id, RawJson, codes};

use std::collections::HashMap;
use std::time::Duration;

use bytes::Bytes;

use super::error::{CloseReason, RequestError};
use super::inflight::{Pending, RequestId};
use super::lifecycle::{ServerDetails, State};
use super::modern;
use super::{Event, MAX_INPUT_ROUNDS, Session};

/// A request between an `input_required` (or a -32042) and its retry: waiting for the
/// application's answers to the server's input requests.
#[derive(Debug)]
pub(super) struct Round<T> {
    token: T,
    method: std::sync::Arc<str>,
    line: Bytes,
    state: Option<Box<RawValue>>,
    responses: Map<String, Value>,
    /// Input requests still unanswered.
    waiting: usize,
    /// Progress timeout (see [`Pending::timeout`]).
    timeout: Option<Duration>,
    /// The request's deadline span, kept for the retry.
    span: Duration,
    rounds: u8,
    /// A -32042 round (2025-11-25 URL elicitation required): the inputs are the URL
    /// elicitations, the retry is the request unchanged, and an answer other than `accept`
    /// gives the caller this original error.
    as_is: Option<ErrorObject>,
}

/// The requests in rounds, by the id their caller knows them by (their origin id), and the
/// ids they are in flight under after a retry.
#[derive(Debug)]
pub(super) struct Rounds<T> {
    /// The current id of requests re-sent after `input_required`, by origin id.
    reissued: HashMap<RequestId, RequestId>,
    /// Requests waiting for the application's inputs, by origin id.
    waiting: HashMap<RequestId, Round<T>>,
    /// The input requests delivered as [`Event::ServerRequest`], by the id they were given:
    /// (origin id, key in `inputRequests`).
    inputs: HashMap<Id, (RequestId, String)>,
    next_input: u64,
}

impl<T> Default for Rounds<T> {
    fn default() -> Self {
        Rounds {
            reissued: HashMap::new(),
            waiting: HashMap::new(),
            inputs: HashMap::new(),
            next_input: 0,
        }
    }
}

/// Where a round stands after one of its inputs was answered.
#[derive(Debug)]
pub(super) enum Step<T> {
    /// Still waiting for other inputs (or the round is gone).
    Waiting,
    /// Every input is in: retry the request.
    Retry(RequestId, Round<T>),
    /// The request fails: the application refused an input, or a URL elicitation was not
    /// accepted (then the error is the server's own -32042).
    Fail(T, RequestError),
}

impl<T> Rounds<T> {
    /// The id request `origin` was re-sent under, if it was.
    pub(super) fn reissued(&self, origin: RequestId) -> Option<RequestId> {
        self.reissued.get(&origin).copied()
    }

    /// Request `origin` is in flight again, as `id`.
    pub(super) fn resent(&mut self, origin: RequestId, id: RequestId) {
        self.reissued.insert(origin, id);
    }

    /// Request `origin` is over (answered, failed or cancelled).
    pub(super) fn forget(&mut self, origin: RequestId) {
        self.reissued.remove(&origin);
    }

    /// Gives input `key` of request `origin`'s round an id to deliver it under.
    fn input_id(&mut self, origin: RequestId, key: String) -> Id {
        let id = Id::String(format!("input-{origin}-{}", self.next_input));
        self.next_input += 1;
        self.inputs.insert(id.clone(), (origin, key));
        id
    }

    /// The round input `id` belongs to, taken: (origin id, key). `None` for an id that is not
    /// an input of ours (or was answered already).
    pub(super) fn take_input(&mut self, id: &Id) -> Option<(RequestId, String)> {
        self.inputs.remove(id)
    }

    /// Removes request `origin`'s round and everything that refers to it.
    fn end(&mut self, origin: RequestId) -> Option<Round<T>> {
        let round = self.waiting.remove(&origin)?;
        self.inputs.retain(|_, (o, _)| *o != origin);
        self.reissued.remove(&origin);
        Some(round)
    }

    /// The application answered input `key` of request `origin`'s round.
    pub(super) fn answer(
        &mut self,
        origin: RequestId,
        key: String,
        outcome: Result<Value, ErrorObject>,
    ) -> Step<T> {
        let Some(round) = self.waiting.get_mut(&origin) else { return Step::Waiting };
        // A URL elicitation the user did not accept: the caller gets the server's -32042.
        let declined = round.as_is.is_some()
            && outcome
                .as_ref()
                .is_ok_and(|v| v.get("action").and_then(Value::as_str) != Some("accept"));
        if declined {
            let round = self.end(origin).expect("just seen");
            let error = RequestError::Rpc(round.as_is.expect("checked"));
            return Step::Fail(round.token, error);
        }
        match outcome {
            Ok(value) => {
                round.responses.insert(key, value);
                round.waiting -= 1;
                if round.waiting > 0 {
                    return Step::Waiting;
                }
                let round = self.waiting.remove(&origin).expect("just seen");
                Step::Retry(origin, round)
            }
            Err(error) => {
                let round = self.end(origin).expect("just seen");
                let error = RequestError::InputNotProvided {
                    method: round.method.to_string(),
                    input: format!("inputRequests[{key:?}]"),
                    reason: format!("the application answered {} {}", error.code, error.message),
                };
                Step::Fail(round.token, error)
            }
        }
    }

    /// Cancels request `origin` if it is waiting for inputs: its token.
    pub(super) fn cancel(&mut self, origin: RequestId) -> Option<T> {
        self.end(origin).map(|round| round.token)
    }

    /// The connection is over: the tokens of every round, in request order.
    pub(super) fn close(&mut self) -> Vec<T> {
        let mut waiting: Vec<(RequestId, Round<T>)> = self.waiting.drain().collect();
        waiting.sort_unstable_by_key(|(origin, _)| *origin);
        self.inputs.clear();
        self.reissued.clear();
        waiting.into_iter().map(|(_, round)| round.token).collect()
    }
}

/// What the client does with one of the server's input requests.
enum Input {
    /// Answered by the session itself (`roots/list`).
    Answer(Value),
    /// Delivered to the application.
    Delegate(String, Option<Value>),
}

impl<T> Session<T> {
    /// The answer to the `server/discover` probe (docs/protocol.md, "Revisions
    /// and era detection"): a `DiscoverResult` naming a modern revision we speak makes the
    /// session `Active` in it; a -32022 naming one is retried once with it; anything else (an
    /// error of any code, a timeout, a result without a revision we speak) falls back to
    /// `initialize` when probing, or fails the handshake under [`super::Era::Modern`].
    pub(super) fn on_discover_answer(
        &mut self,
        p: Pending<T>,
        outcome: Result<RawJson, RequestError>,
    ) {
        let State::Discovering { version, fallback, retried, .. } = self.state else {
            unreachable!("called for the probe's answer only")
        };
        let now = self.clock.unwrap_or(p.sent);
        let error = match outcome {
            Ok(result) => match modern::parse_discover(&result) {
                Ok(Some((version, init))) => {
                    self.state = State::Active(Box::new(ServerDetails { version, init }));
                    self.events.push_back(Event::Completed { token: p.token, outcome: Ok(result) });
                    return;
                }
                Ok(None) => RequestError::UnsupportedVersion {
                    offered: version.as_str(),
                    answered: result.to_value()["supportedVersions"].to_string(),
                },
                Err(reason) => {
                    RequestError::MalformedResult { method: "server/discover".into(), reason }
                }
            },
            Err(RequestError::Rpc(e)) if e.code == codes::UNSUPPORTED_PROTOCOL_VERSION => {
                match modern::choose(&modern::supported_in_error(e.data.as_ref())) {
                    Some(v) if !retried => {
                        self.discover(now, p.token, v, fallback, true);
                        return;
                    }
                    _ => RequestError::Rpc(e),
                }
            }
            Err(e) => e,
        };
        if fallback {
            tracing::debug!("server/discover probe: {error}; falling back to initialize");
            self.state = State::Uninitialized;
            self.initialize(now, p.token);
        } else {
            self.state = State::Closed(CloseReason::HandshakeFailed(Box::new(error.clone())));
            self.events.push_back(Event::Completed { token: p.token, outcome: Err(error) });
        }
    }

    /// A result of `resultType: "input_required"` for request `p`: the inputs the session can
    /// give are given, the others are delivered to the application as
    /// [`Event::ServerRequest`]s (answered through [`Session::respond`]); once all are in, the
    /// request is retried. A request the client cannot satisfy (an undeclared capability) fails
    /// with [`RequestError::InputNotProvided`] without a retry.
    pub(super) fn start_round(
        &mut self,
        p: Pending<T>,
        requests: Map<String, Value>,
        state: Option<Box<RawValue>>,
        as_is: Option<ErrorObject>,
    ) {
        let origin = p.origin;
        let fail = |s: &mut Self, token: T, input: &str, reason: String| {
            s.rounds.forget(origin);
            let error = RequestError::InputNotProvided {
                method: p.method.to_string(),
                input: input.to_owned(),
                reason,
            };
            s.events.push_back(Event::Completed { token, outcome: Err(error) });
        };
        if p.rounds >= MAX_INPUT_ROUNDS {
            let reason =
                format!("the server still asked for input after {MAX_INPUT_ROUNDS} rounds");
            return fail(self, p.token, "more input", reason);
        }
        let Some(line) = p.line else {
            return fail(self, p.token, "input", "the request was not kept for a retry".into());
        };
        let mut inputs = Vec::with_capacity(requests.len());
        for (key, request) in requests {
            let method = request.get("method").and_then(Value::as_str).unwrap_or_default();
            let params = request.get("params").cloned();
            let input = match (method, &self.config.roots) {
                ("roots/list", Some(roots)) => Input::Answer(json!({ "roots": roots })),
                _ if self.delegates(method, params.as_ref()) => {
                    Input::Delegate(method.to_owned(), params)
                }
                ("", _) => {
                    let reason = format!("inputRequests[{key:?}] names no method");
                    return fail(self, p.token, "input", reason);
                }
                _ => {
                    let reason = "this client does not declare that capability".to_owned();
                    return fail(self, p.token, method, reason);
                }
            };
            inputs.push((key, input));
        }
        let mut round = Round {
            token: p.token,
            method: p.method,
            line,
            state,
            responses: Map::new(),
            waiting: 0,
            timeout: p.timeout,
            span: p.deadline.saturating_duration_since(p.sent),
            rounds: p.rounds + 1,
            as_is,
        };
        for (key, input) in inputs {
            match input {
                Input::Answer(value) => {
                    round.responses.insert(key, value);
                }
                Input::Delegate(method, params) => {
                    let id = self.rounds.input_id(origin, key);
                    round.waiting += 1;
                    self.stats.server_requests += 1;
                    self.events.push_back(Event::ServerRequest { id, method, params });
                }
            }
        }
        if round.waiting == 0 {
            self.retry(origin, round);
        } else {
            self.rounds.waiting.insert(origin, round);
        }
    }

    /// The application answered input `key` of request `origin`'s round.
    pub(super) fn on_input(
        &mut self,
        origin: RequestId,
        key: String,
        outcome: Result<Value, ErrorObject>,
    ) {
        match self.rounds.answer(origin, key, outcome) {
            Step::Waiting => {}
            Step::Retry(origin, round) => self.retry(origin, round),
            Step::Fail(token, error) => {
                self.events.push_back(Event::Completed { token, outcome: Err(error) });
            }
        }
    }

    /// Re-sends a request with this round's inputs, under a new id.
    fn retry(&mut self, origin: RequestId, round: Round<T>) {
        let Round { token, method, line, state, responses, timeout, span, rounds, as_is, .. } =
            round;
        let params = if as_is.is_some() {
            modern::params_of(&line)
        } else {
            modern::retry_params(&line, responses, state.as_deref())
        };
        let params = match params {
            Ok(params) => params,
            Err(reason) => {
                self.rounds.forget(origin);
                let error = RequestError::InvalidRequest { method: method.to_string(), reason };
                self.events.push_back(Event::Completed { token, outcome: Err(error) });
                return;
            }
        };
        let now = self.clock.expect("set by every input that can complete a request");
        let id = self.peek_id();
        self.send_request(id, &method, Some(&params), now, Some(span), token);
        if let Some(p) = self.inflight.get_mut(id) {
            p.origin = origin;
            p.rounds = rounds;
            p.timeout = timeout;
        }
        self.rounds.resent(origin, id);
    }
}

impl<T> Session<T> {
    /// Whether a server request goes to the application: a declared feature, and for
    /// elicitation a declared mode (`form` when absent).
    pub(super) fn delegates(&self, method: &str, params: Option<&Value>) -> bool {
        let f = self.config.features;
        match method {
            // Sampling with tools needs `sampling.tools`, which is never declared.
            "sampling/createMessage" => {
                f.sampling
                    && params
                        .is_none_or(|p| p.get("tools").is_none() && p.get("toolChoice").is_none())
            }
            "elicitation/create" => {
                match params.and_then(|p| p.get("mode")).and_then(Value::as_str) {
                    None | Some("form") => f.elicitation_form,
                    Some("url") => f.elicitation_url,
                    Some(_) => false,
                }
            }
            _ => false,
        }
    }

    /// The answer to a server→client request.
    pub(super) fn answer(&self, method: &str) -> Result<Value, ErrorObject> {
        match (method, &self.config.roots) {
            ("sampling/createMessage", _) if self.config.features.sampling => {
                Err(ErrorObject::new(
                    codes::INVALID_PARAMS,
                    "This client does not support sampling with tools (sampling.tools)",
                ))
            }
            ("ping", _) => Ok(json!({})),
            ("roots/list", Some(roots)) => Ok(json!({ "roots": roots })),
            // A declared elicitation feature, but not in the mode asked for.
            ("elicitation/create", _)
                if self.config.features.elicitation_form
                    || self.config.features.elicitation_url =>
            {
                Err(ErrorObject::new(
                    codes::INVALID_PARAMS,
                    "This client does not support that elicitation mode",
                ))
            }
            _ => Err(ErrorObject::new(
                codes::METHOD_NOT_FOUND,
                format!("Method not found: {method}"),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::codes;

    fn round(token: u32, waiting: usize, as_is: Option<ErrorObject>) -> Round<u32> {
        Round {
            token,
            method: "tools/call".into(),
            line: Bytes::from_static(b"{}\n"),
            state: None,
            responses: Map::new(),
            waiting,
            timeout: None,
            span: Duration::from_secs(1),
            rounds: 1,
            as_is,
        }
    }

    /// Parks a round with `keys` as its delegated inputs; returns their ids.
    fn park(r: &mut Rounds<u32>, origin: i64, token: u32, keys: &[&str]) -> Vec<Id> {
        let origin = RequestId::new(origin);
        let ids = keys.iter().map(|k| r.input_id(origin, (*k).to_owned())).collect();
        r.waiting.insert(origin, round(token, keys.len(), None));
        ids
    }

    /// The round is retried once its last input is in, with every answer under its key; an
    /// input id is taken once.
    #[test]
    fn the_last_input_triggers_the_retry() {
        let mut r = Rounds::default();
        let ids = park(&mut r, 1, 10, &["a", "b"]);
        let (origin, key) = r.take_input(&ids[0]).unwrap();
        assert!(r.take_input(&ids[0]).is_none(), "taken once");
        assert!(matches!(r.answer(origin, key, Ok(json!(1))), Step::Waiting));
        let (origin, key) = r.take_input(&ids[1]).unwrap();
        match r.answer(origin, key, Ok(json!(2))) {
            Step::Retry(o, round) => {
                assert_eq!(o, RequestId::new(1));
                assert_eq!(round.token, 10);
                assert_eq!(Value::Object(round.responses), json!({"a": 1, "b": 2}));
            }
            other => panic!("{other:?}"),
        }
    }

    /// A refused input fails the request, naming the input, and forgets the round's other
    /// inputs; a later answer to them changes nothing.
    #[test]
    fn a_refused_input_fails_the_request_and_clears_the_round() {
        let mut r = Rounds::default();
        let ids = park(&mut r, 3, 30, &["x", "y"]);
        r.resent(RequestId::new(3), RequestId::new(4));
        let (origin, key) = r.take_input(&ids[0]).unwrap();
        let refused = Err(ErrorObject::new(codes::INVALID_PARAMS, "no"));
        match r.answer(origin, key, refused) {
            Step::Fail(30, RequestError::InputNotProvided { input, reason, .. }) => {
                assert_eq!(input, r#"inputRequests["x"]"#);
                assert!(reason.contains("-32602 no"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
        assert!(r.take_input(&ids[1]).is_none());
        assert_eq!(r.reissued(RequestId::new(3)), None);
        assert!(matches!(r.answer(RequestId::new(3), "y".into(), Ok(json!(1))), Step::Waiting));
    }

    /// A URL elicitation (-32042 round) that is not accepted gives the caller the server's own
    /// error; an accepted one retries.
    #[test]
    fn a_declined_url_elicitation_returns_the_original_error() {
        let original = ErrorObject::new(codes::URL_ELICITATION_REQUIRED, "visit");
        for (action, retried) in [("decline", false), ("cancel", false), ("accept", true)] {
            let mut r = Rounds::default();
            let origin = RequestId::new(5);
            let id = r.input_id(origin, "0".into());
            r.waiting.insert(origin, round(50, 1, Some(original.clone())));
            let (o, key) = r.take_input(&id).unwrap();
            match r.answer(o, key, Ok(json!({ "action": action }))) {
                Step::Retry(..) => assert!(retried, "{action}"),
                Step::Fail(50, RequestError::Rpc(e)) => {
                    assert!(!retried, "{action}");
                    assert_eq!(e, original);
                }
                other => panic!("{action}: {other:?}"),
            }
        }
    }

    /// Cancelling or closing hands back the tokens (closing in request order) and leaves
    /// nothing behind.
    #[test]
    fn cancel_and_close_hand_back_tokens() {
        let mut r = Rounds::default();
        let a = park(&mut r, 9, 90, &["k"]);
        park(&mut r, 2, 20, &["k"]);
        park(&mut r, 7, 70, &["k"]);
        assert_eq!(r.cancel(RequestId::new(9)), Some(90));
        assert_eq!(r.cancel(RequestId::new(9)), None);
        assert!(r.take_input(&a[0]).is_none());
        assert_eq!(r.close(), [20, 70]);
        assert!(r.inputs.is_empty() && r.waiting.is_empty());
    }
}
