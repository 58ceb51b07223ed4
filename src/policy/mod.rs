//! The policy gate's decisions, without I/O: the model proposes, the host disposes.
//!
//! A [`Policy`] is one server's rules, compiled from its `"policy"` config (docs/policy.md).
//! [`Policy::check_call`] decides a `tools/call` from the tool's name, its arguments and the
//! [`ToolFacts`] of its listed definition: allow, ask (a person must agree), or deny with the
//! rule and the reason. It reads no clock (rate limits take the time as an argument), no file
//! (symlinks are resolved through the [`paths::Resolve`] the host passes in), no network.
//! The host's gate (`host/gate.rs`) enforces what it decides: a denied request is never written
//! to the server.

#![forbid(unsafe_code)]

pub(crate) mod args;
pub mod audit;
pub mod config;
pub mod content;
pub mod egress;
mod glob;
pub mod paths;
pub mod pins;
pub mod poison;
pub mod results;
pub mod schema;
pub mod taint;

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;

use serde_json::Value;

use crate::protocol::Tool;

pub use config::{
    Action, AuditConfig, FsyncPolicy, GlobalPolicy, OnInjection, PolicyConfig, ResultsConfig,
    SecretsAction,
};
use glob::PatternTable;

/// The JSON-RPC error code of a request the policy refused for its own reasons (a rule, a
/// missing approval, a changed definition, a rate limit); arguments that fail a check get
/// -32602 (invalid params) instead.
pub const POLICY_DENIED: i64 = -32001;

/// What the policy decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Send it; `rule` says why.
    Allow {
        /// The rule that allowed it.
        rule: String,
    },
    /// Send it only if a person agrees.
    Ask {
        /// The rule that asks.
        rule: String,
    },
    /// Do not send it.
    Deny(Denial),
}

impl Verdict {
    /// The rule behind the verdict.
    pub fn rule(&self) -> &str {
        match self {
            Verdict::Allow { rule } | Verdict::Ask { rule } => rule,
            Verdict::Deny(d) => &d.rule,
        }
    }

    /// `allow`, `ask` or `deny`.
    pub fn action(&self) -> Action {
        match self {
            Verdict::Allow { .. } => Action::Allow,
            Verdict::Ask { .. } => Action::Ask,
            Verdict::Deny(_) => Action::Deny,
        }
    }
}

/// The most tokens a server's sampling request may ask for unless its policy says otherwise.
pub const DEFAULT_SAMPLING_MAX_TOKENS: u64 = 4096;

/// A refusal: the rule, and what the caller is told.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("denied by policy ({rule}): {reason}")]
pub struct Denial {
    /// The rule, e.g. `tools["delete_*"]`, `inputSchema`, `roots`, `commandArgs`, `unlisted`.
    pub rule: String,
    /// Why, in words a user can act on.
    pub reason: String,
    /// What kind of refusal (it sets the JSON-RPC code).
    pub kind: DenialKind,
}

/// The kinds of refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DenialKind {
    /// A `deny` rule, or a default of `deny`.
    Rule,
    /// The arguments fail the tool's `inputSchema`.
    InvalidArguments,
    /// A path argument leaves the allowed roots.
    Path,
    /// A command-like or SQL argument holds refused characters.
    Metacharacters,
    /// The server never listed the tool.
    Unlisted,
    /// Approval was needed and not given.
    NotApproved,
    /// The tool's definition changed since it was pinned.
    Pinned,
    /// The tool's definition holds hidden instructions and the policy blocks those.
    Poisoned,
    /// Too many calls in the last minute.
    RateLimited,
    /// The arguments hold credentials and the policy keeps them from leaving.
    Secrets,
    /// The audit trail could not be written, and no call is made without its record: an I/O
    /// failure of the host, not a rule.
    Audit,
}

impl Denial {
    pub(crate) fn new(
        rule: impl Into<String>,
        kind: DenialKind,
        reason: impl Into<String>,
    ) -> Self {
        Denial { rule: rule.into(), reason: reason.into(), kind }
    }

    /// The JSON-RPC error code a gateway answers with.
    pub fn code(&self) -> i64 {
        match self.kind {
            DenialKind::InvalidArguments | DenialKind::Path | DenialKind::Metacharacters => {
                crate::jsonrpc::codes::INVALID_PARAMS
            }
            DenialKind::Audit => crate::jsonrpc::codes::INTERNAL_ERROR,
            _ => POLICY_DENIED,
        }
    }
}

