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
    let r = client.blocking().call_tool("blob", json!({"bytes": len})).unwrap();
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
    assert_eq!(client.blocking().stats().unwrap().answers_spilled, 1);
    // Small answers are unaffected, and releasing the payload removes its file.
    assert_eq!(
        client.blocking().call_tool("echo", json!({"text": "small"})).unwrap().text(),
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
    let r = client.blocking().call_tool("echo", json!({"text": text})).unwrap();
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
    let err = client.blocking().call_tool("blob", json!({"bytes": 4 << 20})).unwrap_err();
    let Some(RequestError::SpillFailed { reason }) = err.request_error() else { panic!("{err}") };
    assert!(reason.contains("quota"), "{reason}");
    assert_eq!(
        client.blocking().call_tool("echo", json!({"text": "after"})).unwrap().text(),
        "after"
    );
    drop((client, host));
    let _ = std::fs::remove_dir_all(base);
}

/// Files in the store's folder (all of this process's spill folders under `base`).
fn spill_files(base: &std::path::Path) -> usize {
    std::fs::read_dir(base)
        .into_iter()
        .flatten()
        .flatten()
        .flat_map(|dir| std::fs::read_dir(dir.path()).into_iter().flatten().flatten())
        .count()
}

#[test]
fn a_server_killed_mid_answer_fails_the_call_and_leaves_no_file() {
    let (host, base) = spilling_host(1 << 30);
    let client = host.spawn_blocking(reference("killed", &[])).unwrap();
    let pid = client.blocking().stats().unwrap().pid;
    let big = client.call_tool("blob", json!({"bytes": 1u64 << 30}));
    // Wait until the answer is being spilled, then kill the server under it.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while client.blocking().stats().unwrap().answers_spilled == 0
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(
        client.blocking().stats().unwrap().answers_spilled,
        1,
        "the answer never started spilling"
    );
    std::process::Command::new("kill").args(["-9", &pid.to_string()]).status().unwrap();
    let err = futures_executor::block_on(big).unwrap_err();
    assert!(
        matches!(
            err.request_error(),
            Some(RequestError::SpillFailed { .. } | RequestError::Closed(_))
        ),
        "{err}"
    );
    assert_eq!(spill_files(&base), 0, "a partial answer leaves no file behind");
    drop((client, host));
    let _ = std::fs::remove_dir_all(base);
}

#[test]
fn a_big_answer_and_many_small_calls_at_once_are_all_correct() {
    use futures::stream::{self, StreamExt};
    let (host, base) = spilling_host(1 << 30);
    let big_server = host.spawn_blocking(reference("big", &[])).unwrap();
    let small_server = host.spawn_blocking(reference("small", &[])).unwrap();
    let big = big_server.call_tool("blob", json!({"bytes": 32 << 20}));
    let smalls = (0..1000u32).map(|i| {
        let client = if i % 2 == 0 { big_server.clone() } else { small_server.clone() };
        async move {
            let r = client.call_tool("echo", json!({"text": i.to_string()})).await.unwrap();
            assert_eq!(r.text(), i.to_string());
        }
    });
    let n = futures_executor::block_on(stream::iter(smalls).buffer_unordered(64).count());
    assert_eq!(n, 1000);
    let r = futures_executor::block_on(big).unwrap();
    let (uri, size) = link(&r.content[0]);
    assert_eq!(size, 32 << 20);
    let tail = big_server.read_spilled(&uri, size - 36, 36).unwrap();
    assert!(tail.iter().enumerate().all(|(k, &b)| b == blob_byte((size - 36) as usize + k)));
    drop((big_server, small_server, host));
    let _ = std::fs::remove_dir_all(base);
}

const RSS_CHILD: &str = "RINGMCP_SPILL_RSS_CHILD";

/// Peak resident memory of this process so far (VmHWM), in bytes.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
}

#[test]
fn a_256_mib_answer_is_read_back_exactly_in_flat_memory() {
    if std::env::var_os(RSS_CHILD).is_some() {
        return;
    }
    // In a process of its own, so other tests' memory does not blur the peak.
    crate::leaks::isolated_with("spill::rss_in_isolation", RSS_CHILD);
}

