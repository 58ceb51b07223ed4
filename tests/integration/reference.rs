//! ringmcp against its own reference server (`ringmcp serve`): the full happy path.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ringmcp::host::Error;
use ringmcp::protocol::{ProtocolVersion, RequestError};
use serde_json::json;

use crate::util::{host, reference};

/// The reference server's blob pattern.
fn blob_byte(i: usize) -> u8 {
    b"abcdefghijklmnopqrstuvwxyz0123456789"[i % 36]
}

#[test]
fn handshake_lists_and_calls() {
    let host = host();
    let client = host.spawn_blocking(reference("ref", &[])).unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_11_25);
    assert_eq!(client.server_info().server_info.name, "ringmcp-reference");
    assert!(client.has_capability("tools"));

    let tools = client.blocking().list_tools().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    for want in ["echo", "blob", "slow", "fail", "add"] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    assert!(!names.contains(&"exit"), "fault tools are off by default");

    let r = client.blocking().call_tool("echo", json!({"text": "héllo\nworld"})).unwrap();
    assert_eq!(r.text(), "héllo\nworld");
    assert!(!r.is_error);

    let r = client.blocking().call_tool("add", json!({"a": 2, "b": 40})).unwrap();
    assert_eq!(r.text(), "42");
    assert_eq!(r.structured_content, Some(json!({"sum": 42})));

    let r = client.blocking().call_tool("fail", json!({})).unwrap();
    assert!(r.is_error, "fail must be an isError result, not a JSON-RPC error");

    let err = client.blocking().call_tool("no_such_tool", json!({})).unwrap_err();
    assert!(matches!(err.request_error(), Some(RequestError::Rpc(e)) if e.code == -32602), "{err}");

    let resources = client.blocking().list_resources().unwrap();
    assert_eq!(resources.len(), 1);
    let read = client.blocking().read_resource(&resources[0].uri).unwrap();
    assert!(read.contents[0].text.as_deref().is_some_and(|t| !t.is_empty()));
    let err = client.blocking().read_resource("ringmcp://nope").unwrap_err();
    assert!(
        matches!(err.request_error(), Some(RequestError::ResourceNotFound { error, .. }) if error.code == -32002),
        "{err}"
    );

    let prompts = client.blocking().list_prompts().unwrap();
    assert_eq!(prompts[0].name, "greet");
    let p = client.blocking().get_prompt("greet", json!({"name": "Ada"})).unwrap();
    assert_eq!(p.messages[0].content.as_text(), Some("Hello, Ada!"));

    client.blocking().ping().unwrap();
    let stats = client.blocking().stats().unwrap();
    assert_eq!(stats.session.violations, 0);
    assert!(matches!(client.blocking().shutdown(), ringmcp::protocol::CloseReason::Exited(0)));
}

#[test]
fn every_page_is_followed() {
    let host = host();
    let client = host.spawn_blocking(reference("paged", &["--page-size", "2"])).unwrap();
    let tools = client.blocking().list_tools().unwrap();
    assert!(tools.len() >= 5, "got {} tools", tools.len());
    let unpaged =
        host.spawn_blocking(reference("unpaged", &[])).unwrap().blocking().list_tools().unwrap();
    assert_eq!(tools, unpaged);
}

/// Inline delivery of a big answer, with spilling turned off (by default it would be spilled:
/// see `spill::the_default_host_spills_big_answers`).
#[test]
fn ten_megabyte_blob_arrives_whole() {
    let host = unspilled_host();
    let client = host.spawn_blocking(reference("blob", &[])).unwrap();
    let len = 10 * 1024 * 1024;
    let r = client.blocking().call_tool("blob", json!({"bytes": len})).unwrap();
    let text = r.content[0].as_text().unwrap();
    assert_eq!(text.len(), len);
    assert!(text.bytes().enumerate().all(|(i, b)| b == blob_byte(i)));
}

#[test]
fn thousand_sequential_calls() {
    let host = host();
    let client = host.spawn_blocking(reference("seq", &[])).unwrap();
    for i in 0..1000 {
        let r = client.blocking().call_tool("echo", json!({"text": format!("m{i}")})).unwrap();
        assert_eq!(r.text(), format!("m{i}"));
    }
}

