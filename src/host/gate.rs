//! The security gateway in the call path: every request a [`Client`](super::Client) with a
//! gate sends is decided by its server's [`Policy`] first; what is denied is never written to
//! the server, what needs approval waits for the application's [`Approver`], and every
//! decision and completed call goes to the audit trail (docs/policy.md).

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::policy::audit::{canonical, digest_hex, redact};
use crate::policy::paths::Resolve;

use super::resolve::HostFs;
use crate::policy::pins::{PinDiff, ServerPins};
use crate::policy::results::{self, Found};
use crate::policy::taint::{Taint, TaintSource};
use crate::policy::{
    Denial, DenialKind, GlobalPolicy, Policy, PolicyConfig, RateWindow, SecretsAction, ToolTable,
    Verdict,
};
use crate::protocol::Tool;

use super::audit::AuditLog;
use super::pins::PinStore;

/// Each server sees only its own world: a server whose policy names `roots` is offered those
/// (in `roots/list`) instead of the host's, when the host declares roots at all.
pub(crate) fn scope_roots(session: &mut crate::protocol::SessionConfig, spec: &super::ServerSpec) {
    let Some(roots) = spec.policy.as_ref().and_then(|p| p.roots.as_ref()) else { return };
    if session.roots.is_some() {
        session.roots = Some(
            roots
                .iter()
                .map(|r| crate::protocol::Root {
                    uri: format!("file://{}", r.display()),
                    name: None,
                })
                .collect(),
        );
    }
}

/// A person's answer to a call that needs approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approval {
    /// This call only.
    Once,
    /// This tool, for the rest of the session (this client's life).
    Always,
    /// Refused.
    Deny,
}

/// What the approver is shown.
#[derive(Debug, Clone)]
pub struct ApprovalRequest {
    /// The server.
    pub server: String,
    /// The tool.
    pub tool: String,
    /// The arguments, as the model produced them.
    pub arguments: Value,
    /// The rule that asks (e.g. `tools["write_file"]`, `annotations.destructiveHint`).
    pub rule: String,
    /// The tool's description, when it gave one.
    pub description: Option<String>,
    /// Why it is asked beyond the rule, when there is more to say (the untrusted content that
    /// tainted the session, for `afterUntrusted`).
    pub reason: Option<String>,
}

/// Decides calls that need a person's approval. Runs on a thread of its own, so it may block
/// (a prompt, a dialog); an answer that does not come within the host's approval timeout is a
/// refusal. Approval is only ever this answer: nothing in the model's own arguments counts.
pub trait Approver: Send + Sync + 'static {
    /// The answer for one call.
    fn approve(&self, request: &ApprovalRequest) -> Approval;

    /// Who answered, for the audit trail (e.g. `"terminal"`, `"--approve"`).
    fn name(&self) -> String {
        "application".into()
    }
}

/// Approves the tools whose names match any of these globs (`*`, `?`), refuses the rest: the
/// CLI's `--approve TOOL` without a terminal.
#[derive(Debug, Clone)]
pub struct ApproveMatching(Vec<String>);

impl ApproveMatching {
    /// Approves tools matching `globs`.
    pub fn new(globs: Vec<String>) -> Self {
        ApproveMatching(globs)
    }
}

impl Approver for ApproveMatching {
    fn approve(&self, request: &ApprovalRequest) -> Approval {
        let matched = self.0.iter().any(|g| crate::policy::glob_matches(g, &request.tool));
        if matched { Approval::Once } else { Approval::Deny }
    }

    fn name(&self) -> String {
        "--approve".into()
    }
}

/// The security gateway's settings, for every server of a host (each server's rules are its
/// [`ServerSpec::policy`](super::ServerSpec::policy)).
#[derive(Clone)]
pub struct PolicySettings {
    /// The top-level `"policy"`.
    pub global: GlobalPolicy,
    /// Who approves calls that need it (`None`: they are refused).
    pub approver: Option<Arc<dyn Approver>>,
    /// How long an approval may take (default 5 minutes).
    pub approval_timeout: Duration,
    /// The audit trail, when one is kept.
    pub audit: Option<Arc<AuditLog>>,
    /// Tool pins, when kept.
    pub pins: Option<Arc<PinStore>>,
    /// How symlinks of path arguments are resolved (default: on the host's file system).
    pub resolver: Arc<dyn Resolve>,
}