#[test]
#[ignore = "run by a_256_mib_answer_is_read_back_exactly_in_flat_memory in a process of its own"]
fn rss_in_isolation() {
    assert!(std::env::var_os(RSS_CHILD).is_some(), "run through the wrapper test");
    let (host, base) = spilling_host(1 << 30);
    let client = host.spawn_blocking(reference("rss", &[])).unwrap();
    let before = peak_rss();
    let len: u64 = 256 << 20;
    let r = client.blocking().call_tool("blob", json!({"bytes": len})).unwrap();
    let (uri, size) = link(&r.content[0]);
    assert_eq!(size, len);
    let file = client.spilled(&uri).unwrap();
    let mut buf = vec![0u8; 1 << 20];
    let mut offset = 0u64;
    while offset < size {
        let n = file.read_at(offset, &mut buf).unwrap();
        assert!(n > 0);
        for (k, &b) in buf[..n].iter().enumerate() {
            assert_eq!(b, blob_byte((offset as usize) + k));
        }
        offset += n as u64;
    }
    let growth = peak_rss().saturating_sub(before);
    eprintln!("256 MiB answer: host peak RSS grew by {} MiB", growth >> 20);
    assert!(growth < 64 << 20, "peak RSS grew by {growth} bytes for a {len}-byte answer");
    drop((file, client, host));
    let _ = std::fs::remove_dir_all(base);
}

#[test]
fn a_caller_that_stops_waiting_leaves_no_spilled_file() {
    let (host, base) = spilling_host(1 << 30);
    let client = host.spawn_blocking(reference("dropper", &[])).unwrap();
    let handshake = client.blocking().stats().unwrap().session.requests;
    let call = client.call_tool("blob", json!({"bytes": 24 << 20}));
    // Sent (in the session, so dropping it cancels rather than unqueues)...
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while client.blocking().stats().unwrap().session.requests == handshake {
        assert!(std::time::Instant::now() < deadline, "the call was never sent");
        std::thread::sleep(Duration::from_millis(2));
    }
    drop(call); // ...then abandoned: cancelled, and its answer discarded as it arrives
    // The server answers in order: once this echo is back, the big answer was fully received.
    assert_eq!(
        client.blocking().call_tool("echo", json!({"text": "after"})).unwrap().text(),
        "after"
    );
    let stats = client.blocking().stats().unwrap();
    assert_eq!((stats.answers_spilled, stats.session.late_answers), (1, 1), "{stats:?}");
    assert_eq!(spill_files(&base), 0, "the abandoned answer's file went with it");
    drop((client, host));
    let _ = std::fs::remove_dir_all(base);
}

fn blob_ok(bytes: &[u8], from: usize) -> bool {
    bytes.iter().enumerate().all(|(k, b)| *b == blob_byte(from + k))
}

/// Every chunk of a payload's async stream, concatenated.
fn streamed(file: &ringmcp::spill::store::SpillFile) -> Vec<u8> {
    use futures::StreamExt;
    let chunks: Vec<_> = futures::executor::block_on(file.stream().collect());
    chunks.into_iter().map(Result::unwrap).fold(Vec::new(), |mut all, c| {
        all.extend_from_slice(&c);
        all
    })
}

/// Spilling is on by default: a 10 MB answer arrives as a link, not as 10 MB in memory.
#[test]
fn the_default_host_spills_big_answers() {
    let host = crate::util::host();
    let client = host.spawn_blocking(reference("default-spill", &[])).unwrap();
    let len = 10_000_000;
    let r = client.blocking().call_tool("blob", json!({"bytes": len})).unwrap();
    let (uri, size) = link(&r.content[0]);
    assert_eq!(size, len as u64);
    let file = client.spilled(&uri).unwrap();
    let back = streamed(&file);
    assert_eq!(back.len(), len);
    assert!(blob_ok(&back, 0));
    // Below the 4 MiB line threshold nothing changes.
    let r = client.blocking().call_tool("blob", json!({"bytes": 1_000_000})).unwrap();
    assert_eq!(r.content[0].as_text().unwrap().len(), 1_000_000);
}