/// What the policy knows of one listed tool: compiled once per tool-list epoch.
#[derive(Debug)]
pub struct ToolFacts {
    /// The annotations' hints the server actually sent.
    pub read_only: Option<bool>,
    /// `destructiveHint`.
    pub destructive: Option<bool>,
    /// `openWorldHint`.
    pub open_world: Option<bool>,
    /// The compiled `inputSchema`.
    pub input: schema::Compiled,
    /// The `inputSchema` as listed (for the argument kinds its `format`s declare).
    pub input_schema: Value,
    /// What the poisoning scan found in the definition.
    pub findings: Vec<poison::Finding>,
}

impl ToolFacts {
    /// The facts of a listed tool (its definition scanned alone).
    pub fn of(tool: &Tool) -> ToolFacts {
        let mut facts = ToolFacts::of_unscanned(tool);
        facts.findings = poison::scan_tool(tool);
        facts
    }

    fn of_unscanned(tool: &Tool) -> ToolFacts {
        let hint = |name: &str| {
            tool.annotations.as_ref().and_then(|a| a.get(name)).and_then(Value::as_bool)
        };
        ToolFacts {
            read_only: hint("readOnlyHint"),
            destructive: hint("destructiveHint"),
            open_world: hint("openWorldHint"),
            input: schema::compile(&tool.input_schema, "inputSchema"),
            input_schema: tool.input_schema.clone(),
            findings: Vec::new(),
        }
    }
}

/// The facts of every tool of one listing, by name.
#[derive(Debug, Default)]
pub struct ToolTable {
    by_name: HashMap<String, ToolFacts>,
    /// Names listed more than once: which definition a client or a model goes by is anyone's
    /// guess, so calls to them are refused.
    duplicated: std::collections::HashSet<String>,
}

impl ToolTable {
    /// Compiles the facts of each tool of a listing.
    pub fn new(tools: &[Tool]) -> ToolTable {
        let mut table = ToolTable::default();
        let findings = poison::scan_listing(tools, &[]);
        for (t, findings) in tools.iter().zip(findings) {
            let mut facts = ToolFacts::of_unscanned(t);
            facts.findings = findings;
            if table.by_name.insert(t.name.clone(), facts).is_some() {
                table.duplicated.insert(t.name.clone());
            }
        }
        for name in &table.duplicated {
            table.by_name.remove(name);
        }
        table
    }

    /// The facts of tool `name`, if it was listed (once).
    pub fn get(&self, name: &str) -> Option<&ToolFacts> {
        self.by_name.get(name)
    }

    /// Whether the listing holds more than one tool named `name`.
    pub fn is_duplicated(&self, name: &str) -> bool {
        self.duplicated.contains(name)
    }
}

/// Whether tool name `name` matches `pattern` (`*` any run of characters, `?` one).
pub fn glob_matches(pattern: &str, name: &str) -> bool {
    glob::Pattern::new(pattern).matches(name)
}

/// One server's compiled policy.
#[derive(Debug)]
pub struct Policy {
    server: String,
    tools: PatternTable<Action>,
    default: Option<Action>,
    global_default: Option<Action>,
    roots: Option<paths::Roots>,
    kinds: args::ArgKinds,
    trust_annotations: bool,
    allow_metachars: String,
    rate_limits: PatternTable<u32>,
    block_poisoned: bool,
    treatment: results::Treatment,
    argument_secrets: SecretsAction,
    after_untrusted: Action,
    sampling: Action,
    sampling_max_tokens: u64,
    high_impact: Vec<glob::Pattern>,
    untrusted: Vec<glob::Pattern>,
    digest: String,
}

