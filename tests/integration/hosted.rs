//! A reactor hosted on the caller's thread (docs/host.md): the host's reactor as a task of a
//! current-thread tokio runtime, against the real reference server. Calls go out and come
//! back on that one thread; a server's crash and a timeout are told as on the reactor
//! thread; dropping the host stops every server and ends the task.

use std::time::Duration;

use ringmcp::host::Host;
use ringmcp::protocol::RequestError;
use serde_json::json;

use crate::util::{child_pids, faulty, reference};

#[test]
fn a_hosted_reactor_serves_its_threads_calls_and_ends_with_the_host() {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let (host, reactor) =
        Host::builder().request_timeout(Duration::from_secs(30)).build_hosted().unwrap();
    // The reactor is no `Send` task: it runs beside the calls, on this thread.
    let calls = async move {
        let client = host.spawn(reference("hosted", &[])).await.unwrap();
        let pid = client.stats().await.unwrap().pid;
        // Many at once, small and large: all answered, each with its own text.
        let calls = (0..64).map(|i| {
            let text = if i % 16 == 0 { "z".repeat(2 << 20) } else { format!("call {i}") };
            let call = client.call_tool("echo", json!({ "text": text }));
            async move { (text, call.await) }
        });
        for (text, answer) in futures::future::join_all(calls).await {
            assert_eq!(answer.unwrap().text(), text);
        }
        // A server of its own that crashes, and a call that times out: told, and the first
        // server goes on.
        let crashy = host.spawn(faulty("hosted-crash")).await.unwrap();
        let crashed = crashy.call_tool("exit", json!({"code": 3})).await.unwrap_err();
        assert!(matches!(crashed.request_error(), Some(RequestError::Closed(_))), "{crashed}");
        let slow = client.call_tool_with_timeout(
            "slow",
            json!({"ms": 5000}),
            Some(Duration::from_millis(200)),
        );
        let timed_out = slow.await.unwrap_err();
        let told = timed_out.request_error();
        assert!(matches!(told, Some(RequestError::Timeout { .. })), "{timed_out}");
        assert_eq!(
            client.call_tool("echo", json!({"text": "still"})).await.unwrap().text(),
            "still"
        );
        drop((client, crashy));
        // The host's end stops its servers; the reactor task then ends by itself.
        drop(host);
        pid
    };
    let both = async { tokio::join!(reactor.run(), calls) };
    let ended =
        runtime.block_on(async { tokio::time::timeout(Duration::from_secs(60), both).await });
    let ((), pid) = ended.expect("the calls were answered, and the reactor ended with the host");
    assert!(!child_pids().contains(&pid), "the server {pid} was left behind");
}
