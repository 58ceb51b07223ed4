//! The bench's results: one JSON object (`--json`) or a compact table.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::measure::{CpuTime, LatencySummary};
use super::servers::{FdLimit, Idle};
use crate::size::{format_bytes, sig3};

/// What was asked for.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Setup {
    pub(crate) servers: usize,
    pub(crate) concurrency: usize,
    /// `None` in `--duration` mode.
    pub(crate) requests: Option<u64>,
    pub(crate) duration: Option<Duration>,
    pub(crate) warmup: u64,
    pub(crate) tool: String,
    /// The `--payload` size, or the default echo text's length; `None` for custom `--args`.
    pub(crate) payload_bytes: Option<u64>,
    /// Length of one request line as sent (the baseline bounces exactly these bytes).
    pub(crate) request_bytes: usize,
}

impl Setup {
    /// "N server(s), concurrency C": the part every title of a run shares.
    pub(crate) fn shape(&self) -> String {
        let plural = if self.servers == 1 { "" } else { "s" };
        format!("{} server{plural}, concurrency {}", self.servers, self.concurrency)
    }
}

/// The raw pipe ping-pong of the same request line.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BaselineResult {
    pub(crate) latency: LatencySummary,
    pub(crate) writer_thread: bool,
}

/// Everything measured in one run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Report {
    pub(crate) setup: Setup,
    pub(crate) ok: u64,
    pub(crate) elapsed: Duration,
    pub(crate) latency: LatencySummary,
    pub(crate) cpu: CpuTime,
    pub(crate) peak_rss_bytes: u64,
    pub(crate) errors: BTreeMap<String, u64>,
    /// Bytes the host read from the measured servers' stdout during the measured phase.
    pub(crate) host_bytes_received: Option<u64>,
    pub(crate) baseline: Option<BaselineResult>,
    pub(crate) idle: Option<Idle>,
    pub(crate) fd_limit: Option<FdLimit>,
    /// `--faults`: the soak's accounts, samples and leaks.
    pub(crate) soak: Option<super::soak::SoakReport>,
}

/// Rounds to 0.01 so the JSON stays readable.
fn r2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

impl Report {
    pub(crate) fn calls(&self) -> u64 {
        self.latency.count
    }

    pub(crate) fn calls_per_s(&self) -> f64 {
        let secs = self.elapsed.as_secs_f64();
        if secs > 0.0 { self.calls() as f64 / secs } else { 0.0 }
    }

    /// Process CPU (user + system, reactor thread included) per completed call, in µs.
    pub(crate) fn cpu_us_per_call(&self) -> f64 {
        if self.calls() == 0 {
            return 0.0;
        }
        self.cpu.total().as_secs_f64() * 1e6 / self.calls() as f64
    }

    /// ringmcp's p50 over the raw pipe's p50.
    pub(crate) fn ratio_p50(&self) -> Option<f64> {
        let b = self.baseline.as_ref()?;
        (b.latency.p50 > 0.0).then(|| self.latency.p50 / b.latency.p50)
    }

    pub(crate) fn to_json(&self) -> Value {
        let s = &self.setup;
        let l = &self.latency;
        let mut out = json!({
            "servers": s.servers,
            "concurrency": s.concurrency,
            "requests": s.requests,
            "duration_s": s.duration.map(|d| d.as_secs_f64()),
            "warmup": s.warmup,
            "tool": s.tool,
            "payload_bytes": s.payload_bytes,
            "request_bytes": s.request_bytes,
            "calls": self.calls(),
            "ok": self.ok,
            "elapsed_s": self.elapsed.as_secs_f64(),
            "calls_per_s": r2(self.calls_per_s()),
            "latency_us": {
                "min": r2(l.min), "mean": r2(l.mean),
                "p50": r2(l.p50), "p90": r2(l.p90), "p99": r2(l.p99), "p999": r2(l.p999),
                "max": r2(l.max),
            },
            "cpu_us_per_call": r2(self.cpu_us_per_call()),
            "cpu_user_s": self.cpu.user.as_secs_f64(),
            "cpu_sys_s": self.cpu.system.as_secs_f64(),
            "peak_rss_bytes": self.peak_rss_bytes,
            "host_bytes_received": self.host_bytes_received,
            "errors": self.errors,
        });
        let map = out.as_object_mut().expect("built as an object");
        if let Some(b) = &self.baseline {
            map.insert(
                "baseline".into(),
                json!({
                    "p50_us": r2(b.latency.p50),
                    "p99_us": r2(b.latency.p99),
                    "max_us": r2(b.latency.max),
                    "ratio_p50": self.ratio_p50().map(|r| (r * 1000.0).round() / 1000.0),
                    "requests": b.latency.count,
                    "writer_thread": b.writer_thread,
                }),
            );
        }
        if let Some(i) = &self.idle {
            map.insert("idle".into(), idle_json(i));
        }
        if let Some(f) = &self.fd_limit {
            map.insert(
                "nofile_limit".into(),
                json!({ "soft_before": f.soft_before, "soft": f.soft, "hard": f.hard }),
            );
        }
        if let Some(soak) = &self.soak {
            map.insert("soak".into(), soak.to_json());
        }
        out
    }

