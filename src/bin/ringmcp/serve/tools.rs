//! The tools: `tools/call` validation and each tool's behaviour, including the streamed `blob`.

use super::catalog::EXPORT_PREFIX;
use std::io::{self, Write};

use ringmcp::jsonrpc::{ErrorObject, Id, codes};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Number, Value, json};

use super::handler::{Deferred, Server};
use super::wire::{
    ToolResult, parse, text_result, write_blob, write_error, write_notification, write_result,
};

/// The line the `noise` tool writes to stdout before its answer.
pub(crate) const NOISE_LINE: &[u8] = b"this is not json\n";

/// A validated `tools/call`.
#[derive(Debug)]
enum Call {
    Echo(String),
    Blob(u64),
    Export(u64),
    Slow(u64),
    Fail,
    Add(Number, Number),
    Exit(i32),
    Noise,
    Hang,
    Stderr(u64),
    Notify,
    AskRoots,
    Touch(u64),
    Children(u64),
    Freeze(u64),
    Fds,
    Cancelled,
    Calls,
    StallBlob(u64, u64),
}

impl<E: Write> Server<E> {
    /// Runs `tools/call`: validates the call, then performs it.
    pub(super) fn call_tool(
        &mut self,
        id: Id,
        params: Option<Value>,
        out: &mut impl Write,
    ) -> io::Result<Option<Deferred>> {
        if let Some(name) = params.as_ref().and_then(|p| p.get("name")) {
            self.calls.push(name.clone());
        }
        let call = parse::<CallParams>("tools/call", params)
            .and_then(|p| validate(&p.name, p.arguments, self.fault_tools));
        let call = match call {
            Ok(call) => call,
            Err(error) => {
                write_error(out, Some(&id), &error)?;
                return Ok(None);
            }
        };
        match call {
            Call::Echo(text) => write_result(out, &id, &text_result(text, false))?,
            Call::Blob(len) => write_blob(out, &id, len)?,
            Call::Export(len) => {
                let uri = format!("{EXPORT_PREFIX}{len}");
                let link = json!({"content": [{"type": "resource_link", "uri": uri,
                    "name": format!("export-{len}"), "mimeType": "text/plain", "size": len}]});
                write_result(out, &id, &link)?;
            }
            Call::Slow(ms) => return Ok(Some(Deferred::Sleep { id, ms })),
            Call::Fail => {
                let text = "The fail tool always fails (this is its expected behaviour).";
                write_result(out, &id, &text_result(text, true))?;
            }
            Call::Add(a, b) => write_result(out, &id, &add(&a, &b))?,
            Call::Exit(code) => return Ok(Some(Deferred::Exit(code))),
            Call::Noise => {
                out.write_all(NOISE_LINE)?;
                write_result(out, &id, &text_result("noise", false))?;
            }
            Call::Hang => {}
            Call::Stderr(len) => {
                write_stderr(&mut self.stderr, len)?;
                let text = format!("wrote {len} bytes to stderr");
                write_result(out, &id, &text_result(text, false))?;
            }
            Call::Children(n) => write_result(out, &id, &text_result(children(n), false))?,
            Call::StallBlob(len, ms) => return Ok(Some(Deferred::StallBlob { id, len, ms })),
            Call::Cancelled => {
                let ids = Value::Array(self.cancelled.clone()).to_string();
                write_result(out, &id, &text_result(ids, false))?;
            }
            Call::Calls => {
                let names = Value::Array(self.calls.clone()).to_string();
                write_result(out, &id, &text_result(names, false))?;
            }
            Call::Fds => {
                let fds = FDS_AT_START.get().map_or_else(Vec::new, Clone::clone);
                write_result(out, &id, &text_result(format!("{fds:?}"), false))?;
            }
            Call::Freeze(ms) => {
                // Stops the whole server (nothing is read or answered meanwhile), as a hung
                // process would.
                std::thread::sleep(std::time::Duration::from_millis(ms));
                write_result(out, &id, &text_result(format!("froze {ms} ms"), false))?;
            }
            Call::Touch(times) => {
                let text = self.touch(out, times)?;
                write_result(out, &id, &text_result(text, false))?;
            }
            Call::Notify => {
                self.notify(out)?;
                write_result(out, &id, &text_result("notified", false))?;
            }
            Call::AskRoots => self.ask_roots(id),
        }
        Ok(None)
    }