impl Policy {
    /// Compiles server `server`'s policy. `roots` are the folders path arguments must stay
    /// beneath when the policy names none (the roots offered to the server); every root is
    /// resolved through `resolver`.
    pub fn new(
        server: &str,
        config: &PolicyConfig,
        global: &GlobalPolicy,
        roots: &[PathBuf],
        resolver: &dyn paths::Resolve,
    ) -> Policy {
        // Configured roots confine (an empty list allows no path); otherwise the roots offered
        // to the server do; with neither there is nothing to confine to.
        let roots = match (&config.roots, roots) {
            (Some(configured), _) => Some(paths::Roots::new(configured, None, resolver)),
            (None, []) => None,
            (None, offered) => Some(paths::Roots::new(offered, None, resolver)),
        };
        let in_force = serde_json::json!({"server": server, "policy": config, "global": global});
        Policy {
            server: server.to_owned(),
            tools: PatternTable::new(config.tools.clone()),
            default: config.default,
            global_default: global.default,
            roots,
            kinds: args::ArgKinds {
                path_args: config.path_args.clone(),
                command_args: config.command_args.clone(),
                sql_args: config.sql_args.clone(),
            },
            allow_metachars: config.allow_metachars.clone().unwrap_or_default(),
            trust_annotations: config.trust_annotations.unwrap_or(true),
            rate_limits: PatternTable::new(config.rate_limits.clone()),
            block_poisoned: config.block_poisoned.or(global.block_poisoned).unwrap_or(false),
            treatment: {
                let results = |f: fn(&ResultsConfig) -> Option<_>| {
                    config.results.as_ref().and_then(f).or(global.results.as_ref().and_then(f))
                };
                let delimit = config
                    .results
                    .as_ref()
                    .and_then(|r| r.delimit)
                    .or(global.results.as_ref().and_then(|r| r.delimit));
                results::Treatment {
                    on_injection: results(|r| r.on_injection).unwrap_or_default(),
                    secrets: config.secrets.or(global.secrets).unwrap_or(SecretsAction::Redact),
                    delimit: delimit.unwrap_or(false),
                }
            },
            argument_secrets: config.secrets.or(global.secrets).unwrap_or(SecretsAction::Block),
            after_untrusted: config
                .after_untrusted
                .or(global.after_untrusted)
                .unwrap_or(Action::Ask),
            sampling: config.sampling.or(global.sampling).unwrap_or(Action::Ask),
            sampling_max_tokens: config.sampling_max_tokens.unwrap_or(DEFAULT_SAMPLING_MAX_TOKENS),
            high_impact: config.high_impact.iter().map(|p| glob::Pattern::new(p)).collect(),
            untrusted: config.untrusted.iter().map(|p| glob::Pattern::new(p)).collect(),
            digest: audit::digest_hex(audit::canonical(&in_force)),
        }
    }

    /// The policy when none is configured: allow, except what annotations say to ask about.
    pub fn builtin(server: &str) -> Policy {
        Policy::new(
            server,
            &PolicyConfig::default(),
            &GlobalPolicy::default(),
            &[],
            &paths::Lexical,
        )
    }

    /// The server this policy is for.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The roots path arguments are confined to, as configured (`None`: no confinement).
    pub fn roots(&self) -> Option<&[PathBuf]> {
        self.roots.as_ref().map(paths::Roots::paths)
    }

    /// Where the server resolves relative paths: they are checked against it as well as
    /// against the first root.
    pub fn set_cwd(&mut self, cwd: PathBuf, resolver: &dyn paths::Resolve) {
        if let Some(roots) = &self.roots {
            self.roots = Some(paths::Roots::new(roots.paths(), Some(cwd), resolver));
        }
    }

    /// The SHA-256 of the policy in force (recorded with every audit record).
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// The action for tool `name`, and the rule that chose it. Precedence: an explicit `tools`
    /// rule, then the annotations the server sent (destructive or open-world: ask; read-only:
    /// allow), then the server's default, then the top-level default, then allow.
    pub fn action_for(&self, name: &str, facts: Option<&ToolFacts>) -> (Action, String) {
        if let Some((pattern, action)) = self.tools.lookup(name) {
            return (*action, format!("tools[{:?}]", pattern.as_str()));
        }
        if let Some(f) = facts.filter(|_| self.trust_annotations) {
            if f.destructive == Some(true) {
                return (Action::Ask, "annotations.destructiveHint".into());
            }
            if f.open_world == Some(true) {
                return (Action::Ask, "annotations.openWorldHint".into());
            }
            if f.read_only == Some(true) {
                return (Action::Allow, "annotations.readOnlyHint".into());
            }
        }
        if let Some(action) = self.default {
            return (action, "default".into());
        }
        if let Some(action) = self.global_default {
            return (action, "policy.default".into());
        }
        (Action::Allow, "builtin".into())
    }

