//! Scripted stdio servers (tests/servers/scripted.py) for what neither real servers nor the
//! conformance suite produce on demand: a batch on receive, version counter-offers, a storm
//! of `list_changed`, and a late answer racing its cancellation.

use std::path::PathBuf;
use std::time::Duration;

use ringmcp::host::{Host, ServerEvent, ServerSpec};
use ringmcp::protocol::{ProtocolVersion, RequestError};
use serde_json::json;

use crate::util::{host, python3};

fn scripted(scenario: &str) -> Option<ServerSpec> {
    let python = python3()?;
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/servers/scripted.py");
    Some(ServerSpec::new(format!("scripted-{scenario}"), python).arg(script).arg(scenario))
}

/// 2025-03-26 allowed batches, and a client MUST accept them: each element is dispatched
/// (the log notification becomes an event, the ping request is answered, the response
/// completes its call).
#[test]
fn a_batch_on_receive_is_dispatched_element_by_element() {
    let Some(spec) = scripted("batch") else { return };
    let host = host();
    let client = host.spawn_blocking(spec).unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_03_26);
    let events = client.events();
    let tools = client.blocking().list_tools().unwrap();
    assert_eq!(tools.len(), 6);
    assert_eq!(client.blocking().call_tool("pinged", json!({})).unwrap().text(), "yes");
    let notified = std::iter::from_fn(|| events.try_recv().ok())
        .any(|e| matches!(e, ServerEvent::Notification(n) if n.method == "notifications/message"));
    assert!(notified, "the batch's notification became an event");
    assert_eq!(client.blocking().stats().unwrap().session.violations, 0);
}

/// A server that answers `initialize` with a revision we do not speak, or with an error
/// listing what it supports: `spawn` fails with the reason, and nothing is left running.
#[test]
fn version_counter_offers() {
    let Some(spec) = scripted("counter-offer") else { return };
    let host = host();
    let err = host.spawn_blocking(spec).unwrap_err();
    let Some(RequestError::UnsupportedVersion { answered, .. }) = err.request_error() else {
        panic!("{err}")
    };
    assert_eq!(answered, "2023-01-01");

    let Some(spec) = scripted("error-offer") else { return };
    let err = host.spawn_blocking(spec).unwrap_err();
    let Some(RequestError::Rpc(e)) = err.request_error() else { panic!("{err}") };
    assert_eq!(e.code, -32602);
    assert_eq!(e.data.as_ref().unwrap()["supported"], json!(["1999-01-01"]));

    // An older revision we speak is accepted and used.
    let Some(spec) = scripted("older") else { return };
    let client = host.spawn_blocking(spec).unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2024_11_05);
    assert_eq!(client.blocking().call_tool("lists", json!({})).unwrap().text(), "0");
}

/// Thousands of `list_changed` in a row neither stall the connection nor cause more than one
/// refetch: the cached list is invalidated, and fetched once when next asked for.
#[test]
fn a_list_changed_storm_costs_one_refetch() {
    let Some(spec) = scripted("storm") else { return };
    let host = Host::builder().events_capacity(64).build().unwrap();
    let client = host.spawn_blocking(spec).unwrap();
    let first = futures::executor::block_on(client.tools()).unwrap();
    assert_eq!(client.blocking().call_tool("storm", json!({"n": 5000})).unwrap().text(), "stormed");
    let fresh = futures::executor::block_on(client.tools()).unwrap();
    assert!(!std::sync::Arc::ptr_eq(&first, &fresh));
    let again = futures::executor::block_on(client.tools()).unwrap();
    assert!(std::sync::Arc::ptr_eq(&fresh, &again));
    assert_eq!(client.blocking().call_tool("lists", json!({})).unwrap().text(), "2");
    assert_eq!(client.blocking().stats().unwrap().session.violations, 0);
}

/// A call that times out is cancelled; the server's answer, sent only once it saw the
/// cancellation, is discarded and counted, and the next call gets its own answer.
#[test]
fn a_late_answer_racing_its_cancellation_is_discarded() {
    let Some(spec) = scripted("race") else { return };
    let host = host();
    let client = host.spawn_blocking(spec).unwrap();
    let timeout = Some(Duration::from_millis(200));
    let err =
        futures::executor::block_on(client.call_tool_with_timeout("race", json!({}), timeout))
            .unwrap_err();
    assert!(matches!(err.request_error(), Some(RequestError::Timeout { .. })), "{err}");
    assert_eq!(client.blocking().call_tool("lists", json!({})).unwrap().text(), "0");
    let stats = client.blocking().stats().unwrap().session;
    assert_eq!((stats.timeouts, stats.late_answers, stats.violations), (1, 1, 0), "{stats:?}");
}

