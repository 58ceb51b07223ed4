//! The handshake: era detection (`server/discover` probe, then `initialize` if need be; the
//! probe's answer is handled in `rounds`), and the `_meta` every 2026-07-28 request carries.

use std::time::Instant;

use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::lifecycle::State;
use super::modern;
use super::{Era, ProtocolVersion, Session};

impl<T> Session<T> {
    /// Starts the handshake: `server/discover` or `initialize`, as [`SessionConfig::era`](super::SessionConfig::era)
    /// says. `token` completes with the raw `DiscoverResult` or `InitializeResult` once the
    /// revision is settled (the session is then `Active`; after `initialize`,
    /// `notifications/initialized` is queued).
    pub fn handshake(&mut self, now: Instant, token: T) {
        self.clock = Some(now);
        match self.config.era {
            Era::Legacy => self.initialize(now, token),
            Era::Auto => self.discover(now, token, ProtocolVersion::LATEST_MODERN, true, false),
            Era::Modern => self.discover(now, token, ProtocolVersion::LATEST_MODERN, false, false),
        }
    }

    /// Sends `server/discover` asking for `version`.
    pub(super) fn discover(
        &mut self,
        now: Instant,
        token: T,
        version: ProtocolVersion,
        fallback: bool,
        retried: bool,
    ) {
        let id = self.peek_id();
        let line = modern::encode_with_meta(id, "server/discover", None, self.meta_json(version))
            .expect("no params to splice into");
        self.state = State::Discovering { request: id, version, fallback, retried };
        let timeout = fallback.then_some(self.config.probe_timeout);
        self.send_line(id, "server/discover", line.into(), now, timeout, token);
    }

    /// The `_meta` of a request in `version`, as JSON text: built once and reused until the
    /// log level changes (it is spliced into every request of the stateless era).
    pub(super) fn meta_json(&mut self, version: ProtocolVersion) -> &str {
        if self.meta_cache.as_ref().is_none_or(|(v, _)| *v != version) {
            let caps =
                modern::client_capabilities(self.config.features, self.config.roots.as_deref());
            let meta = modern::request_meta(
                version,
                &caps,
                &self.config.client_info,
                self.log_level.as_deref(),
            );
            self.meta_cache = Some((version, Value::Object(meta).to_string()));
        }
        &self.meta_cache.as_ref().expect("just filled").1
    }

    /// The negotiated revision when it is a stateless one.
    pub(super) fn modern(&self) -> Option<ProtocolVersion> {
        match &self.state {
            State::Active(d) if d.version.is_modern() => Some(d.version),
            _ => None,
        }
    }

    /// The revision an HTTP transport must name in its headers now: the one `server/discover`
    /// asks for while probing, none during `initialize`, the negotiated one once `Active`.
    pub fn wire_version(&self) -> Option<ProtocolVersion> {
        match &self.state {
            State::Discovering { version, .. } => Some(*version),
            State::Active(d) => Some(d.version),
            _ => None,
        }
    }

    /// Sends `initialize` (whatever [`SessionConfig::era`](super::SessionConfig::era) says; [`handshake`] follows it).
    /// `token` completes with the raw `InitializeResult` once the version is accepted (the
    /// session is then `Active` and `notifications/initialized` is queued).
    ///
    /// [`handshake`]: Self::handshake
    pub fn initialize(&mut self, now: Instant, token: T) {
        self.clock = Some(now);
        let mut capabilities = json!({});
        if self.config.roots.is_some() {
            capabilities["roots"] = json!({ "listChanged": true });
        }
        let f = self.config.features;
        if f.sampling {
            capabilities["sampling"] = json!({});
        }
        match (f.elicitation_form, f.elicitation_url) {
            // `{}` means form mode only.
            (true, false) => capabilities["elicitation"] = json!({}),
            (form, true) => {
                let mut modes = json!({ "url": {} });
                if form {
                    modes["form"] = json!({});
                }
                capabilities["elicitation"] = modes;
            }
            (false, false) => {}
        }
        let params = json!({
            "protocolVersion": self.config.offer.as_str(),
            "capabilities": capabilities,
            "clientInfo": self.config.client_info,
        });
        let raw = RawValue::from_string(params.to_string()).expect("serde_json output is JSON");
        let id = self.peek_id();
        let state = std::mem::replace(&mut self.state, State::Uninitialized);
        self.state = state.begin(id, self.config.offer);
        self.send_request(id, "initialize", Some(&raw), now, None, token);
    }
}