    /// `touch`: `notifications/resources/updated` for each subscribed resource, `times`
    /// times (2026-07-28: the URIs the listen streams asked for, on those streams).
    fn touch(&mut self, out: &mut impl Write, times: u64) -> io::Result<String> {
        let modern = self.session.latest_version().is_some_and(|v| v.is_modern());
        let uris: Vec<String> = if modern {
            self.session.listened_uris()
        } else {
            self.subscribed.iter().cloned().collect()
        };
        for _ in 0..times {
            for uri in &uris {
                let params = json!({"uri": uri});
                self.session.notify("notifications/resources/updated", Some(params));
            }
            self.flush(out)?;
        }
        Ok(format!("touched {} resources {times} times", uris.len()))
    }

    /// `notify`: `tools/list_changed` and a log message (2026-07-28 with a listen stream open:
    /// only what the stream asked for, on it).
    fn notify(&mut self, out: &mut impl Write) -> io::Result<()> {
        if self.session.listening() {
            self.session.notify("notifications/tools/list_changed", None);
            return self.flush(out);
        }
        write_notification(out, "notifications/tools/list_changed", None)?;
        let params = json!({"level": "info", "data": "hello"});
        write_notification(out, "notifications/message", Some(params))
    }
}

/// `children`: starts up to `n` `sleep 2` children at once; reports how many started.
fn children(n: u64) -> String {
    let mut kids = Vec::new();
    for _ in 0..n {
        match std::process::Command::new("sleep").arg("2").spawn() {
            Ok(child) => kids.push(child),
            Err(_) => break,
        }
    }
    let started = kids.len();
    for mut kid in kids {
        let _ = kid.kill();
        let _ = kid.wait();
    }
    format!("started {started} of {n}")
}