impl Default for PolicySettings {
    fn default() -> Self {
        PolicySettings {
            global: GlobalPolicy::default(),
            approver: None,
            approval_timeout: Duration::from_secs(300),
            audit: None,
            pins: None,
            resolver: Arc::new(HostFs),
        }
    }
}

impl std::fmt::Debug for PolicySettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicySettings")
            .field("global", &self.global)
            .field("approver", &self.approver.as_ref().map(|a| a.name()))
            .field("approval_timeout", &self.approval_timeout)
            .field("audit", &self.audit.as_ref().map(|a| a.config().path.clone()))
            .field("pins", &self.pins.as_ref().map(|p| p.path().to_owned()))
            .finish_non_exhaustive()
    }
}

/// One listing's compiled facts and its difference from the pins.
struct Listing {
    list: Arc<Vec<Tool>>,
    table: Arc<ToolTable>,
    pins: Arc<PinDiff>,
}

/// What a gate shares with its session and knows of its server's own secrets.
pub(crate) struct SessionTrust {
    /// The session's taint, shared by every gate of the host.
    pub(crate) taint: Arc<Mutex<Taint>>,
    /// Values the user gave the server (its `env`): credentials among them are its own.
    pub(crate) own_secrets: Vec<String>,
    /// The server's `instructions` (pinned with its tools).
    pub(crate) instructions: Option<String>,
}

/// One client's gate.
pub(crate) struct Gate {
    server: Arc<str>,
    pin_key: String,
    policy: Policy,
    settings: PolicySettings,
    instructions: Option<String>,
    always: Mutex<HashSet<String>>,
    /// Tools approved for the session while it was tainted (an earlier "always" does not
    /// cover a call after untrusted content).
    always_tainted: Mutex<HashSet<String>>,
    /// The session's taint, shared by every gate of the host.
    taint: Arc<Mutex<Taint>>,
    /// Values the user gave this server in its `env`: credentials among them are exempt.
    own_secrets: Vec<String>,
    rate: Mutex<RateWindow>,
    listing: Mutex<Option<Listing>>,
    started: Instant,
}

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gate").field("server", &self.server).finish_non_exhaustive()
    }
}

impl Gate {
    pub(crate) fn new(
        server: Arc<str>,
        pin_key: String,
        config: Option<&PolicyConfig>,
        roots: &[PathBuf],
        cwd: Option<PathBuf>,
        settings: PolicySettings,
        trust: SessionTrust,
    ) -> Gate {
        let SessionTrust { taint, own_secrets, instructions } = trust;
        let default = PolicyConfig::default();
        let mut policy = Policy::new(
            &server,
            config.unwrap_or(&default),
            &settings.global,
            roots,
            &*settings.resolver,
        );
        if let Some(cwd) = cwd {
            policy.set_cwd(cwd, &*settings.resolver);
        }
        Gate {
            server,
            pin_key,
            policy,
            settings,
            instructions,
            always: Mutex::default(),
            always_tainted: Mutex::default(),
            taint,
            own_secrets,
            rate: Mutex::default(),
            listing: Mutex::new(None),
            started: Instant::now(),
        }
    }

    /// Whether calls are audited.
    pub(crate) fn audits(&self) -> bool {
        self.settings.audit.is_some()
    }

    /// The compiled facts of `list` (compiled once per listing) and its pins' difference.
    fn listing(&self, list: &Arc<Vec<Tool>>) -> (Arc<ToolTable>, Arc<PinDiff>) {
        let mut cached = self.listing.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(l) = cached.as_ref().filter(|l| Arc::ptr_eq(&l.list, list)) {
            return (l.table.clone(), l.pins.clone());
        }
        let table = Arc::new(ToolTable::new(list));
        let pins = Arc::new(match &self.settings.pins {
            Some(store) => {
                let diff =
                    store.check(&self.pin_key, &ServerPins::of(list, self.instructions.as_deref()));
                if !diff.is_empty() {
                    tracing::warn!(
                        server = &*self.server,
                        "the server's tools differ from their pins (`ringmcp pins diff`): {}",
                        diff.lines().join("; ")
                    );
                }
                diff
            }
            None => PinDiff::default(),
        });
        *cached = Some(Listing { list: list.clone(), table: table.clone(), pins: pins.clone() });
        (table, pins)
    }