    /// Decides a `tools/call` of `name` with `arguments`; `facts` is its listed definition
    /// (`None`: the server did not list it).
    pub fn check_call(
        &self,
        name: &str,
        arguments: &Value,
        facts: Option<&ToolFacts>,
        resolver: &dyn paths::Resolve,
    ) -> Verdict {
        let Some(facts) = facts else {
            let reason = format!(
                "the server {:?} did not list a tool named {name:?} (list its tools to see what it offers)",
                self.server
            );
            return Verdict::Deny(Denial::new("unlisted", DenialKind::Unlisted, reason));
        };
        let (action, rule) = self.action_for(name, Some(facts));
        if action == Action::Deny {
            let reason = format!("tool {name:?} of server {:?} is denied by {rule}", self.server);
            return Verdict::Deny(Denial::new(rule, DenialKind::Rule, reason));
        }
        if let Some(errors) = schema::errors(&facts.input, arguments) {
            let reason = format!("the arguments do not match the tool's inputSchema: {errors}");
            return Verdict::Deny(Denial::new("inputSchema", DenialKind::InvalidArguments, reason));
        }
        if let Some(denial) = self.check_arguments(Some(&facts.input_schema), arguments, resolver) {
            return Verdict::Deny(denial);
        }
        if self.block_poisoned && !facts.findings.is_empty() {
            let found: Vec<String> = facts.findings.iter().map(ToString::to_string).collect();
            let reason = format!("the tool's definition looks poisoned: {}", found.join("; "));
            return Verdict::Deny(Denial::new("blockPoisoned", DenialKind::Poisoned, reason));
        }
        match action {
            Action::Ask => Verdict::Ask { rule },
            _ => Verdict::Allow { rule },
        }
    }

    /// The path, command and SQL checks of any request's arguments (a tool's, a prompt's, a
    /// completion's): the first refusal.
    pub fn check_arguments(
        &self,
        input_schema: Option<&Value>,
        arguments: &Value,
        resolver: &dyn paths::Resolve,
    ) -> Option<Denial> {
        let (paths, commands, sql) = args::classify(&self.kinds, input_schema, arguments);
        for found in paths {
            if let Some(why) = paths::outside_roots(found.value, self.roots.as_ref(), resolver) {
                let reason = format!("argument {}: {why}", found.pointer);
                return Some(Denial::new("roots", DenialKind::Path, reason));
            }
        }
        for found in commands {
            if let Some(what) = args::metachar(found.value, &self.allow_metachars) {
                let reason = format!(
                    "argument {} is command-like and holds {what}, which could run another command",
                    found.pointer
                );
                return Some(Denial::new("commandArgs", DenialKind::Metacharacters, reason));
            }
        }
        for found in sql {
            if let Some(what) = args::sql_problem(found.value) {
                let reason = format!("argument {} is SQL and holds {what}", found.pointer);
                return Some(Denial::new("sqlArgs", DenialKind::Metacharacters, reason));
            }
        }
        None
    }

    /// Decides a `resources/read` of `uri`: a `file://` URI must stay beneath the roots.
    pub fn check_resource(&self, uri: &str, resolver: &dyn paths::Resolve) -> Verdict {
        if paths::is_file_url(uri)
            && let Some(why) = paths::outside_roots(uri, self.roots.as_ref(), resolver)
        {
            return Verdict::Deny(Denial::new("roots", DenialKind::Path, why));
        }
        Verdict::Allow { rule: "builtin".into() }
    }

    /// How this server's results are treated (injections, credentials, delimiters).
    pub fn treatment(&self) -> results::Treatment {
        self.treatment
    }

    /// What a credential in a call's arguments gets (default: the call is refused).
    pub fn argument_secrets(&self) -> SecretsAction {
        self.argument_secrets
    }

    /// Whether tool `name` is high-impact: named in `highImpact`, or (when annotations are
    /// trusted) destructive, or an open-world tool that is not read-only.
    pub fn is_high_impact(&self, name: &str, facts: Option<&ToolFacts>) -> bool {
        if self.high_impact.iter().any(|p| p.matches(name)) {
            return true;
        }
        let Some(f) = facts.filter(|_| self.trust_annotations) else { return false };
        let writes = f.read_only != Some(true);
        writes && (f.destructive == Some(true) || f.open_world == Some(true))
    }

