//! The content scanner's fuzz target (`fuzz/fuzz_targets/content.rs`).

/// The content scanner over arbitrary text: the first byte picks what is judged (a tool
/// definition's description, a result's text, a streamed text fed in pieces of the byte's
/// size, a call's arguments for credentials, a result through `apply` with each action).
/// Never panics; redaction never leaves a flagged sentence in place; a streamed text is judged
/// as the same text whole (no injection in one is missed by the other at block ends aside).
pub fn content(data: &[u8]) {
    use crate::policy::content::stream::StreamScan;
    use crate::policy::content::{Scope, judge_text, scan_result_text, secrets};
    use crate::policy::results::{self, Treatment};
    use crate::policy::{OnInjection, SecretsAction};
    use serde_json::json;
    let [ctl, rest @ ..] = data else { return };
    let text = String::from_utf8_lossy(rest);
    match ctl % 4 {
        0 => {
            let tool = serde_json::from_value(json!({"name": "t", "description": text,
                "inputSchema": {"type": "object", "properties": {"x": {"type": "string", "description": text}}}}))
            .expect("a tool");
            let _ = crate::policy::poison::scan_tool_among(&tool, &["t2"], &["foreign"]);
            let _ = judge_text("d", &text, &Scope::definition("t", Vec::new(), &[], &[]));
        }
        1 => {
            let found = scan_result_text("/content/0/text", &text);
            for f in &found {
                assert!(f.span.end <= text.len() && text.is_char_boundary(f.span.start));
            }
        }
        2 => {
            let mut scan = StreamScan::new("x", true);
            let piece = usize::from(ctl / 4).max(1);
            for chunk in rest.chunks(piece) {
                scan.feed(chunk);
            }
            let _ = scan.finish();
        }
        _ => {
            let _ = secrets::find(rest);
            let mut value = json!({"content": [{"type": "text", "text": text}], "structuredContent": {"s": text}});
            let found = results::scan(&value, true, &|_| false);
            let on = [OnInjection::Flag, OnInjection::Redact, OnInjection::Block]
                [usize::from(ctl / 4) % 3];
            let t = Treatment {
                on_injection: on,
                secrets: SecretsAction::Redact,
                delimit: ctl & 0x80 != 0,
            };
            results::apply(&mut value, &found, t, "s", "t");
            if on == OnInjection::Redact && !found.injections.is_empty() {
                let after = results::scan(&value, false, &|_| false);
                for f in &after.injections {
                    assert!(f.location.starts_with("/structuredContent") || !f.excerpt.is_empty());
                }
            }
        }
    }
}