    /// Decides a `tools/call` against the listing `list`.
    pub(crate) fn decide(&self, list: &Arc<Vec<Tool>>, name: &str, arguments: &Value) -> Verdict {
        let (table, pins) = self.listing(list);
        if table.is_duplicated(name) {
            let reason = format!(
                "the server listed more than one tool named {name:?}: which definition applies cannot be told"
            );
            return Verdict::Deny(Denial::new("unlisted", DenialKind::Unlisted, reason));
        }
        if let Some(why) = pins.blocks(name) {
            let reason = format!(
                "{why}; review it with `ringmcp pins diff` and accept it with `ringmcp pins accept`"
            );
            return Verdict::Deny(Denial::new("pins", DenialKind::Pinned, reason));
        }
        let facts = table.get(name);
        let verdict = self.policy.check_call(name, arguments, facts, &*self.settings.resolver);
        if matches!(verdict, Verdict::Deny(_)) {
            return verdict;
        }
        let taint = self.taint_source();
        if let Some(after) = self.policy.after_untrusted(name, facts, taint.as_ref()) {
            let approved = lock(&self.always_tainted).contains(name);
            return match after {
                Verdict::Ask { .. } if approved => Verdict::Allow {
                    rule: "approved for the session after untrusted content".into(),
                },
                v => v,
            };
        }
        match verdict {
            Verdict::Ask { .. } if lock(&self.always).contains(name) => {
                Verdict::Allow { rule: "approved for the session".into() }
            }
            v => v,
        }
    }

    /// What tainted the session, if anything has.
    pub(crate) fn taint_source(&self) -> Option<TaintSource> {
        lock(&self.taint).source().cloned()
    }

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

    /// Counts a call against the rate limits.
    pub(crate) fn admit(&self, name: &str) -> Result<(), Denial> {
        if !self.policy.has_rate_limits() {
            return Ok(());
        }
        let now = self.started.elapsed().as_millis() as u64;
        self.rate.lock().unwrap_or_else(PoisonError::into_inner).admit(&self.policy, name, now)
    }

    /// Asks the approver about a call; `Ok(who)` when approved.
    pub(crate) async fn approve(&self, request: ApprovalRequest) -> Result<String, Denial> {
        let Some(approver) = self.settings.approver.clone() else {
            let reason = format!(
                "tool {:?} needs approval ({}) and no approver is set (on the command line: run it on a terminal, or pass --approve {:?})",
                request.tool, request.rule, request.tool
            );
            return Err(Denial::new(request.rule, DenialKind::NotApproved, reason));
        };
        let (tx, rx) = futures_channel::oneshot::channel();
        let asked = request.clone();
        let who = approver.name();
        let spawned =
            std::thread::Builder::new().name("ringmcp-approver".into()).spawn(move || {
                let _ = tx.send(approver.approve(&asked));
            });
        let refused =
            |why: String| Err(Denial::new(request.rule.clone(), DenialKind::NotApproved, why));
        if let Err(e) = spawned {
            return refused(format!("the approver could not run: {e}"));
        }
        let timeout = self.settings.approval_timeout;
        let answer = match futures::future::select(rx, futures_timer::Delay::new(timeout)).await {
            futures::future::Either::Left((Ok(answer), _)) => answer,
            futures::future::Either::Left((Err(_), _)) => Approval::Deny,
            futures::future::Either::Right(_) => {
                return refused(format!("no approval within {timeout:?}: refused"));
            }
        };
        match answer {
            Approval::Once => Ok(who),
            Approval::Always => {
                let set = if request.rule == "afterUntrusted" {
                    &self.always_tainted
                } else {
                    &self.always
                };
                lock(set).insert(request.tool.clone());
                Ok(who)
            }
            Approval::Deny if who == "--approve" => refused(format!(
                "tool {:?} needs approval ({}) and there is no terminal to ask on: pass --approve {:?} to allow it",
                request.tool, request.rule, request.tool
            )),
            Approval::Deny => refused(format!("{who} refused tool {:?}", request.tool)),
        }
    }

