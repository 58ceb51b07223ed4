//! The policy gate in the call path: every request a [`Client`](super::Client) with a
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
use crate::policy::results;
use crate::policy::taint::{Taint, TaintSource};
use crate::policy::{
    Denial, DenialKind, GlobalPolicy, Policy, PolicyConfig, RateWindow, ToolTable, Verdict,
};
use crate::protocol::{Root, Tool};

use super::approval::{Approval, ApprovalRequest, Approver};
use super::audit::AuditLog;

mod sampling;
mod screen;

use super::pins::PinStore;
pub(crate) use sampling::{GateSlot, Gated};

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

/// The policy gate's settings, for every server of a host (each server's rules are its
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

/// What a server's gate is made of, gathered when the server is started; the gate itself is
/// made once its handshake has told its `instructions` ([`GateInputs::build`]).
pub(crate) struct GateInputs {
    settings: PolicySettings,
    pin_key: String,
    policy: Option<PolicyConfig>,
    roots: Vec<PathBuf>,
    cwd: Option<PathBuf>,
    taint: Arc<Mutex<Taint>>,
    own_secrets: Vec<String>,
}

impl GateInputs {
    /// `roots`: the host's (`file://` URIs); `taint`: the session's, shared by every gate.
    pub(crate) fn of(
        spec: &super::ServerSpec,
        settings: PolicySettings,
        roots: &[Root],
        taint: Arc<Mutex<Taint>>,
    ) -> GateInputs {
        let roots = roots
            .iter()
            .filter_map(|r| r.uri.strip_prefix("file://"))
            .map(|p| percent_encoding::percent_decode_str(p).decode_utf8_lossy().into_owned())
            .map(PathBuf::from)
            .collect();
        // Values the user gave the server: credentials among them are its own to receive.
        let own_secrets = spec
            .launch()
            .map(|l| l.env.iter().map(|(_, v)| v.to_string_lossy().into_owned()).collect())
            .unwrap_or_default();
        // Where the server resolves relative paths (the policy checks them against it too).
        let cwd = spec.launch().and_then(|l| {
            l.cwd.clone().or_else(|| match &l.sandbox {
                Some(s) => Some(s.workspace.clone().unwrap_or_else(|| "/tmp".into())),
                None => std::env::current_dir().ok(),
            })
        });
        GateInputs {
            settings,
            pin_key: spec.identity(),
            policy: spec.policy.clone(),
            roots,
            cwd,
            taint,
            own_secrets,
        }
    }

