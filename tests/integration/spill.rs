//! Large answers by reference: streamed to the spill store while they arrive, handed on as
//! `resource_link`s, read back in chunks.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use ringmcp::host::{Host, SpillConfig};
use ringmcp::protocol::{Content, RequestError};
use ringmcp::spill::store::StoreConfig;
use serde_json::json;

use crate::util::reference;

fn blob_byte(i: usize) -> u8 {
    b"abcdefghijklmnopqrstuvwxyz0123456789"[i % 36]
}

/// A host that spills lines over 1 MiB into its own folder.
fn spilling_host(quota: u64) -> (Host, PathBuf) {
    static N: AtomicUsize = AtomicUsize::new(0);
    let base = std::env::temp_dir().join(format!(
        "ringmcp-spill-it-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let config = SpillConfig {
        line_threshold: 1 << 20,
        string_threshold: 64 << 10,
        store: StoreConfig::new().base_dir(base.clone()).quota_bytes(quota),
    };
    let host = Host::builder()
        .spill(Some(config))
        .request_timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    (host, base)
}

fn link(content: &Content) -> (String, u64) {
    let Content::Other { kind, raw } = content else { panic!("not a link: {content:?}") };
    assert_eq!(kind, "resource_link");
    (raw["uri"].as_str().unwrap().to_owned(), raw["size"].as_u64().unwrap())
}

#[test]
fn a_big_answer_is_spilled_and_read_back_in_chunks() {
    let (host, base) = spilling_host(1 << 30);
    let client = host.spawn_blocking(reference("spill", &[])).unwrap();
    let len = 48 << 20;
    let r = client.call_tool_blocking("blob", json!({"bytes": len})).unwrap();
    let (uri, size) = link(&r.content[0]);
    assert!(uri.starts_with("ringmcp-spill://"), "{uri}");
    assert_eq!(size, len as u64);
    let mut offset = 0u64;
    while offset < size {
        let chunk = client.read_spilled(&uri, offset, 1 << 20).unwrap();
        assert!(!chunk.is_empty());
        for (k, b) in chunk.iter().enumerate() {
            assert_eq!(*b, blob_byte(offset as usize + k), "byte {}", offset as usize + k);
        }
        offset += chunk.len() as u64;
    }
    assert_eq!(offset, size);
    assert_eq!(client.stats_blocking().unwrap().answers_spilled, 1);
    // Small answers are unaffected, and releasing the payload removes its file.
    assert_eq!(
        client.call_tool_blocking("echo", json!({"text": "small"})).unwrap().text(),
        "small"
    );
    let file = client.release_spilled(&uri).unwrap();
    let path = file.path().to_owned();
    assert!(path.exists());
    drop(file);
    assert!(!path.exists(), "the file goes with its last handle");
    drop(client);
    drop(host);
    let _ = std::fs::remove_dir_all(base);
}

#[test]
fn escapes_and_multibyte_text_survive_spilling_exactly() {
    let (host, base) = spilling_host(1 << 30);
    let client = host.spawn_blocking(reference("escapes", &[])).unwrap();
    let unit = "é😀 \"quoted\" back\\slash\n\ttab \u{1}ctl ";
    let text: String = unit.repeat((3 << 20) / unit.len());
    let r = client.call_tool_blocking("echo", json!({"text": text})).unwrap();
    let (uri, size) = link(&r.content[0]);
    assert_eq!(size, text.len() as u64);
    let mut back = Vec::new();
    let mut reader = client.spilled(&uri).unwrap().reader();
    std::io::Read::read_to_end(&mut reader, &mut back).unwrap();
    assert_eq!(back, text.as_bytes());
    drop((client, host));
    let _ = std::fs::remove_dir_all(base);
}

#[test]
fn quota_exhausted_fails_that_answer_precisely_and_the_session_continues() {
    let (host, base) = spilling_host(1 << 20);
    let client = host.spawn_blocking(reference("quota", &[])).unwrap();
    let err = client.call_tool_blocking("blob", json!({"bytes": 4 << 20})).unwrap_err();
    let Some(RequestError::SpillFailed { reason }) = err.request_error() else { panic!("{err}") };
    assert!(reason.contains("quota"), "{reason}");
    assert_eq!(
        client.call_tool_blocking("echo", json!({"text": "after"})).unwrap().text(),
        "after"
    );
    drop((client, host));
    let _ = std::fs::remove_dir_all(base);
}
