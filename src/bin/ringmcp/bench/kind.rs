//! Error kinds: the short labels that failed calls are grouped under in the report.

use ringmcp::host::Error;
use ringmcp::jsonrpc::ErrorObject;
use ringmcp::protocol::RequestError;

/// The label of a call that returned a result with `isError: true` (the tool ran and failed).
pub(crate) const TOOL_IS_ERROR: &str = "is_error";

/// A short, stable label for a failed call: `timeout`, `closed`, `frame_too_large`,
/// `backpressure -32000` (the per-server queue is full), `rpc -32602`, ... Kinds the bench does not know yet (the error enums
/// are `#[non_exhaustive]`) are named after their variant and the JSON-RPC code a gateway would
/// forward for them, e.g. `request queue_full -32000`.
pub(crate) fn error_kind(error: &Error) -> String {
    let Some(request) = error.request_error() else {
        return match error {
            Error::Spawn { .. } => "spawn".into(),
            Error::InvalidArgument(_) => "invalid_argument".into(),
            Error::Config(_) => "config".into(),
            Error::Reactor(_) => "reactor".into(),
            Error::ReactorStopped => "reactor_stopped".into(),
            other => variant_name(other),
        };
    };
    match request {
        // Through a gateway, a supervised backend's state comes as -32000 with data.reason.
        RequestError::Rpc(object) => match supervised(object) {
            Some(reason) => reason.to_owned(),
            None => format!("rpc {}", object.code),
        },
        RequestError::Timeout { .. } => "timeout".into(),
        RequestError::FrameTooLarge { .. } => "frame_too_large".into(),
        RequestError::Closed(_) => "closed".into(),
        RequestError::NotInitialized => "not_initialized".into(),
        RequestError::QueueFull { .. } => format!("backpressure {}", code(error)),
        RequestError::TooManyPending(_) => format!("too_many_pending {}", code(error)),
        RequestError::UnsupportedVersion { .. } => "unsupported_version".into(),
        RequestError::MalformedResult { .. } => "malformed_result".into(),
        other => format!("request {} {}", variant_name(other), code(error)),
    }
}

/// A gateway's "restarted" or "unavailable" (`data.reason` of its -32000), the kinds
/// [`Error::Restarted`] and [`Error::Unavailable`] have when met directly.
fn supervised(object: &ErrorObject) -> Option<&'static str> {
    let reason = object.data.as_ref()?.get("reason")?.as_str()?;
    ["restarted", "unavailable"].into_iter().find(|r| *r == reason)
}

/// How long a refused call is told to wait: [`Error::Unavailable`]'s `retry_after`, or a
/// gateway's `data.retryAfterSeconds` for the same.
pub(crate) fn retry_after(error: &Error) -> Option<std::time::Duration> {
    if let Error::Unavailable { retry_after, .. } = error {
        return *retry_after;
    }
    let Some(RequestError::Rpc(object)) = error.request_error() else { return None };
    supervised(object).filter(|r| *r == "unavailable")?;
    let secs = object.data.as_ref()?.get("retryAfterSeconds")?.as_f64()?;
    std::time::Duration::try_from_secs_f64(secs).ok()
}

/// The JSON-RPC code a gateway would forward for this failure.
fn code(error: &Error) -> i64 {
    ErrorObject::from(error).code
}

/// `TooManyPending(5)` → `too_many_pending`: the variant's name from its `Debug` form.
fn variant_name(value: &impl std::fmt::Debug) -> String {
    let debug = format!("{value:?}");
    let name = debug.split(|c: char| !c.is_ascii_alphanumeric()).next().unwrap_or("unknown");
    let mut snake = String::with_capacity(name.len() + 4);
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            snake.push('_');
        }
        snake.push(c.to_ascii_lowercase());
    }
    snake
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use ringmcp::protocol::CloseReason;

    use super::*;

    fn server(source: RequestError) -> Error {
        Error::Server { server: "s".into(), source }
    }

    #[test]
    fn request_errors() {
        let cases = [
            (RequestError::Rpc(ErrorObject::new(-32602, "bad")), "rpc -32602"),
            (RequestError::Rpc(ErrorObject::new(-32000, "busy")), "rpc -32000"),
            (
                RequestError::Rpc(
                    ErrorObject::new(-32000, "gone")
                        .with_data(serde_json::json!({"reason": "restarted", "server": "s"})),
                ),
                "restarted",
            ),
            (
                RequestError::Timeout {
                    method: "tools/call".into(),
                    after: Duration::from_secs(1),
                },
                "timeout",
            ),
            (RequestError::FrameTooLarge { len: 20, max: 10 }, "frame_too_large"),
            (RequestError::Closed(CloseReason::Exited(1)), "closed"),
            (RequestError::Closed(CloseReason::StdoutClosed), "closed"),
            (RequestError::NotInitialized, "not_initialized"),
            (RequestError::TooManyPending(8), "too_many_pending -32000"),
            (
                RequestError::QueueFull { limit: 4, retry_after: Duration::from_millis(3) },
                "backpressure -32000",
            ),
            (
                RequestError::MalformedResult { method: "tools/call".into(), reason: "x".into() },
                "malformed_result",
            ),
        ];
        for (source, kind) in cases {
            assert_eq!(error_kind(&server(source)), kind);
        }
    }

    #[test]
    fn a_gateways_refusal_says_when_to_come_back() {
        let data = serde_json::json!({"reason": "unavailable", "retryAfterSeconds": 0.25});
        let refused = server(RequestError::Rpc(ErrorObject::new(-32000, "down").with_data(data)));
        assert_eq!(error_kind(&refused), "unavailable");
        assert_eq!(retry_after(&refused), Some(Duration::from_millis(250)));
        let busy =
            ErrorObject::new(-32000, "busy").with_data(serde_json::json!({"retryAfterSeconds": 1}));
        assert_eq!(retry_after(&server(RequestError::Rpc(busy))), None);
    }

    #[test]
    fn host_errors() {
        assert_eq!(error_kind(&Error::ReactorStopped), "reactor_stopped");
        assert_eq!(error_kind(&Error::InvalidArgument("x".into())), "invalid_argument");
        assert_eq!(error_kind(&Error::Reactor(std::io::Error::other("x"))), "reactor");
    }

    #[test]
    fn variant_names_are_snake_case() {
        assert_eq!(variant_name(&RequestError::TooManyPending(5)), "too_many_pending");
        assert_eq!(variant_name(&RequestError::NotInitialized), "not_initialized");
        assert_eq!(variant_name(&Error::ReactorStopped), "reactor_stopped");
    }
}
