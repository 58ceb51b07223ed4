//! The server side of 2026-07-28 `input_required` rounds (multi-round-trip requests): a request
//! answered with the input the server needs and an opaque `requestState`; the client fulfils
//! the input requests and retries with `inputResponses` and the state echoed. The session
//! hands out the states (random, so that no client of a shared stateless session can guess
//! another's), knows the retries of its own rounds, and forgets a round after a while.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::jsonrpc::{ErrorObject, Id, codes};

use super::{Incoming, ServerSession};

/// How long a round waits for its retry by default.
pub const ROUND_WAIT: Duration = Duration::from_secs(600);

/// A round waiting for its retry.
#[derive(Debug)]
struct Round {
    /// The keys of its `inputRequests`.
    keys: Vec<String>,
    deadline: Instant,
}

/// The rounds handed out and not retried yet, by `requestState`.
#[derive(Debug, Default)]
pub(super) struct Rounds {
    parked: HashMap<String, Round>,
}

impl Rounds {
    /// Rounds parked.
    pub(super) fn len(&self) -> usize {
        self.parked.len()
    }

    pub(super) fn next_deadline(&self) -> Option<Instant> {
        self.parked.values().map(|r| r.deadline).min()
    }
}

/// A retry's answers, one per input request of its round: the client's, or the error of its
/// missing one.
pub type InputResponses = Vec<(String, Result<Value, ErrorObject>)>;

impl<T> ServerSession<T> {
    /// Answers the client's request `id` with `input_required`: the client is to fulfil
    /// `requests` (key → `{"method", "params"}`) and call again with the answers, which come
    /// as [`Incoming::Retry`]. Returns the `requestState` handed out; `None` when `id` is not
    /// open or not a 2026-07-28 request.
    pub fn input_required(
        &mut self,
        id: &Id,
        requests: Map<String, Value>,
        now: Instant,
    ) -> Option<String> {
        if !self.open.get(id).is_some_and(|o| o.version.is_modern()) {
            return None;
        }
        let state = random_state();
        let keys = requests.keys().cloned().collect();
        let answer = json!({
            "resultType": "input_required",
            "inputRequests": requests,
            "requestState": state,
        });
        self.respond(id, Ok(answer));
        let round = Round { keys, deadline: now + self.config.round_wait };
        self.rounds.parked.insert(state.clone(), round);
        Some(state)
    }

    /// A 2026-07-28 request that carries a `requestState` this session handed out: the
    /// round's retry, with the answers to its input requests. `None` for any other.
    pub(super) fn retry_of(&mut self, params: Option<&Value>) -> Option<(String, InputResponses)> {
        let state = params.and_then(|p| p.get("requestState")).and_then(Value::as_str)?;
        let round = self.rounds.parked.remove(state)?;
        let given = params.and_then(|p| p.get("inputResponses"));
        let responses = (round.keys.into_iter())
            .map(|key| {
                let answer = given.and_then(|r| r.get(&key)).cloned().ok_or_else(|| {
                    ErrorObject::new(
                        codes::INVALID_PARAMS,
                        format!("the client's retry has no inputResponses[{key:?}]"),
                    )
                });
                (key, answer)
            })
            .collect();
        Some((state.to_owned(), responses))
    }

    /// Forgets the rounds whose retry did not come in time.
    pub(super) fn expire_rounds(&mut self, now: Instant) {
        let mut expired: Vec<String> = (self.rounds.parked.iter())
            .filter(|(_, r)| r.deadline <= now)
            .map(|(s, _)| s.clone())
            .collect();
        expired.sort_unstable();
        for state in expired {
            self.rounds.parked.remove(&state);
            self.events.push_back(Incoming::RoundExpired { state });
        }
    }
}

/// 128 random bits, as hex.
fn random_state() -> String {
    let mut bytes = [0u8; 16];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes)
        .expect("the system's random source");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