    /// Decides a request other than `tools/call` (its path and command arguments; a
    /// `resources/read` of a `file://` URI).
    pub(crate) fn check_request(&self, method: &str, params: Option<&Value>) -> Result<(), Denial> {
        let resolver = &*self.settings.resolver;
        match (method, params) {
            ("resources/read" | "resources/subscribe", Some(p)) => {
                let uri = p.get("uri").and_then(Value::as_str).unwrap_or_default();
                if crate::spill::store::is_spill_uri(uri) {
                    let reason = "a ringmcp-spill:// URI names a payload the host holds for another server's answer; it is never sent to a server";
                    return Err(Denial::new("scope", DenialKind::Rule, reason));
                }
                match self.policy.check_resource(uri, resolver) {
                    Verdict::Deny(d) => Err(d),
                    _ => Ok(()),
                }
            }
            ("prompts/get", Some(p)) => match p.get("arguments") {
                Some(args) => self.policy.check_arguments(None, args, resolver).map_or(Ok(()), Err),
                None => Ok(()),
            },
            ("completion/complete", Some(p)) => {
                let value = p.get("argument").cloned().unwrap_or(Value::Null);
                let named = match (value.get("name").and_then(Value::as_str), value.get("value")) {
                    (Some(n), Some(v)) => json!({ n: v }),
                    _ => Value::Null,
                };
                self.policy.check_arguments(None, &named, resolver).map_or(Ok(()), Err)
            }
            _ => Ok(()),
        }
    }

    /// Records a decision about a call (`approver`: who approved an asked one).
    pub(crate) fn audit_decision(
        &self,
        tool: &str,
        arguments: &Value,
        verdict: &Verdict,
        approver: Option<&str>,
    ) -> Result<(), Denial> {
        let Some(log) = &self.settings.audit else { return Ok(()) };
        let mut r = self.record("decision", tool, arguments);
        r.insert("verdict".into(), Value::String(verdict.action().to_string()));
        r.insert("rule".into(), Value::String(verdict.rule().to_owned()));
        if let Verdict::Deny(d) = verdict {
            r.insert("reason".into(), Value::String(d.reason.clone()));
        }
        if let Some(who) = approver {
            r.insert("approver".into(), Value::String(who.to_owned()));
        }
        if verdict.rule() == "afterUntrusted"
            && let Some(source) = self.taint_source()
        {
            r.insert(
                "taintedBy".into(),
                json!({"server": source.server, "tool": source.tool, "why": source.why, "contentDigest": source.digest}),
            );
        }
        // Fail closed: a call whose decision cannot be recorded is not made.
        log.record(r).map_err(|e| {
            let reason = format!(
                "the audit trail cannot be written ({e}); no call is made without its record"
            );
            Denial::new("audit", DenialKind::Rule, reason)
        })
    }

    /// Records a completed call: its result's digest and size, or its error, and how long it took.
    pub(crate) fn audit_completion(
        &self,
        tool: &str,
        arguments: &Value,
        outcome: Result<&Value, &str>,
        took: Duration,
    ) {
        let Some(log) = &self.settings.audit else { return };
        let mut r = self.record("call", tool, arguments);
        r.insert("durationMs".into(), Value::from(took.as_secs_f64() * 1000.0));
        match outcome {
            Ok(result) => {
                let text = canonical(result);
                r.insert("resultDigest".into(), Value::String(digest_hex(&text)));
                r.insert("resultBytes".into(), Value::from(text.len()));
                let is_error = result.get("isError").and_then(Value::as_bool).unwrap_or(false);
                r.insert("isError".into(), Value::Bool(is_error));
            }
            Err(e) => {
                r.insert("error".into(), Value::String(e.to_owned()));
            }
        }
        // The call was made: a failure to record its outcome is logged by the trail.
        let _ = log.record(r);
    }

    fn record(&self, kind: &str, tool: &str, arguments: &Value) -> Map<String, Value> {
        let mut r = Map::new();
        r.insert("type".into(), kind.into());
        r.insert("server".into(), Value::String(self.server.to_string()));
        r.insert("tool".into(), tool.into());
        r.insert("argsDigest".into(), Value::String(digest_hex(canonical(arguments))));
        if self.settings.audit.as_ref().is_some_and(|a| a.config().include_arguments) {
            r.insert("args".into(), redact(arguments));
        }
        r.insert("policyDigest".into(), Value::String(self.policy.digest().to_owned()));
        r
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
