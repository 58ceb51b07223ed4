//! What the backends ask of the client, asked of the upstream client: sampling and
//! elicitation requests, and approvals of calls the policy holds for a person
//! (docs/gateway.md, "Server requests and approvals").
//!
//! Both run on threads of their own (the host's contract for handlers and approvers), so they
//! block on the upstream answer without stalling any I/O.

use serde_json::{Value, json};

use crate::host::{Approval, ApprovalRequest, ApproveMatching, Approver, ClientHandler};
use crate::jsonrpc::{ErrorObject, codes};
use crate::protocol::ClientFeatures;

use super::outbox::{Out, Outbox};

/// Forwards `sampling/createMessage` and `elicitation/create` from a backend to the upstream
/// client, when that client declared the capability; otherwise the backend gets an error
/// that says so.
#[derive(Debug, Clone)]
pub struct GatewayHandler {
    outbox: Outbox,
}

impl GatewayHandler {
    /// A handler that asks through `outbox`.
    pub fn new(outbox: Outbox) -> Self {
        GatewayHandler { outbox }
    }

    fn ask(&self, server: &str, method: &str, params: Value) -> Result<Value, ErrorObject> {
        let (tx, rx) = futures_channel::oneshot::channel();
        self.outbox.send(Out::Ask {
            server: server.to_owned(),
            method: method.into(),
            params,
            reply: tx,
        });
        futures::executor::block_on(rx).unwrap_or_else(|_| {
            Err(ErrorObject::new(codes::INTERNAL_ERROR, "the gateway's upstream connection closed"))
        })
    }
}

impl ClientHandler for GatewayHandler {
    fn features(&self) -> ClientFeatures {
        ClientFeatures { sampling: true, elicitation_form: true, elicitation_url: true }
    }

    fn create_message(&self, server: &str, params: Value) -> Result<Value, ErrorObject> {
        self.ask(server, "sampling/createMessage", params)
    }

    fn elicit(&self, server: &str, params: Value) -> Result<Value, ErrorObject> {
        self.ask(server, "elicitation/create", params)
    }
}

/// Asks the upstream client's user, by elicitation, whether a call the policy holds may run;
/// tools matching the `--approve` globs pass without asking, and without an elicitation
/// capability upstream the call is refused.
#[derive(Debug, Clone)]
pub struct GatewayApprover {
    outbox: Outbox,
    preapproved: ApproveMatching,
    globs: bool,
}

impl GatewayApprover {
    /// An approver asking through `outbox`, passing tools that match `preapproved`.
    pub fn new(outbox: Outbox, preapproved: Vec<String>) -> Self {
        let globs = !preapproved.is_empty();
        GatewayApprover { outbox, preapproved: ApproveMatching::new(preapproved), globs }
    }
}

/// The elicitation form of an approval.
pub(crate) fn approval_form(request: &ApprovalRequest) -> Value {
    let args = serde_json::to_string_pretty(&request.arguments).unwrap_or_default();
    let why =
        request.reason.as_deref().map(|r| format!("\nWhy you are asked: {r}.")).unwrap_or_default();
    json!({
        "message": format!(
            "Server {:?} wants to run tool {:?} ({}) with:\n{args}{why}\nAllow it?",
            request.server, request.tool, request.rule
        ),
        "requestedSchema": {
            "type": "object",
            "properties": {
                "decision": {
                    "type": "string",
                    "title": "Decision",
                    "enum": ["once", "always", "deny"],
                    "enumNames": ["Allow once", "Allow for this session", "Deny"],
                    "default": "deny",
                }
            },
            "required": ["decision"],
        },
    })
}

/// Reads an elicitation answer to [`approval_form`].
pub(crate) fn approval_of(answer: &Value) -> Approval {
    if answer.get("action").and_then(Value::as_str) != Some("accept") {
        return Approval::Deny;
    }
    match answer.get("content").and_then(|c| c.get("decision")).and_then(Value::as_str) {
        Some("once") => Approval::Once,
        Some("always") => Approval::Always,
        _ => Approval::Deny,
    }
}

impl Approver for GatewayApprover {
    fn approve(&self, request: &ApprovalRequest) -> Approval {
        if self.globs && self.preapproved.approve(request) == Approval::Once {
            return Approval::Once;
        }
        let (tx, rx) = futures_channel::oneshot::channel();
        let params = approval_form(request);
        self.outbox.send(Out::Ask {
            server: request.server.clone(),
            method: "elicitation/create".into(),
            params,
            reply: tx,
        });
        match futures::executor::block_on(rx) {
            Ok(Ok(answer)) => approval_of(&answer),
            Ok(Err(e)) => {
                tracing::info!(tool = %request.tool, "approval refused: {}", e.message);
                Approval::Deny
            }
            Err(_) => Approval::Deny,
        }
    }

    fn name(&self) -> String {
        "upstream elicitation".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_accepted_decision_approves() {
        assert_eq!(
            approval_of(&json!({"action": "accept", "content": {"decision": "once"}})),
            Approval::Once
        );
        assert_eq!(
            approval_of(&json!({"action": "accept", "content": {"decision": "always"}})),
            Approval::Always
        );
        assert_eq!(
            approval_of(&json!({"action": "accept", "content": {"decision": "deny"}})),
            Approval::Deny
        );
        assert_eq!(approval_of(&json!({"action": "accept"})), Approval::Deny);
        assert_eq!(
            approval_of(&json!({"action": "decline", "content": {"decision": "once"}})),
            Approval::Deny
        );
        assert_eq!(approval_of(&json!({})), Approval::Deny);
    }

    #[test]
    fn the_form_names_server_tool_rule_and_arguments() {
        let r = ApprovalRequest {
            server: "fs".into(),
            tool: "write_file".into(),
            arguments: json!({"path": "/tmp/x"}),
            rule: "annotations.destructiveHint".into(),
            description: None,
            reason: Some("this session has read untrusted content".into()),
        };
        let form = approval_form(&r);
        let m = form["message"].as_str().unwrap();
        assert!(m.contains("\"fs\"") && m.contains("write_file") && m.contains("/tmp/x"), "{m}");
        assert!(m.contains("untrusted content"), "{m}");
        assert_eq!(form["requestedSchema"]["properties"]["decision"]["enum"][0], "once");
    }
}