/// 2025-11-25 -32042: the URL elicitation reaches the handler (URL mode declared), and once
/// the user accepts, the call is retried and succeeds.
#[test]
fn url_elicitation_required_is_offered_and_the_call_retried() {
    use ringmcp::host::ClientHandler;
    use ringmcp::jsonrpc::ErrorObject;
    use ringmcp::protocol::ClientFeatures;
    struct Consent;
    impl ClientHandler for Consent {
        fn features(&self) -> ClientFeatures {
            ClientFeatures { elicitation_url: true, ..ClientFeatures::default() }
        }
        fn elicit(
            &self,
            _: &str,
            params: serde_json::Value,
        ) -> Result<serde_json::Value, ErrorObject> {
            assert_eq!(params["mode"], "url");
            assert_eq!(params["url"], "https://pay.example/checkout/1");
            Ok(json!({"action": "accept"}))
        }
    }
    let Some(spec) = scripted("url") else { return };
    let host = Host::builder().handler(std::sync::Arc::new(Consent)).build().unwrap();
    let client = host.spawn_blocking(spec).unwrap();
    assert_eq!(client.blocking().call_tool("pay", json!({})).unwrap().text(), "paid");
}

/// `structuredContent` is checked against the tool's `outputSchema` (draft-07 here) once the
/// tool list is cached: a mismatch is reported on the result, whose text stays available.
#[test]
fn structured_content_is_checked_against_the_output_schema() {
    let Some(spec) = scripted("older") else { return };
    let host = host();
    let client = host.spawn_blocking(spec).unwrap();
    futures::executor::block_on(client.tools()).unwrap();
    let r = client.blocking().call_tool("mismatch", json!({})).unwrap();
    let e = r.output_schema_error.as_deref().unwrap_or_default();
    assert!(e.contains("sum"), "{e:?}");
    assert_eq!(r.text(), r#"{"total": 1}"#);
    // A tool without an outputSchema is not checked.
    assert_eq!(client.blocking().call_tool("lists", json!({})).unwrap().output_schema_error, None);
    // Every road checks it: with a progress stream, with a timeout, from the builder.
    let (call, _progress) = client.call_tool_with_progress("mismatch", json!({}), None);
    let r = futures::executor::block_on(call).unwrap();
    assert!(r.output_schema_error.as_deref().unwrap_or_default().contains("sum"), "{r:?}");
    let (call, _progress) =
        client.call("mismatch", json!({})).timeout(Duration::from_secs(30)).progress();
    let r = call.blocking().unwrap();
    assert!(r.output_schema_error.as_deref().unwrap_or_default().contains("sum"), "{r:?}");
}

/// A cursor the server refuses mid-listing (-32602): the listing starts over once and
/// completes, with every item once.
#[test]
fn a_refused_cursor_restarts_the_listing() {
    let Some(spec) = scripted("cursor") else { return };
    let host = host();
    let client = host.spawn_blocking(spec).unwrap();
    let names: Vec<String> =
        client.blocking().list_tools().unwrap().into_iter().map(|t| t.name).collect();
    assert_eq!(names, ["pinged", "storm", "lists", "race", "pay", "mismatch"]);
    assert_eq!(client.blocking().call_tool("lists", json!({})).unwrap().text(), "4");
}

/// Shutdown escalates: stdin closed, then SIGTERM to the group after 2 s, then SIGKILL after
/// 2 s more. A server that ignores the end of its stdin is ended by SIGTERM; one that also
/// ignores SIGTERM by SIGKILL. (Lower bounds only: the host's own timers guarantee them.)
#[test]
fn shutdown_escalates_to_sigterm_then_sigkill() {
    for (scenario, signal, at_least, sandboxed) in
        [("no-eof", 15, 2, true), ("no-term", 9, 4, true), ("no-eof", 15, 2, false)]
    {
        let Some(spec) = scripted(scenario) else { return };
        let spec = if sandboxed { spec } else { spec.sandbox(None) };
        let host = host();
        let client = host.spawn_blocking(spec).unwrap();
        assert_eq!(client.blocking().call_tool("lists", json!({})).unwrap().text(), "0");
        let pid = client.blocking().stats().unwrap().pid;
        let started = std::time::Instant::now();
        let reason = client.blocking().shutdown();
        let took = started.elapsed();
        let scenario = format!("{scenario} (sandboxed: {sandboxed})");
        assert_eq!(reason, ringmcp::protocol::CloseReason::Signaled(signal), "{scenario}");
        assert!(took >= Duration::from_secs(at_least), "{scenario}: ended after {took:?}");
        assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists(), "{scenario}: not reaped");
    }
}