    /// Whether tool `name`'s results are untrusted content: named in `untrusted`, or an
    /// open-world tool (its `openWorldHint`, whether or not annotations are trusted: a server
    /// saying its tool reads the open world is believed).
    pub fn is_untrusted_source(&self, name: &str, facts: Option<&ToolFacts>) -> bool {
        self.untrusted.iter().any(|p| p.matches(name))
            || facts.is_some_and(|f| f.open_world == Some(true))
    }

    /// The verdict on a high-impact tool once the session read untrusted content
    /// (`afterUntrusted`): `None` when the tool is not high-impact, the session is clean, or
    /// the policy allows it anyway.
    pub fn after_untrusted(
        &self,
        name: &str,
        facts: Option<&ToolFacts>,
        taint: Option<&taint::TaintSource>,
    ) -> Option<Verdict> {
        let source = taint?;
        if !self.is_high_impact(name, facts) {
            return None;
        }
        match self.after_untrusted {
            Action::Allow => None,
            Action::Ask => Some(Verdict::Ask { rule: "afterUntrusted".into() }),
            Action::Deny => {
                let reason = format!(
                    "tool {name:?} of server {:?} is high-impact and this session has read untrusted content ({source}); the policy's afterUntrusted denies it",
                    self.server
                );
                Some(Verdict::Deny(Denial::new("afterUntrusted", DenialKind::Rule, reason)))
            }
        }
    }

    /// The verdict on a `sampling/createMessage` request of this server (`sampling`), with
    /// its `maxTokens` lowered in place to the policy's cap (`samplingMaxTokens`).
    pub fn check_sampling(&self, params: &mut serde_json::Value) -> Verdict {
        if let Some(asked) = params.get("maxTokens").and_then(serde_json::Value::as_u64)
            && asked > self.sampling_max_tokens
        {
            params["maxTokens"] = self.sampling_max_tokens.into();
        }
        match self.sampling {
            Action::Allow => Verdict::Allow { rule: "sampling".into() },
            Action::Ask => Verdict::Ask { rule: "sampling".into() },
            Action::Deny => {
                let reason = format!(
                    "server {:?} asked the model to write a message (sampling/createMessage) and its policy's sampling denies it",
                    self.server
                );
                Verdict::Deny(Denial::new("sampling", DenialKind::Rule, reason))
            }
        }
    }

    /// The calls-per-minute limit of tool `name`, if one applies.
    pub fn rate_limit(&self, name: &str) -> Option<(String, u32)> {
        self.rate_limits.lookup(name).map(|(p, n)| (format!("rateLimits[{:?}]", p.as_str()), *n))
    }

    /// Whether any rate limit is configured.
    pub fn has_rate_limits(&self) -> bool {
        !self.rate_limits.is_empty()
    }
}

/// The calls of the last minute, per rate-limit rule (the state the policy's rate limits
/// need; time is passed in, in milliseconds of any monotonic clock).
#[derive(Debug, Default)]
pub struct RateWindow {
    calls: HashMap<String, VecDeque<u64>>,
}

impl RateWindow {
    /// Counts a call of `name` at `now_ms` if the policy's limit allows it; the refusal
    /// otherwise (the call is not counted).
    pub fn admit(&mut self, policy: &Policy, name: &str, now_ms: u64) -> Result<(), Denial> {
        let Some((rule, limit)) = policy.rate_limit(name) else { return Ok(()) };
        if limit == 0 {
            let reason = format!("tool {name:?} is limited to 0 calls a minute by {rule}");
            return Err(Denial::new(rule, DenialKind::RateLimited, reason));
        }
        let window = self.calls.entry(rule.clone()).or_default();
        while window.front().is_some_and(|&t| now_ms.saturating_sub(t) >= 60_000) {
            window.pop_front();
        }
        if window.len() >= limit as usize {
            let wait = 60_000 - now_ms.saturating_sub(*window.front().expect("at the limit"));
            let reason = format!(
                "tool {name:?} is limited to {limit} calls a minute by {rule}; retry in {:.1} s",
                wait as f64 / 1000.0
            );
            return Err(Denial::new(rule, DenialKind::RateLimited, reason));
        }
        window.push_back(now_ms);
        Ok(())
    }
}

#[cfg(test)]
mod tests;