/// The server side of the pattern: `export` and `blob {as_link}` answer with a resource_link,
/// and `fetch_resource` follows it into the same chunked handle a spilled result gets, small
/// (written to the store) or large (spilled as it arrived).
#[test]
fn resource_links_are_followed_through_the_same_chunked_interface() {
    let (host, base) = spilling_host(1 << 30);
    let client = host.spawn_blocking(reference("follow", &[])).unwrap();
    for (tool, args, len) in [
        ("export", json!({"bytes": 300_000}), 300_000),
        ("blob", json!({"bytes": 5_000_000, "as_link": true}), 5_000_000),
        ("export", json!({"bytes": 0}), 0),
    ] {
        let r = client.blocking().call_tool(tool, args).unwrap();
        let (server_uri, size) = link(&r.content[0]);
        assert!(server_uri.starts_with("ringmcp://"), "a link of the server's: {server_uri}");
        assert_eq!(size, len as u64);
        let file = client.blocking().fetch_resource(&server_uri).unwrap();
        assert_eq!(file.len(), len as u64, "{tool}");
        assert!(file.uri().starts_with("ringmcp-spill://"));
        let back = streamed(&file);
        assert_eq!(back.len(), len);
        assert!(blob_ok(&back, 0), "{tool} {len}");
        // Chunked reads by URI, like any spilled payload; the spill URI itself resolves too.
        let mid = (len / 2) as u64;
        assert!(blob_ok(&client.read_spilled(file.uri(), mid, 4096).unwrap(), mid as usize));
        assert_eq!(client.blocking().fetch_resource(file.uri()).unwrap().uri(), file.uri());
        let (path, uri) = (file.path().to_owned(), file.uri().to_owned());
        drop(file);
        assert!(client.release_spilled(&uri).is_some());
        assert!(!path.exists(), "released with its last handle");
    }
    // Unknown resources fail like resources/read does.
    let err = client.blocking().fetch_resource("ringmcp://reference/export/x").unwrap_err();
    assert!(
        matches!(err.request_error(), Some(RequestError::ResourceNotFound { error, .. }) if error.code == -32002),
        "{err}"
    );
    // Without a store there is nowhere to put a payload.
    let plain = Host::builder().spill(None).build().unwrap();
    let c = plain.spawn_blocking(reference("nostore", &[])).unwrap();
    let err = c.blocking().fetch_resource("ringmcp://reference/export/10").unwrap_err();
    assert!(err.to_string().contains("spilling is off"), "{err}");
    drop((client, host));
    let _ = std::fs::remove_dir_all(base);
}

/// Unmounts on drop.
struct Mount(PathBuf);

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// The store's disk fills up mid-answer: that answer fails with a precise error, its partial
/// file is removed, and the session goes on (including spilling again once there is room).
#[test]
fn a_full_disk_fails_that_answer_and_the_session_continues() {
    let base = std::env::temp_dir().join(format!("ringmcp-spill-full-{}", std::process::id()));
    std::fs::create_dir_all(&base).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=3m,mode=0700", "tmpfs"])
        .arg(&base)
        .output();
    match mounted {
        Ok(out) if out.status.success() => {}
        other => {
            crate::util::skip_machine(format!("cannot mount a tmpfs (not root?): {other:?}"));
            let _ = std::fs::remove_dir(&base);
            return;
        }
    }
    let mount = Mount(base.clone());
    let config = SpillConfig {
        line_threshold: 1 << 20,
        string_threshold: 64 << 10,
        store: StoreConfig::new().base_dir(base.clone()),
    };
    let host = Host::builder().spill(Some(config)).build().unwrap();
    let client = host.spawn_blocking(reference("diskfull", &[])).unwrap();
    let err = client.blocking().call_tool("blob", json!({"bytes": 8 << 20})).unwrap_err();
    let Some(RequestError::SpillFailed { reason }) = err.request_error() else { panic!("{err}") };
    assert!(reason.contains("no space left"), "{reason}");
    assert_eq!(spill_files(&base), 0, "the partial file is removed");
    assert_eq!(client.blocking().call_tool("echo", json!({"text": "on"})).unwrap().text(), "on");
    let r = client.blocking().call_tool("blob", json!({"bytes": 2 << 20})).unwrap();
    let (uri, _) = link(&r.content[0]);
    assert!(blob_ok(&client.read_spilled(&uri, 0, 2 << 20).unwrap(), 0));
    drop(client.release_spilled(&uri));
    assert_eq!(spill_files(&base), 0);
    drop((client, host));
    drop(mount);
    let _ = std::fs::remove_dir_all(&base);
}

