//! A server's requests of the user's model under its policy: a [`ClientHandler`] in front of
//! the application's that puts each `sampling/createMessage` to the server's gate first
//! (`sampling`: allow, ask or deny; `samplingMaxTokens`), and records it (docs/policy.md,
//! "Sampling").

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::jsonrpc::ErrorObject;
use crate::policy::Denial;
use crate::protocol::ClientFeatures;

use super::super::handler::ClientHandler;
use super::{Check, Gate, Request};

/// Where a server's gate is put once its handshake is done (the connection, and so its
/// requests, start before).
pub(crate) type GateSlot = Arc<OnceLock<Arc<Gate>>>;

/// How long a sampling request waits for its server's gate to be made.
const GATE_WAIT: Duration = Duration::from_secs(30);

/// The application's handler behind a server's gate.
pub(crate) struct Gated {
    pub(crate) inner: Arc<dyn ClientHandler>,
    pub(crate) gate: GateSlot,
}

impl Gated {
    /// The server's gate, waiting (on this handler thread) while its handshake completes.
    fn gate(&self) -> Option<Arc<Gate>> {
        let started = Instant::now();
        loop {
            if let Some(gate) = self.gate.get() {
                return Some(gate.clone());
            }
            if started.elapsed() > GATE_WAIT {
                return None;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// A refusal as the server sees it: -1, the code MCP gives a rejected sampling request.
fn rejected(denial: &Denial) -> ErrorObject {
    ErrorObject::new(-1, denial.to_string())
        .with_data(json!({"rule": denial.rule, "reason": denial.reason}))
}

impl ClientHandler for Gated {
    fn features(&self) -> ClientFeatures {
        self.inner.features()
    }

    fn create_message(&self, server: &str, mut params: Value) -> Result<Value, ErrorObject> {
        let Some(gate) = self.gate() else {
            return Err(ErrorObject::new(
                -1,
                "the server's policy was not in force yet (its handshake had not completed): rejected",
            ));
        };
        match gate.check(Request::Sampling(&mut params)) {
            Check::Permit(_permit) => {}
            Check::Ask(ticket) => {
                let _permit =
                    futures::executor::block_on(gate.settle(ticket)).map_err(|d| rejected(&d))?;
            }
            Check::Deny(denial) => return Err(rejected(&denial)),
        }
        self.inner.create_message(server, params)
    }

    fn elicit(&self, server: &str, params: Value) -> Result<Value, ErrorObject> {
        self.inner.elicit(server, params)
    }
}
