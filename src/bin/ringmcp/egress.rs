//! The CLI's egress proxy for `sandbox run`, and `--network-log`'s report.

use std::sync::{Arc, Mutex};

use ringmcp::egress::{EgressEvent, Proxy, ProxyConfig};

/// Starts a proxy that also keeps every event in `log`.
pub(crate) fn start(log: Arc<Mutex<Vec<EgressEvent>>>) -> std::io::Result<Proxy> {
    let sink: ringmcp::egress::Sink = Arc::new(move |e: &EgressEvent| {
        let mut log = log.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        // Bounded: a command that looks up a million names keeps the first 10,000 events.
        if log.len() < 10_000 {
            log.push(e.clone());
        }
    });
    Proxy::start(ProxyConfig { sink: Some(sink), ..ProxyConfig::default() })
}

/// Prints what a command looked up and where it connected, and the entries that would let
/// through what was refused.
pub(crate) fn print_log(log: &[EgressEvent]) {
    let mut names: Vec<(String, bool, usize)> = Vec::new();
    let mut wanted: Vec<String> = Vec::new();
    note!("ringmcp: network log");
    for e in log {
        match e {
            EgressEvent::Lookup { name, answered, .. } => {
                match names.iter_mut().find(|(n, _, _)| n == name) {
                    Some(entry) => {
                        entry.1 |= *answered;
                        entry.2 += 1;
                    }
                    None => names.push((name.clone(), *answered, 1)),
                }
            }
            EgressEvent::Connection(c) => {
                let addr = c.addr.map(|a| format!(" ({a})")).unwrap_or_default();
                let how = match &c.reason {
                    Some(r) => format!("{} [{}]: {r}", c.verdict, c.rule),
                    None => format!("{} [{}]", c.verdict, c.rule),
                };
                note!(
                    "  connect {}:{}{addr}  {how}  up {} B, down {} B, {} ms",
                    c.dest,
                    c.port,
                    c.bytes_up,
                    c.bytes_down,
                    c.duration_ms
                );
                if c.verdict == "refuse" && c.rule == "not-listed" {
                    let entry = if [80, 443].contains(&c.port) {
                        c.dest.clone()
                    } else {
                        format!("{}:{}", c.dest, c.port)
                    };
                    if !wanted.contains(&entry) {
                        wanted.push(entry);
                    }
                }
            }
            _ => {}
        }
    }
    for (name, answered, _) in &names {
        if !answered && !wanted.contains(name) {
            wanted.push(name.clone());
        }
    }
    for (name, answered, n) in &names {
        let what = if *answered { "answered" } else { "refused (NXDOMAIN: not in the allowlist)" };
        note!("  lookup  {name}  {what}{}", if *n > 1 { format!(" ×{n}") } else { String::new() });
    }
    if log.is_empty() {
        note!("  (no lookups, no connections)");
    }
    if !wanted.is_empty() {
        let list = wanted.iter().map(|w| format!("{w:?}")).collect::<Vec<_>>().join(", ");
        note!(
            "ringmcp: to let these through, add to the server's config: \"sandbox\": {{\"network\": {{\"allow\": [{list}]}}}} (or --allow-host for each)"
        );
    }
}