#[test]
fn thousand_concurrent_calls_each_matched() {
    let host = host();
    let client = host.spawn_blocking(reference("conc", &[])).unwrap();
    let futures: Vec<_> = (0..1000)
        .map(|i| {
            let client = client.clone();
            async move { (i, client.call_tool("echo", json!({"text": format!("c{i}")})).await) }
        })
        .collect();
    let results = futures_executor::block_on(futures::future::join_all(futures));
    assert_eq!(results.len(), 1000);
    for (i, r) in results {
        assert_eq!(r.unwrap().text(), format!("c{i}"));
    }
    // And from many threads with the blocking API.
    let client = Arc::new(client);
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let client = client.clone();
            std::thread::spawn(move || {
                for i in 0..50 {
                    let text = format!("t{t}-{i}");
                    assert_eq!(
                        client.blocking().call_tool("echo", json!({"text": text})).unwrap().text(),
                        text
                    );
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

#[test]
fn works_from_tokio_too() {
    let host = host();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let client = host.spawn(reference("tokio", &[])).await.unwrap();
        let (a, b) = tokio::join!(
            client.call_tool("slow", json!({"ms": 200})),
            client.call_tool("echo", json!({"text": "fast"}))
        );
        assert_eq!(b.unwrap().text(), "fast");
        assert_eq!(a.unwrap().text(), "slept 200 ms");
    });
}

#[test]
fn spawn_failure_is_typed() {
    let host = host();
    let err = host
        .spawn_blocking(ringmcp::host::ServerSpec::new("ghost", "/nonexistent/server"))
        .unwrap_err();
    assert!(matches!(err, Error::Spawn { .. }), "{err}");
    assert!(err.to_string().contains("ghost"), "{err}");
}

/// 100,000 calls over 16 servers with 256 in flight: every answer matched to its request.
#[test]
fn hundred_thousand_calls_over_sixteen_servers() {
    use futures::stream::{self, StreamExt};
    let host = host();
    let clients: Vec<_> =
        (0..16).map(|i| host.spawn_blocking(reference(&format!("s{i}"), &[])).unwrap()).collect();
    let calls = (0..100_000u32).map(|i| {
        let client = clients[i as usize % clients.len()].clone();
        async move {
            let r = client.call_tool("echo", json!({"text": format!("{i}")})).await.unwrap();
            assert_eq!(r.text(), i.to_string());
        }
    });
    let n = futures_executor::block_on(stream::iter(calls).buffer_unordered(256).count());
    assert_eq!(n, 100_000);
}

/// A 10 MB answer is parsed on the worker pool, and calls to another server complete while
/// the big answer is half received (its server pauses mid-line for 5 s): no timing
/// thresholds, only what happened, in what order.
#[test]
fn a_big_answer_does_not_stall_other_servers() {
    const LEN: u64 = 10_000_000;
    let host = unspilled_host();
    let big = host.spawn_blocking(crate::util::faulty("big")).unwrap();
    let small = host.spawn_blocking(reference("small", &[])).unwrap();
    let mut blob = Box::pin(big.call_tool("stall_blob", json!({"bytes": LEN, "ms": 5000})));
    let waker = futures::task::noop_waker();
    let mut cx = std::task::Context::from_waker(&waker);
    // Wait until the first half of the line has been read from the big server's pipe.
    let deadline = Instant::now() + Duration::from_secs(30);
    while big.blocking().stats().unwrap().stdout_bytes < LEN / 2 {
        assert!(blob.as_mut().poll(&mut cx).is_pending(), "answered before its second half");
        assert!(Instant::now() < deadline, "the first half never arrived");
        std::thread::sleep(Duration::from_millis(5));
    }
    // Now the big answer is in flight, incomplete: the small server must answer meanwhile.
    let mut small_calls_during_big = 0;
    let result = loop {
        if let std::task::Poll::Ready(r) = blob.as_mut().poll(&mut cx) {
            break r.unwrap();
        }
        assert_eq!(
            small.blocking().call_tool("echo", json!({"text": "ping"})).unwrap().text(),
            "ping"
        );
        let received = big.blocking().stats().unwrap().stdout_bytes;
        if received < LEN && blob.as_mut().poll(&mut cx).is_pending() {
            small_calls_during_big += 1;
        }
    };
    assert_eq!(result.content[0].as_text().unwrap().len(), LEN as usize);
    assert!(
        small_calls_during_big > 0,
        "no call to the small server completed while the big answer was half received"
    );
    assert_eq!(
        big.blocking().stats().unwrap().frames_offloaded,
        1,
        "the 10 MB frame is parsed off the reactor"
    );
    assert_eq!(small.blocking().stats().unwrap().frames_offloaded, 0);
}

/// The fast paths this kernel offers are in use (known from its version, not from the code
/// under test), and the fallbacks (a read buffer per pipe, parsing everything on the reactor)
/// give the same answers.
#[test]
fn fast_paths_and_fallbacks_agree() {
    let fast = host();
    let f = fast.uring_features();
    eprintln!("io_uring features: {f:?}");
    let expected = [
        ((5, 5), f.nodrop, "IORING_FEAT_NODROP"),
        ((5, 6), f.read && f.write, "IORING_OP_READ/WRITE"),
        ((5, 11), f.ext_arg, "IORING_FEAT_EXT_ARG"),
        ((6, 1), f.defer_taskrun, "SINGLE_ISSUER | DEFER_TASKRUN"),
        ((6, 7), f.multishot_read, "multishot reads into a provided-buffer ring"),
        ((6, 15), f.no_iowait, "IORING_ENTER_NO_IOWAIT"),
    ];
    let missing: Vec<String> = expected
        .iter()
        .filter(|((major, minor), have, _)| {
            ringmcp::testkit::kernel_at_least(*major, *minor) && !*have
        })
        .map(|((major, minor), _, what)| format!("{what} ({major}.{minor})"))
        .collect();
    assert!(missing.is_empty(), "the kernel offers but the host does not use: {missing:?}");
    let slow = ringmcp::host::Host::builder().read_buffers(None).parse_threads(0).build().unwrap();
    assert!(!slow.uring_features().multishot_read);
    for host in [&fast, &slow] {
        let client = host.spawn_blocking(reference("paths", &[])).unwrap();
        let big = client.blocking().call_tool("blob", json!({"bytes": 3_000_000})).unwrap();
        assert_eq!(big.content[0].as_text().unwrap().len(), 3_000_000);
        for i in 0..200 {
            assert_eq!(
                client
                    .blocking()
                    .call_tool("echo", json!({"text": format!("{i}")}))
                    .unwrap()
                    .text(),
                i.to_string()
            );
        }
    }
}

/// Large outputs by reference, server side: `export` answers with a resource_link, and the link
/// is read back with resources/read.
#[test]
fn export_returns_a_link_that_reads_back() {
    let host = host();
    let client = host.spawn_blocking(reference("export", &[])).unwrap();
    let r = client.blocking().call_tool("export", json!({"bytes": 3_000_000})).unwrap();
    assert_eq!(r.content[0].kind(), "resource_link");
    let ringmcp::protocol::Content::Other { raw, .. } = &r.content[0] else { panic!() };
    assert_eq!(raw["size"], 3_000_000);
    let read = client.blocking().read_resource(raw["uri"].as_str().unwrap()).unwrap();
    let text = read.contents[0].text.as_deref().unwrap();
    assert_eq!(text.len(), 3_000_000);
    assert!(text.bytes().enumerate().all(|(i, b)| b == blob_byte(i)));
}

/// A host that delivers every answer inline (up to the 16 MiB frame limit).
fn unspilled_host() -> ringmcp::host::Host {
    ringmcp::host::Host::builder()
        .request_timeout(std::time::Duration::from_secs(30))
        .spill(None)
        .build()
        .unwrap()
}

/// Subscriptions: updates of one URI arrive as typed events numbered 1, 2, 3 in the order sent;
/// after unsubscribing, none. Logging level and completion go through, capability-checked.
#[test]
fn subscriptions_logging_and_completion_through_the_host() {
    use ringmcp::host::ServerEvent;
    let host = host();
    let client = host.spawn_blocking(crate::util::faulty("subs")).unwrap();
    let uri = "ringmcp://reference/readme";
    client.blocking().subscribe_resource(uri).unwrap();
    let r = client.blocking().call_tool("touch", json!({"times": 3})).unwrap();
    assert_eq!(r.text(), "touched 1 resources 3 times");
    let events = client.events();
    let seqs: Vec<u64> = std::iter::from_fn(|| events.try_recv().ok())
        .filter_map(|e| match e {
            ServerEvent::ResourceUpdated { uri: u, seq } if u == uri => Some(seq),
            _ => None,
        })
        .collect();
    assert_eq!(seqs, [1, 2, 3]);
    client.blocking().unsubscribe_resource(uri).unwrap();
    client.blocking().call_tool("touch", json!({"times": 2})).unwrap();
    assert!(
        std::iter::from_fn(|| events.try_recv().ok())
            .all(|e| !matches!(e, ServerEvent::ResourceUpdated { .. }))
    );
    client.blocking().set_log_level("warning").unwrap();
    let err = client.blocking().set_log_level("loud").unwrap_err();
    assert!(matches!(err, ringmcp::host::Error::InvalidArgument(_)), "{err}");
    let done = client
        .blocking()
        .complete(json!({"type": "ref/prompt", "name": "greet"}), "name", "c", None)
        .unwrap();
    assert_eq!(done["values"], json!(["carol"]));
    assert_eq!(
        client.blocking().list_resource_templates().unwrap(),
        Vec::<serde_json::Value>::new()
    );
}

/// `tools()` is cached until the server says its tools changed.
#[test]
fn cached_lists_are_refetched_after_list_changed() {
    let host = host();
    let client = host.spawn_blocking(crate::util::faulty("cache")).unwrap();
    let first = futures_executor::block_on(client.tools()).unwrap();
    let again = futures_executor::block_on(client.tools()).unwrap();
    assert!(std::sync::Arc::ptr_eq(&first, &again), "served from the cache");
    let requests = client.blocking().stats().unwrap().session.requests;
    // `notify` sends notifications/tools/list_changed before its answer.
    client.blocking().call_tool("notify", json!({})).unwrap();
    let fresh = futures_executor::block_on(client.tools()).unwrap();
    assert!(!std::sync::Arc::ptr_eq(&first, &fresh), "refetched after list_changed");
    assert_eq!(*first, *fresh);
    // One tools/call and one tools/list since: the cache was used for nothing else.
    assert_eq!(client.blocking().stats().unwrap().session.requests, requests + 2);
    let prompts = futures_executor::block_on(client.prompts()).unwrap();
    assert!(std::sync::Arc::ptr_eq(
        &prompts,
        &futures_executor::block_on(client.prompts()).unwrap()
    ));
}

#[test]
fn structured_content_matching_its_output_schema_passes() {
    let host = host();
    let client = host.spawn_blocking(reference("schema", &[])).unwrap();
    futures_executor::block_on(client.tools()).unwrap();
    let r = client.blocking().call_tool("add", json!({"a": 2, "b": 3})).unwrap();
    assert_eq!(r.structured_content, Some(json!({"sum": 5})));
    assert_eq!(r.output_schema_error, None);
}

/// `ToolCall::send` queues the request at once (without a gate): the server answers a call
/// whose future nobody polls yet, and the future then has the answer.
#[test]
fn a_sent_call_reaches_the_server_before_its_future_is_polled() {
    let host = host();
    let client = host.spawn_blocking(reference("eager", &[])).unwrap();
    let read = || futures::executor::block_on(client.stats()).unwrap().stdout_bytes;
    let before = read();
    let call = client.call("echo", json!({"text": "sent before polled"})).send();
    let deadline = Instant::now() + Duration::from_secs(20);
    while read() == before {
        assert!(Instant::now() < deadline, "the server never answered an unpolled call");
        std::thread::sleep(Duration::from_millis(5));
    }
    let result = futures::executor::block_on(call).unwrap();
    assert_eq!(result.text(), "sent before polled");
}