/// `tools/call` params.
#[derive(Deserialize)]
struct CallParams {
    name: String,
    #[serde(default)]
    arguments: Map<String, Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EchoArgs {
    text: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BytesArgs {
    bytes: u64,
}

/// `blob`'s arguments: `as_link` answers like `export` (by reference) instead of inline.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BlobArgs {
    bytes: u64,
    #[serde(default)]
    as_link: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SlowArgs {
    ms: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StallArgs {
    bytes: u64,
    ms: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AddArgs {
    a: Number,
    b: Number,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExitArgs {
    code: i32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TimesArgs {
    times: u64,
}

/// The fds beyond 0-2 that were open when the server started (the `fds` fault tool's answer),
/// recorded by [`record_fds_at_start`].
static FDS_AT_START: std::sync::OnceLock<Vec<i32>> = std::sync::OnceLock::new();

/// Records the fds beyond 0-2 open now; call it first thing, before the server opens any.
pub(crate) fn record_fds_at_start() {
    let _ = FDS_AT_START.set(ringmcp::sandbox::open_fds_beyond_stdio());
}

/// Checks the tool name and its arguments against the tool's input schema.
fn validate(name: &str, args: Map<String, Value>, fault_tools: bool) -> Result<Call, ErrorObject> {
    let args = Value::Object(args);
    Ok(match name {
        "echo" => Call::Echo(arguments::<EchoArgs>(name, args)?.text),
        "blob" => match arguments::<BlobArgs>(name, args)? {
            BlobArgs { bytes, as_link: false } => Call::Blob(bytes),
            BlobArgs { bytes, as_link: true } => Call::Export(bytes),
        },
        "export" => Call::Export(arguments::<BytesArgs>(name, args)?.bytes),
        "slow" => Call::Slow(arguments::<SlowArgs>(name, args)?.ms),
        "fail" => arguments::<NoArgs>(name, args).map(|_| Call::Fail)?,
        "add" => arguments::<AddArgs>(name, args).map(|a| Call::Add(a.a, a.b))?,
        "exit" if fault_tools => Call::Exit(arguments::<ExitArgs>(name, args)?.code),
        "noise" if fault_tools => arguments::<NoArgs>(name, args).map(|_| Call::Noise)?,
        "hang" if fault_tools => arguments::<NoArgs>(name, args).map(|_| Call::Hang)?,
        "stderr" if fault_tools => Call::Stderr(arguments::<BytesArgs>(name, args)?.bytes),
        "notify" if fault_tools => arguments::<NoArgs>(name, args).map(|_| Call::Notify)?,
        "ask_roots" if fault_tools => arguments::<NoArgs>(name, args).map(|_| Call::AskRoots)?,
        "touch" if fault_tools => Call::Touch(arguments::<TimesArgs>(name, args)?.times),
        "children" if fault_tools => Call::Children(arguments::<TimesArgs>(name, args)?.times),
        "freeze" if fault_tools => Call::Freeze(arguments::<SlowArgs>(name, args)?.ms),
        "fds" if fault_tools => arguments::<NoArgs>(name, args).map(|_| Call::Fds)?,
        "cancelled" if fault_tools => arguments::<NoArgs>(name, args).map(|_| Call::Cancelled)?,
        "calls" if fault_tools => arguments::<NoArgs>(name, args).map(|_| Call::Calls)?,
        "stall_blob" if fault_tools => {
            let a = arguments::<StallArgs>(name, args)?;
            Call::StallBlob(a.bytes, a.ms)
        }
        _ => return Err(ErrorObject::new(codes::INVALID_PARAMS, format!("Unknown tool: {name}"))),
    })
}

fn arguments<T: DeserializeOwned>(tool: &str, args: Value) -> Result<T, ErrorObject> {
    serde_json::from_value(args).map_err(|e| {
        ErrorObject::new(codes::INVALID_PARAMS, format!("Invalid arguments for tool {tool}: {e}"))
    })
}

/// The `add` result: integers add exactly while they fit in an i64, anything else as f64.
fn add(a: &Number, b: &Number) -> ToolResult<'static> {
    let exact = a.as_i64().zip(b.as_i64()).and_then(|(a, b)| a.checked_add(b)).map(Number::from);
    let sum = exact.or_else(|| {
        let (a, b) = (a.as_f64().unwrap_or(f64::NAN), b.as_f64().unwrap_or(f64::NAN));
        Number::from_f64(a + b)
    });
    match sum {
        Some(sum) => {
            let mut result = text_result(sum.to_string(), false);
            result.structured_content = Some(json!({"sum": sum}));
            result
        }
        None => text_result("The sum is not a finite number.", true),
    }
}

/// Writes exactly `len` bytes to `err`: lines of 99 `e`s and a `\n`, the last one shorter.
fn write_stderr(err: &mut impl Write, len: u64) -> io::Result<()> {
    const LINE: usize = 100;
    const BLOCK: usize = LINE * 655;
    let block: Vec<u8> =
        (0..BLOCK).map(|i| if i % LINE == LINE - 1 { b'\n' } else { b'e' }).collect();
    let mut left = len;
    while left > 0 {
        let n = usize::try_from(left).map_or(BLOCK, |l| l.min(BLOCK));
        if n == BLOCK {
            err.write_all(&block)?;
        } else {
            // End the last piece with a newline so the output is whole lines.
            err.write_all(&block[..n - 1])?;
            err.write_all(b"\n")?;
        }
        left -= n as u64;
    }
    err.flush()
}