    /// The compact table printed without `--json`.
    pub(crate) fn to_text(&self) -> String {
        let s = &self.setup;
        let l = &self.latency;
        let mut t = String::new();
        let what = match (s.requests, s.duration) {
            (_, Some(d)) => format!("{}s", sig3(d.as_secs_f64())),
            (Some(r), None) => format!("{r} calls"),
            (None, None) => String::new(),
        };
        let payload = s.payload_bytes.map(|p| format!(", payload {}", format_bytes(p)));
        let _ = writeln!(
            t,
            "ringmcp bench: {} × {what} on {}{} (request line {})",
            s.tool,
            s.shape(),
            payload.unwrap_or_default(),
            format_bytes(s.request_bytes as u64),
        );
        row(
            &mut t,
            "calls/s",
            format!(
                "{:.0}  ({} calls in {} s)",
                self.calls_per_s(),
                self.calls(),
                sig3(self.elapsed.as_secs_f64())
            ),
        );
        row(
            &mut t,
            "latency µs",
            format!(
                "p50 {}  p90 {}  p99 {}  p99.9 {}  max {}",
                sig3(l.p50),
                sig3(l.p90),
                sig3(l.p99),
                sig3(l.p999),
                sig3(l.max)
            ),
        );
        row(
            &mut t,
            "cpu/call",
            format!(
                "{} µs  (user {} s, sys {} s, whole process)",
                sig3(self.cpu_us_per_call()),
                sig3(self.cpu.user.as_secs_f64()),
                sig3(self.cpu.system.as_secs_f64())
            ),
        );
        row(&mut t, "peak RSS", format_bytes(self.peak_rss_bytes));
        if let Some(bytes) = self.host_bytes_received {
            let rate = bytes as f64 / self.elapsed.as_secs_f64().max(1e-9);
            row(
                &mut t,
                "host received",
                format!("{}  ({}/s)", format_bytes(bytes), format_bytes(rate as u64)),
            );
        }
        let errors = if self.errors.is_empty() {
            "none".to_owned()
        } else {
            self.errors.iter().map(|(k, n)| format!("{k}: {n}")).collect::<Vec<_>>().join(", ")
        };
        row(&mut t, "errors", errors);
        self.baseline_rows(&mut t);
        self.extra_rows(&mut t);
        t
    }

    /// The raw-pipe baseline's rows, when it ran.
    fn baseline_rows(&self, t: &mut String) {
        let s = &self.setup;
        if let Some(b) = &self.baseline {
            let ratio = self.ratio_p50().map_or_else(|| "n/a".to_owned(), |r| format!("{r:.2}×"));
            row(
                t,
                "raw pipe (cat)",
                format!(
                    "p50 {}  p99 {} µs{}",
                    sig3(b.latency.p50),
                    sig3(b.latency.p99),
                    if b.writer_thread { "  (writer thread)" } else { "" }
                ),
            );
            row(t, "ringmcp / raw", format!("p50 ratio {ratio}  (goal ≤ 1.2×)"));
            let answer = self.host_bytes_received.map(|b| b / self.calls().max(1));
            if let Some(answer) = answer.filter(|&a| a > 4 * s.request_bytes as u64) {
                row(
                    t,
                    "",
                    format!(
                        "(answers average {} but the raw pipe bounces only the {} request line)",
                        format_bytes(answer),
                        format_bytes(s.request_bytes as u64)
                    ),
                );
            }
        }
    }

