//! What the session does with each message from the server: an answer completes its request
//! (or starts an `input_required` round, re-probes after -32022, ends the handshake), a
//! notification becomes an event, a server request is answered or delegated.

use serde_json::{Value, json};

use crate::jsonrpc::{self, Id, RawJson, RawMessage, codes};

use super::inflight::RequestId;
use super::lifecycle::State;
use super::modern::{self, Era, ResultKind};
use super::{Event, RequestError, Session, Transmit, TransmitKind, Violation};

impl<T> Session<T> {
    pub(super) fn complete(&mut self, id: RequestId, outcome: Result<RawJson, RequestError>) {
        let Some(p) = self.inflight.remove(id) else { return };
        if matches!(self.state, State::Discovering { request, .. } if request == id) {
            self.on_discover_answer(p, outcome);
            return;
        }
        // `initialize` refused with -32022 naming a stateless revision: the server is a modern
        // one after all (its answer to the probe came too late, and it now serves the era the
        // probe opened). A recognised modern error means modern: ask again with that revision.
        if let (State::Initializing { request, .. }, Err(RequestError::Rpc(e))) =
            (&self.state, &outcome)
            && *request == id
            && self.config.era == Era::Auto
            && e.code == codes::UNSUPPORTED_PROTOCOL_VERSION
            && let Some(version) = modern::choose(&modern::supported_in_error(e.data.as_ref()))
        {
            let now = self.clock.unwrap_or(p.sent);
            self.discover(now, p.token, version, false, true);
            return;
        }
        let outcome = match (outcome, self.modern()) {
            (Ok(result), Some(_)) => match modern::classify(&result) {
                Ok(ResultKind::Complete) => Ok(result),
                Ok(ResultKind::InputRequired { requests, state }) => {
                    self.start_round(p, requests, state, None);
                    return;
                }
                Err(reason) => {
                    Err(RequestError::MalformedResult { method: p.method.to_string(), reason })
                }
            },
            // 2025-11-25: the server needs the user to visit URLs first: offer
            // them through the handler, then retry the request as it was.
            (Err(RequestError::Rpc(e)), None)
                if e.code == codes::URL_ELICITATION_REQUIRED
                    && self.config.features.elicitation_url
                    && p.line.is_some() =>
            {
                let listed = e.data.as_ref().and_then(|d| d.get("elicitations"));
                let requests: serde_json::Map<String, Value> = listed
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .enumerate()
                    .map(|(i, e)| {
                        let mut params = e.clone();
                        if params.get("mode").is_none() {
                            params["mode"] = json!("url");
                        }
                        (i.to_string(), json!({"method": "elicitation/create", "params": params}))
                    })
                    .collect();
                if requests.is_empty() {
                    Err(RequestError::Rpc(e))
                } else {
                    self.start_round(p, requests, None, Some(e));
                    return;
                }
            }
            (outcome, _) => outcome,
        };
        if p.origin != id {
            self.rounds.forget(p.origin);
        }
        let outcome = match &self.state {
            State::Initializing { request, .. } if *request == id => {
                let state = std::mem::replace(&mut self.state, State::Uninitialized);
                let (state, outcome) = state.on_initialize_answer(outcome);
                self.state = state;
                if outcome.is_ok() {
                    self.notify("notifications/initialized", None);
                }
                outcome
            }
            _ => outcome,
        };
        self.events.push_back(Event::Completed { token: p.token, outcome });
    }

    pub(super) fn dispatch(&mut self, msg: RawMessage) {
        if self.on_listen_message(&msg) {
            return;
        }
        if let RawMessage::Response(resp) = &msg
            && let Some(Id::Number(n)) = resp.id
            && self.keepalive.settle(RequestId::new(n))
        {
            // Any answer, even an error, shows the server is alive.
            return;
        }
        match msg {
            RawMessage::Response(resp) => match resp.id {
                Some(Id::Number(n)) if self.inflight.contains(RequestId::new(n)) => {
                    self.complete(RequestId::new(n), resp.outcome.map_err(RequestError::Rpc));
                }
                Some(Id::Number(n)) if self.inflight.was_abandoned(RequestId::new(n)) => {
                    self.stats.late_answers += 1;
                }
                Some(id) => self.violation(Violation::UnknownResponse(id)),
                None => match resp.outcome {
                    Err(e) => self.violation(Violation::ErrorWithoutId(e)),
                    Ok(_) => {
                        self.violation(Violation::InvalidMessage("result with null id".into()))
                    }
                },
            },
            RawMessage::Notification(n) if n.method == "notifications/progress" => {
                // Progress for a token that is not ours (or a finished request) is dropped.
                if let Some(now) = self.last_received {
                    self.on_progress(n.params.as_ref(), now);
                }
            }
            RawMessage::Notification(n) if n.method == "notifications/cancelled" => {
                // The server withdrew one of its requests: no response may follow.
                let id = n.params.as_ref().and_then(|p| p.get("requestId")).cloned();
                if let Some(id) = id.and_then(|v| serde_json::from_value::<Id>(v).ok()) {
                    self.delegated.remove(&id);
                }
                self.events.push_back(Event::Notification(n));
            }
            RawMessage::Notification(n) => self.events.push_back(Event::Notification(n)),
            RawMessage::Request(req) if self.delegates(&req.method, req.params.as_ref()) => {
                self.stats.server_requests += 1;
                self.delegated.insert(req.id.clone());
                let (id, method, params) = (req.id, req.method, req.params);
                self.events.push_back(Event::ServerRequest { id, method, params });
            }
            RawMessage::Request(req) => {
                self.stats.server_requests += 1;
                let line = match self.answer(&req.method) {
                    Ok(result) => {
                        jsonrpc::encode_result(&req.id, result).expect("Value serialises")
                    }
                    Err(error) => jsonrpc::encode_error(Some(&req.id), &error),
                };
                let kind = TransmitKind::Response;
                self.transmit.push_back(Transmit { bytes: line.into(), kind });
            }
        }
    }
}
