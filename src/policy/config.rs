//! The `"policy"` objects of an `mcpServers` config: one at the top level (the default for every
//! server) and one per server. Keys are camelCase, unknown keys are refused (a typo in a
//! security setting must not be silently ignored).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// What to do with a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// Send it.
    Allow,
    /// Refuse it (it is never written to the server).
    Deny,
    /// Send it only once a person (the [`Approver`](crate::policy::Approver)) agrees.
    Ask,
}

impl std::fmt::Display for Action {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Action::Allow => "allow",
            Action::Deny => "deny",
            Action::Ask => "ask",
        })
    }
}

/// A server's policy, as written in its `"policy"` key (every key optional).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PolicyConfig {
    /// The action for a tool no `tools` rule and no annotation decides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Action>,
    /// Per tool name or glob (`*` any run of characters, `?` one): the most specific match
    /// wins (an exact name, then the pattern with the most literal characters).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tools: BTreeMap<String, Action>,
    /// Folders path arguments must stay beneath (absent: the roots offered to the server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roots: Option<Vec<PathBuf>>,
    /// Argument names that are paths, besides those recognised from their name or schema.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub path_args: Vec<String>,
    /// Argument names that are shell-like commands, besides `command`, `cmd`, `shell`,
    /// `script`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command_args: Vec<String>,
    /// Argument names that are SQL (checked for statement separators and comments).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sql_args: Vec<String>,
    /// Metacharacters command-like arguments may hold after all (e.g. `"|"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_metachars: Option<String>,
    /// Most calls per minute, per tool name or glob.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub rate_limits: BTreeMap<String, u32>,
    /// Deny calls to tools whose definition the poisoning scan flags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_poisoned: Option<bool>,
    /// Whether the server's annotations (its own claims) decide tools no rule names
    /// (default true: destructive or open-world ask, read-only allows); false: they count for
    /// nothing and the defaults decide.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trust_annotations: Option<bool>,
    /// What is done with this server's results (injections found, delimiters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub results: Option<ResultsConfig>,
    /// What is done with credentials in calls to this server and in its results (absent:
    /// calls holding one are refused, results have them redacted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secrets: Option<SecretsAction>,
    /// What a high-impact tool of this server gets once the session has read untrusted
    /// content: `ask` (the default), `deny`, or `allow`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_untrusted: Option<Action>,
    /// What this server's `sampling/createMessage` requests (the server asking the user's
    /// model to write) get: `ask` (the default), `allow` or `deny`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<Action>,
    /// The most tokens a sampling request of this server may ask for: a larger `maxTokens`
    /// is lowered to it (default 4096).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling_max_tokens: Option<u64>,
    /// Tools (names or globs) that are high-impact besides destructive and open-world writes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub high_impact: Vec<String>,
    /// Tools (names or globs) whose results are untrusted besides open-world ones.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub untrusted: Vec<String>,
}

/// The `"results"` object of a policy.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResultsConfig {
    /// What a result holding instructions aimed at the model gets (default `flag`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_injection: Option<OnInjection>,
    /// Wrap text content in delimiters that name the server and tool and say it is data
    /// (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delimit: Option<bool>,
}

/// What a result with an injection gets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnInjection {
    /// Delivered with a `_meta` marker and a warning item.
    #[default]
    Flag,
    /// The offending sentences replaced by a marker.
    Redact,
    /// Replaced by an `isError` result that says why.
    Block,
}

/// What a credential in an argument or a result gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SecretsAction {
    /// The call is refused; the result is replaced by an `isError` result.
    Block,
    /// The credential is replaced by `[secret redacted: KIND]` (in the call's arguments before
    /// it is sent, in the result before it is delivered).
    Redact,
    /// Delivered (and audited, by digest).
    Allow,
}

/// The top-level `"policy"`: the default action for every server, and defaults for the
/// per-server keys.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GlobalPolicy {
    /// The action when neither a server's rules, its annotations nor its default decide.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Action>,
    /// Deny calls to tools whose definition the poisoning scan flags (every server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_poisoned: Option<bool>,
    /// The default `results` of every server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub results: Option<ResultsConfig>,
    /// The default `secrets` of every server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secrets: Option<SecretsAction>,
    /// The default `afterUntrusted` of every server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_untrusted: Option<Action>,
    /// The default `sampling` of every server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<Action>,
}

/// The top-level `"audit"` object.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AuditConfig {
    /// The log file (JSON Lines).
    pub path: PathBuf,
    /// When records reach the disk: `"always"` (each record, the default), `"interval"`
    /// (at most once a second) or `"never"` (left to the OS).
    #[serde(default)]
    pub fsync: FsyncPolicy,
    /// Record the arguments' values (default: only their digest). Values of arguments whose
    /// name suggests a secret are always replaced by their digest.
    #[serde(default)]
    pub include_arguments: bool,
    /// Rotate when the file reaches this many bytes (the chain carries over). Default: never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<u64>,
    /// A checkpoint record every this many records (default 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_every: Option<u64>,
    /// An Ed25519 key (PKCS#8 file, `ringmcp audit keygen`), kept outside the log, that signs
    /// every checkpoint and the head file: then whoever can write the log and its head cannot
    /// rewrite them unseen (`ringmcp audit verify --key`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signing_key: Option<PathBuf>,
}

/// When audit records are synced to the disk.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FsyncPolicy {
    /// After every record.
    #[default]
    Always,
    /// At most once a second.
    Interval,
    /// Never explicitly.
    Never,
}
