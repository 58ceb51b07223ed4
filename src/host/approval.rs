//! Approval: what a person is asked about a call the policy marks `ask`, and who answers
//! ([`Approver`]); the gate ([`super::gate`]) puts the question and records the answer.

use serde_json::Value;

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

    /// What a refusal tells the caller: what happened, and what to do next when the refusal
    /// is not a person's (the CLI's `--approve` without a terminal says how to allow it).
    fn refusal(&self, request: &ApprovalRequest) -> String {
        format!("{} refused tool {:?}", self.name(), request.tool)
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

    fn refusal(&self, request: &ApprovalRequest) -> String {
        format!(
            "tool {:?} needs approval ({}) and there is no terminal to ask on: pass --approve {:?} to allow it",
            request.tool, request.rule, request.tool
        )
    }
}