/// `ringmcp call --save DIR` puts each spilled payload in DIR: a hard link when DIR shares the
/// spill folder's file system, a kernel copy otherwise; the spill folder is gone afterwards.
#[test]
fn call_save_links_or_copies_the_spilled_payload_and_leaves_no_spill_file() {
    let root = std::env::temp_dir().join(format!("ringmcp-save-it-{}", std::process::id()));
    let shm = PathBuf::from("/dev/shm").join(format!("ringmcp-save-it-{}", std::process::id()));
    let len = 6_000_000usize;
    let mut runs = vec![root.join("runtime")];
    if shm.parent().is_some_and(std::path::Path::is_dir) {
        runs.push(shm.clone());
    }
    for runtime in runs {
        std::fs::create_dir_all(&runtime).unwrap();
        let dir = root.join("saved");
        let out = std::process::Command::new(crate::util::ringmcp_bin())
            .env("XDG_RUNTIME_DIR", &runtime)
            .args(["call", "--no-sandbox", "--save"])
            .arg(&dir)
            .args(["blob", &json!({"bytes": len}).to_string()])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        use std::os::unix::fs::MetadataExt;
        let same_fs =
            std::fs::metadata(&runtime).unwrap().dev() == std::fs::metadata(&root).unwrap().dev();
        let how = if same_fs { "linked" } else { "copied" };
        assert!(stderr.contains(&format!("({len} bytes, {how}) to")), "{how}: {stderr}");
        let saved: Vec<PathBuf> =
            std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
        assert_eq!(saved.len(), 1, "{saved:?}");
        let bytes = std::fs::read(&saved[0]).unwrap();
        assert_eq!(bytes.len(), len);
        assert!(blob_ok(&bytes, 0), "the saved payload is the server's text");
        assert_eq!(spill_files(&runtime.join("ringmcp")), 0, "no spill file is left");
        std::fs::remove_dir_all(&dir).unwrap();
    }
    let _ = std::fs::remove_dir_all(&root);
    let _ = std::fs::remove_dir_all(&shm);
}

/// Through `ringmcp gateway`, the payload is the gateway's (its own spill store): `call --save`
/// reads it from the gateway in ranges (`URI?offset=N&length=M`) and writes it whole, and this
/// host keeps no spill file of its own afterwards.
#[test]
fn call_save_through_a_gateway_reads_the_payload_in_ranges() {
    let root = std::env::temp_dir().join(format!("ringmcp-save-gw-{}", std::process::id()));
    let runtime = root.join("runtime");
    std::fs::create_dir_all(&runtime).unwrap();
    let bin = crate::util::ringmcp_bin();
    // Ranges of the size `call` asks (1 MiB, several asked ahead), and a gateway that answers
    // fewer bytes per range than asked (the first range tells, and the rest are asked in its
    // size).
    for chunk in [None, Some(300_001)] {
        let config = root.join("one.json");
        let mut entry = json!({"mcpServers": {"ref": {"command": bin, "args": ["serve"]}}});
        if let Some(chunk) = chunk {
            entry["gateway"] = json!({"readChunkMax": chunk});
        }
        std::fs::write(&config, entry.to_string()).unwrap();
        // Over 4 MiB, the spill threshold: nine ranges of 1 MiB, the last one short.
        let len = 9_000_000usize;
        let dir = root.join("saved");
        let _ = std::fs::remove_dir_all(&dir);
        let out = std::process::Command::new(&bin)
            .env("XDG_RUNTIME_DIR", &runtime)
            .args(["call", "--no-sandbox", "--save"])
            .arg(&dir)
            .args(["ref__blob", &json!({"bytes": len}).to_string(), "--"])
            .arg(&bin)
            .args(["gateway", "--no-sandbox", "--config"])
            .arg(&config)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{chunk:?}: {stderr}");
        let said = format!("({len} bytes, read in ranges from the server)");
        assert!(stderr.contains(&said), "{chunk:?}: {stderr}");
        let saved: Vec<PathBuf> =
            std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
        assert_eq!(saved.len(), 1, "{saved:?}");
        let bytes = std::fs::read(&saved[0]).unwrap();
        assert_eq!(bytes.len(), len, "{chunk:?}");
        assert!(blob_ok(&bytes, 0), "{chunk:?}: the saved payload is the server's text");
        assert_eq!(spill_files(&runtime.join("ringmcp")), 0, "no spill file is left here");
    }
    let _ = std::fs::remove_dir_all(&root);
}