    /// The gate of server `server`, whose handshake gave `instructions`.
    pub(crate) fn build(self, server: Arc<str>, instructions: Option<String>) -> Arc<Gate> {
        let GateInputs { settings, pin_key, policy, roots, cwd, taint, own_secrets } = self;
        let own_secrets = own_secrets.into_iter().filter(|v| v.len() >= 8).collect();
        let trust = SessionTrust { taint, own_secrets, instructions };
        Arc::new(Gate::new(server, pin_key, policy.as_ref(), &roots, cwd, settings, trust))
    }
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

/// A request about to be sent, as the gate decides it ([`Gate::check`]).
pub(crate) enum Request<'a> {
    /// A `tools/call`, decided against the server's listing (`None`: none fetched yet, or a
    /// stale one). Credentials in `arguments` are redacted in place when the policy says so.
    Call { list: Option<&'a Arc<Vec<Tool>>>, name: &'a str, arguments: &'a mut Value },
    /// Any other request, or a notification, by method.
    Method { method: &'a str, params: Option<&'a Value> },
    /// The roots the client is about to announce (each must lie inside the policy's roots).
    Roots(&'a [Root]),
    /// A server's `sampling/createMessage` request, about to reach the application's handler
    /// (its `maxTokens` lowered in place to the policy's cap).
    Sampling(&'a mut Value),
}

/// What a sampling request is called in approvals and the audit trail.
pub(crate) const SAMPLING: &str = "sampling/createMessage";

/// The gate's answer about a request.
#[must_use]
pub(crate) enum Check {
    /// Send it.
    Permit(Permit),
    /// Put it to the approver first ([`Gate::settle`]).
    Ask(Ticket),
    /// Refused (and recorded).
    Deny(Denial),
}

/// Proof that a request passed its client's gate, or that the client has none: what the
/// client's `send` takes. Only this module makes one.
#[derive(Debug)]
#[must_use]
pub(crate) struct Permit(());

/// A call waiting for approval.
#[derive(Debug)]
#[must_use]
pub(crate) struct Ticket {
    request: ApprovalRequest,
}

/// [`Gate::check`] for a request that cannot wait for approval, of a client that may have no
/// gate (without one, every request passes): a call that needs approval is refused.
pub(crate) fn check_now(gate: Option<&Gate>, request: Request<'_>) -> Result<Permit, Denial> {
    let Some(gate) = gate else { return Ok(Permit(())) };
    match gate.check(request) {
        Check::Permit(permit) => Ok(permit),
        Check::Ask(ticket) => Err(gate.unasked(ticket)),
        Check::Deny(denial) => Err(denial),
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

    /// Decides a request, in the documented order (docs/policy.md): for a call, the listing,
    /// the pins and the rules, then credentials in its arguments, then the rate limits, then
    /// approval, which is the caller's to wait for ([`Gate::settle`]). Every decision on a
    /// call is recorded here; a call whose record cannot be written is refused
    /// ([`DenialKind::Audit`]).
    pub(crate) fn check(&self, request: Request<'_>) -> Check {
        match request {
            Request::Call { list, name, arguments } => self.check_call(list, name, arguments),
            Request::Method { method, params } => match self.check_method(method, params) {
                Ok(()) => Check::Permit(Permit(())),
                Err(d) => Check::Deny(self.refused(method, params.unwrap_or(&Value::Null), d)),
            },
            Request::Roots(roots) => {
                let resolver = &*self.settings.resolver;
                for root in roots {
                    if let Verdict::Deny(d) = self.policy.check_resource(&root.uri, resolver) {
                        let params = json!({"roots": [{"uri": root.uri}]});
                        return Check::Deny(self.refused("roots", &params, d));
                    }
                }
                Check::Permit(Permit(()))
            }
            Request::Sampling(params) => self.check_sampling(params),
        }
    }

    fn check_sampling(&self, params: &mut Value) -> Check {
        let verdict = match self.policy.check_sampling(params) {
            Verdict::Ask { .. } if lock(&self.always).contains(SAMPLING) => {
                Verdict::Allow { rule: "sampling approved for the session".into() }
            }
            v => v,
        };
        match verdict {
            Verdict::Deny(d) => Check::Deny(self.refused(SAMPLING, params, d)),
            Verdict::Ask { rule } => Check::Ask(Ticket {
                request: ApprovalRequest {
                    server: self.server.to_string(),
                    tool: SAMPLING.into(),
                    arguments: params.clone(),
                    rule,
                    description: Some(
                        "the server asks your model to write a message (its messages, system prompt and maxTokens are the arguments)"
                            .into(),
                    ),
                    reason: None,
                },
            }),
            verdict => match self.permitted(SAMPLING, params, &verdict, None) {
                Ok(permit) => Check::Permit(permit),
                Err(d) => Check::Deny(d),
            },
        }
    }

    fn check_call(
        &self,
        list: Option<&Arc<Vec<Tool>>>,
        name: &str,
        arguments: &mut Value,
    ) -> Check {
        let Some(list) = list else {
            let reason = "a raw tools/call is checked against the server's tool list, which was not fetched yet: \
                          call Client::tools first, or use Client::call";
            let denial = Denial::new("unlisted", DenialKind::Unlisted, reason);
            return Check::Deny(self.refused(name, arguments, denial));
        };
        let verdict = self.decide(list, name, arguments);
        if let Verdict::Deny(d) = verdict {
            return Check::Deny(self.refused(name, arguments, d));
        }
        // Credentials in the arguments: refused, or redacted before anyone (the approver
        // included) sees them. The trail never gets them in clear.
        if let Err(d) = self.screen_arguments(name, arguments) {
            let mut shown = arguments.clone();
            let found = results::secrets_in_arguments(&shown, &|_| false);
            results::redact_arguments(&mut shown, &found);
            return Check::Deny(self.refused(name, &shown, d));
        }
        if let Err(d) = self.admit(name) {
            return Check::Deny(self.refused(name, arguments, d));
        }
        match verdict {
            Verdict::Ask { rule } => {
                let description =
                    list.iter().find(|t| t.name == name).and_then(|t| t.description.clone());
                let reason =
                    (rule == "afterUntrusted").then(|| self.taint_source()).flatten().map(|t| {
                        format!(
                            "this session has read untrusted content: {t}; the tool is high-impact"
                        )
                    });
                Check::Ask(Ticket {
                    request: ApprovalRequest {
                        server: self.server.to_string(),
                        tool: name.to_owned(),
                        arguments: arguments.clone(),
                        rule,
                        description,
                        reason,
                    },
                })
            }
            verdict => match self.permitted(name, arguments, &verdict, None) {
                Ok(permit) => Check::Permit(permit),
                Err(d) => Check::Deny(d),
            },
        }
    }

    /// Puts a call waiting for approval to the approver; its permit when approved. Recorded
    /// either way.
    pub(crate) async fn settle(&self, ticket: Ticket) -> Result<Permit, Denial> {
        let Ticket { request } = ticket;
        let (tool, arguments) = (&request.tool, &request.arguments);
        match self.approve(&request).await {
            Ok(who) => {
                let verdict = Verdict::Ask { rule: request.rule.clone() };
                self.permitted(tool, arguments, &verdict, Some(&who))
            }
            Err(d) => Err(self.refused(tool, arguments, d)),
        }
    }

    /// A call waiting for approval where nothing can wait for it (a raw request): refused,
    /// and recorded.
    fn unasked(&self, ticket: Ticket) -> Denial {
        let Ticket { request } = ticket;
        let reason = format!(
            "tool {:?} needs approval, which a raw request cannot wait for: use Client::call",
            request.tool
        );
        let denial = Denial::new(request.rule.clone(), DenialKind::NotApproved, reason);
        self.refused(&request.tool, &request.arguments, denial)
    }

    /// A refusal, recorded (a refusal whose record fails is still a refusal).
    fn refused(&self, what: &str, arguments: &Value, denial: Denial) -> Denial {
        let _ = self.audit_decision(what, arguments, &Verdict::Deny(denial.clone()), None);
        denial
    }

    /// A call let through: recorded, then its permit; refused when the record cannot be
    /// written.
    fn permitted(
        &self,
        tool: &str,
        arguments: &Value,
        verdict: &Verdict,
        approver: Option<&str>,
    ) -> Result<Permit, Denial> {
        self.audit_decision(tool, arguments, verdict, approver).map(|()| Permit(()))
    }

    /// Counts a call against the rate limits.
    fn admit(&self, name: &str) -> Result<(), Denial> {
        if !self.policy.has_rate_limits() {
            return Ok(());
        }
        let now = self.started.elapsed().as_millis() as u64;
        self.rate.lock().unwrap_or_else(PoisonError::into_inner).admit(&self.policy, name, now)
    }

    /// Asks the approver about a call; `Ok(who)` when approved.
    async fn approve(&self, request: &ApprovalRequest) -> Result<String, Denial> {
        let refused =
            |why: String| Err(Denial::new(request.rule.clone(), DenialKind::NotApproved, why));
        let Some(approver) = self.settings.approver.clone() else {
            return refused(format!(
                "tool {:?} needs approval ({}) and no approver is set (on the command line: run it on a terminal, or pass --approve {:?})",
                request.tool, request.rule, request.tool
            ));
        };
        let (tx, rx) = futures_channel::oneshot::channel();
        let asked = request.clone();
        let asker = approver.clone();
        let spawned =
            std::thread::Builder::new().name("ringmcp-approver".into()).spawn(move || {
                let _ = tx.send(asker.approve(&asked));
            });
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
            Approval::Once => Ok(approver.name()),
            Approval::Always => {
                let set = if request.rule == "afterUntrusted" {
                    &self.always_tainted
                } else {
                    &self.always
                };
                lock(set).insert(request.tool.clone());
                Ok(approver.name())
            }
            Approval::Deny => refused(approver.refusal(request)),
        }
    }

    /// Decides a request other than `tools/call` (its path and command arguments; a
    /// `resources/read` or `resources/subscribe` of a `file://` URI).
    fn check_method(&self, method: &str, params: Option<&Value>) -> Result<(), Denial> {
        let resolver = &*self.settings.resolver;
        match (method, params) {
            ("resources/read" | "resources/subscribe", Some(p)) => {
                let uri = p.get("uri").and_then(Value::as_str).unwrap_or_default();
                // One of another process's store is the server's (a gateway's large result).
                if crate::spill::store::is_own_spill_uri(uri) {
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

    /// Records a decision (`approver`: who approved an asked call). `Err` when the trail
    /// cannot be written.
    fn audit_decision(
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
                "the audit trail cannot be written ({e}); no call is made without its record: \
                 free space or fix the trail's permissions, then retry"
            );
            Denial::new("audit", DenialKind::Audit, reason)
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

#[cfg(test)]
mod tests;
