//! The session's 2026-07-28 steps that span more than one message: the `server/discover`
//! probe with its fallback to `initialize`, and `input_required` rounds (MRTR: the server
//! asks for input inside a result; the client fulfils every request and retries with a new
//! id, `inputResponses`, and the `requestState` echoed exactly).

use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use crate::jsonrpc::{ErrorObject, Id, RawJson, codes};

use super::error::{CloseReason, RequestError};
use super::lifecycle::{ServerDetails, State};
use super::modern;
use super::{Event, MAX_INPUT_ROUNDS, Pending, Round, Session};

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
            self.state = State::Closed(CloseReason::HandshakeFailed(error.to_string()));
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
            s.reissued.remove(&origin);
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
                    let id = Id::String(format!("input-{origin}-{}", self.next_input));
                    self.next_input += 1;
                    self.round_inputs.insert(id.clone(), (origin, key));
                    round.waiting += 1;
                    self.stats.server_requests += 1;
                    self.events.push_back(Event::ServerRequest { id, method, params });
                }
            }
        }
        if round.waiting == 0 {
            self.retry(origin, round);
        } else {
            self.rounds.insert(origin, round);
        }
    }

    /// The application answered input `key` of request `origin`'s round.
    pub(super) fn on_input(
        &mut self,
        origin: i64,
        key: String,
        outcome: Result<Value, ErrorObject>,
    ) {
        let Some(round) = self.rounds.get_mut(&origin) else { return };
        // A URL elicitation the user did not accept: the caller gets the server's -32042.
        let declined = round.as_is.is_some()
            && outcome
                .as_ref()
                .is_ok_and(|v| v.get("action").and_then(Value::as_str) != Some("accept"));
        if declined {
            let round = self.rounds.remove(&origin).expect("just seen");
            self.round_inputs.retain(|_, (o, _)| *o != origin);
            self.reissued.remove(&origin);
            let error = RequestError::Rpc(round.as_is.expect("checked"));
            self.events.push_back(Event::Completed { token: round.token, outcome: Err(error) });
            return;
        }
        match outcome {
            Ok(value) => {
                round.responses.insert(key, value);
                round.waiting -= 1;
                if round.waiting == 0 {
                    let round = self.rounds.remove(&origin).expect("just seen");
                    self.retry(origin, round);
                }
            }
            Err(error) => {
                let round = self.rounds.remove(&origin).expect("just seen");
                self.round_inputs.retain(|_, (o, _)| *o != origin);
                self.reissued.remove(&origin);
                let error = RequestError::InputNotProvided {
                    method: round.method.to_string(),
                    input: format!("inputRequests[{key:?}]"),
                    reason: format!("the application answered {} {}", error.code, error.message),
                };
                self.events.push_back(Event::Completed { token: round.token, outcome: Err(error) });
            }
        }
    }

    /// Re-sends a request with this round's inputs, under a new id.
    fn retry(&mut self, origin: i64, round: Round<T>) {
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
                self.reissued.remove(&origin);
                let error = RequestError::InvalidRequest { method: method.to_string(), reason };
                self.events.push_back(Event::Completed { token, outcome: Err(error) });
                return;
            }
        };
        let now = self.clock.expect("set by every input that can complete a request");
        let id = self.next_id;
        self.send_request(id, &method, Some(&params), now, Some(span), token);
        if let Some(p) = self.pending.get_mut(&id) {
            p.origin = origin;
            p.rounds = rounds;
            p.timeout = timeout;
        }
        self.reissued.insert(origin, id);
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