    /// The idle-servers and fd-limit rows, when they apply.
    fn extra_rows(&self, t: &mut String) {
        if let Some(i) = &self.idle {
            row(
                t,
                "idle servers",
                format!(
                    "{} extra, started in {} s; host CPU {}% over {} s; RSS {}",
                    i.servers,
                    sig3(i.spawn_time.as_secs_f64()),
                    sig3(i.host_cpu_percent),
                    sig3(i.window.as_secs_f64()),
                    i.rss_bytes.map_or_else(|| "?".to_owned(), format_bytes)
                ),
            );
        }
        if let Some(f) = self.fd_limit.filter(|f| f.soft != f.soft_before) {
            row(t, "fd limit", format!("raised {} → {}", f.soft_before, f.soft));
        }
    }
}

/// One labelled row of the text report.
fn row(t: &mut String, label: &str, value: String) {
    let _ = writeln!(t, "  {label:<15} {value}");
}

fn idle_json(i: &Idle) -> Value {
    let mut m = Map::new();
    m.insert("servers".into(), json!(i.servers));
    m.insert("spawn_s".into(), json!(i.spawn_time.as_secs_f64()));
    m.insert("seconds".into(), json!(i.window.as_secs_f64()));
    m.insert("host_cpu_percent".into(), json!((i.host_cpu_percent * 1000.0).round() / 1000.0));
    m.insert("rss_bytes".into(), json!(i.rss_bytes));
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn latency(p50: f64) -> LatencySummary {
        LatencySummary {
            count: 1000,
            min: p50 / 2.0,
            mean: p50,
            p50,
            p90: p50 * 1.5,
            p99: p50 * 2.0,
            p999: p50 * 3.0,
            max: p50 * 4.0,
        }
    }

    fn report() -> Report {
        Report {
            setup: Setup {
                servers: 2,
                concurrency: 4,
                requests: Some(1000),
                duration: None,
                warmup: 200,
                tool: "echo".into(),
                payload_bytes: Some(5),
                request_bytes: 94,
            },
            ok: 998,
            elapsed: Duration::from_millis(500),
            latency: latency(30.0),
            cpu: CpuTime { user: Duration::from_millis(10), system: Duration::from_millis(20) },
            peak_rss_bytes: 10 << 20,
            errors: BTreeMap::from([("timeout".to_owned(), 2)]),
            host_bytes_received: Some(123_456),
            baseline: Some(BaselineResult { latency: latency(20.0), writer_thread: false }),
            idle: None,
            fd_limit: None,
            soak: None,
        }
    }

    #[test]
    fn json_has_the_documented_shape() {
        let v = report().to_json();
        for key in [
            "servers",
            "concurrency",
            "requests",
            "tool",
            "payload_bytes",
            "calls_per_s",
            "latency_us",
            "cpu_us_per_call",
            "peak_rss_bytes",
            "errors",
            "baseline",
        ] {
            assert!(v.get(key).is_some(), "missing {key} in {v}");
        }
        for key in ["p50", "p90", "p99", "p999", "max"] {
            assert!(v["latency_us"][key].is_f64(), "latency_us.{key} in {v}");
        }
        assert_eq!(v["calls_per_s"], json!(2000.0));
        assert_eq!(v["cpu_us_per_call"], json!(30.0));
        assert_eq!(v["errors"], json!({"timeout": 2}));
        assert_eq!(v["baseline"]["p50_us"], json!(20.0));
        assert_eq!(v["baseline"]["ratio_p50"], json!(1.5));
        assert!(v.get("idle").is_none());
    }

    #[test]
    fn json_without_baseline_and_with_idle() {
        let mut r = report();
        r.baseline = None;
        r.idle = Some(Idle {
            servers: 10,
            spawn_time: Duration::from_secs(1),
            window: Duration::from_secs(3),
            host_cpu_percent: 0.25,
            rss_bytes: Some(1 << 20),
        });
        let v = r.to_json();
        assert!(v.get("baseline").is_none());
        assert_eq!(v["idle"]["servers"], json!(10));
        assert_eq!(v["idle"]["host_cpu_percent"], json!(0.25));
    }

    #[test]
    fn text_names_every_measure() {
        let text = report().to_text();
        for needle in ["calls/s", "p50 30.0", "p99.9 90.0", "cpu/call", "timeout: 2", "1.50×"] {
            assert!(text.contains(needle), "{needle:?} not in:\n{text}");
        }
    }
}
