//! The gate's content screen: credentials in a call's arguments before they leave, and what
//! the model is about to read of a server (results, resources) before it does
//! (docs/policy.md, "Untrusted content" and "Credentials").

use std::sync::Arc;

use serde_json::{Value, json};

use crate::policy::audit::{canonical, digest_hex};
use crate::policy::results::{self, Found};
use crate::policy::taint::TaintSource;
use crate::policy::{Denial, DenialKind, SecretsAction};
use crate::protocol::Tool;

use super::{Gate, lock};

impl Gate {
    /// Whether `secret` is a value the user gave this server (in its `env`).
    fn own_secret(&self, secret: &str) -> bool {
        self.own_secrets
            .iter()
            .any(|v| v.contains(secret) || (v.len() >= 8 && secret.contains(v.as_str())))
    }

    /// Credentials in a call's arguments: refused (the default), redacted in place, or let
    /// through, as the policy's `secrets` says; audited by digest.
    pub(crate) fn screen_arguments(&self, tool: &str, arguments: &mut Value) -> Result<(), Denial> {
        let found = results::secrets_in_arguments(arguments, &|s| self.own_secret(s));
        if found.is_empty() {
            return Ok(());
        }
        let action = self.policy.argument_secrets();
        let kinds: Vec<String> = found
            .iter()
            .map(|s| {
                format!("{} at {}", s.kind, if s.pointer.is_empty() { "/" } else { &s.pointer })
            })
            .collect();
        if let Some(log) = &self.settings.audit {
            // The trail gets the arguments with the credentials taken out, never in clear.
            let mut shown = arguments.clone();
            results::redact_arguments(&mut shown, &found);
            let mut r = self.record("secrets", tool, &shown);
            r.insert("direction".into(), "arguments".into());
            r.insert("action".into(), Value::String(format!("{action:?}").to_lowercase()));
            let listed: Vec<Value> = found
                .iter()
                .map(|s| json!({"location": s.pointer, "kind": s.kind, "sha256": digest_hex(&s.text)}))
                .collect();
            r.insert("secrets".into(), Value::Array(listed));
            let _ = log.record(r);
        }
        match action {
            SecretsAction::Allow => Ok(()),
            SecretsAction::Redact => {
                results::redact_arguments(arguments, &found);
                Ok(())
            }
            SecretsAction::Block => Err(Denial::new(
                "secrets",
                DenialKind::Secrets,
                format!(
                    "the arguments hold credentials ({}); they are not sent to server {:?}. Pass a reference the server resolves itself (its own env), or set the policy's \"secrets\" to \"redact\" or \"allow\"",
                    kinds.join(", "),
                    &*self.server
                ),
            )),
        }
    }

    /// Scans what the model is about to read of this server (a tool's result, a resource's
    /// contents), acts on it as the policy says, marks the session tainted when it is
    /// untrusted, and audits what was found. `what` is the tool's name or `resources/read URI`;
    /// `untrusted` whether its source is untrusted whatever it holds (an open-world tool).
    pub(crate) fn screen(
        &self,
        what: &str,
        untrusted: bool,
        value: &mut Value,
        spilled: Vec<(String, crate::policy::content::stream::Report)>,
    ) -> bool {
        let treatment = self.policy.treatment();
        let mut found: Found =
            results::scan(value, treatment.secrets != SecretsAction::Allow, &|s| {
                self.own_secret(s)
            });
        found.spilled = spilled;
        let digest = if found.injected() || found.has_secrets() || untrusted {
            digest_hex(canonical(value))
        } else {
            String::new()
        };
        let mut changed = false;
        if found.injected() || found.has_secrets() || treatment.delimit {
            changed = results::apply(value, &found, treatment, &self.server, what).changed;
        }
        if found.injected() || untrusted {
            let why = if found.injected() {
                format!("flagged: {}", found.summary(true))
            } else {
                "an open-world or untrusted tool's content".to_owned()
            };
            lock(&self.taint).mark(TaintSource {
                server: self.server.to_string(),
                tool: what.to_owned(),
                why,
                digest: digest.clone(),
            });
        }
        if !(found.injected() || found.has_secrets() || untrusted) {
            return changed;
        }
        if found.injected() {
            tracing::warn!(
                server = &*self.server,
                what,
                "content reads as instructions to the AI: {}",
                found.summary(true)
            );
        }
        let Some(log) = &self.settings.audit else { return changed };
        let mut r = self.record("content", what, &Value::Null);
        r.remove("argsDigest");
        r.insert("contentDigest".into(), Value::String(digest));
        r.insert("untrustedSource".into(), Value::Bool(untrusted));
        r.insert("tainted".into(), Value::Bool(true));
        if let Some(marker) = value.get("_meta").and_then(|m| m.get(results::META_KEY)) {
            r.insert("found".into(), marker.clone());
        }
        let _ = log.record(r);
        changed
    }

    /// Whether tool `name`'s results are untrusted whatever they hold (an open-world tool, or
    /// one the policy lists), by the cached listing.
    pub(crate) fn untrusted_source(&self, list: Option<&Arc<Vec<Tool>>>, name: &str) -> bool {
        let table = list.map(|l| self.listing(l).0);
        self.policy.is_untrusted_source(name, table.as_ref().and_then(|t| t.get(name)))
    }
}
