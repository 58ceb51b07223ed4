//! The upstream connection over stdio: the client that launched the gateway.
//!
//! Three threads: one reads stdin and frames it, one writes stdout (flushing when it has no
//! more lines queued, so that a burst of answers is one write), and the gateway's own, which
//! runs the session's [`Loop`](super::Loop). stdout carries protocol bytes only; logs go to
//! stderr.

use std::io::{BufWriter, Read, Write};

use bytes::Bytes;
use tokio::sync::mpsc;

use crate::frame::{FrameEvent, LineFramer};
use crate::jsonrpc::Id;

use super::super::{Gateway, GatewayError};
use super::{Inbox, Input, MAX_FRAME, Router, run};

/// Bytes asked for per read of stdin.
const READ_CHUNK: usize = 256 << 10;

/// Serves the gateway on this process's stdin and stdout until stdin ends.
///
/// # Errors
/// [`GatewayError::Io`] when the runtime cannot be started or stdio fails.
pub fn serve_stdio(gateway: Gateway, inbox: Inbox) -> Result<(), GatewayError> {
    serve(gateway, inbox, std::io::stdin(), std::io::stdout())
}

/// [`serve_stdio`] over any reader and writer.
///
/// # Errors
/// As [`serve_stdio`].
pub fn serve<R, W>(gateway: Gateway, inbox: Inbox, input: R, output: W) -> Result<(), GatewayError>
where
    R: Read + Send + 'static,
    W: Write + Send + 'static,
{
    let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build()?;
    let (frames_tx, frames) = mpsc::channel(256);
    std::thread::Builder::new()
        .name("gateway-stdin".into())
        .spawn(move || read(input, frames_tx))?;
    let (lines_tx, lines) = std::sync::mpsc::channel::<Bytes>();
    let writer = std::thread::Builder::new()
        .name("gateway-stdout".into())
        .spawn(move || write(output, lines))?;
    let core = gateway.core;
    runtime.block_on(async {
        core.start();
        run(core, inbox.0, frames, Router::Stdio(lines_tx)).await;
    });
    // The runtime's tasks are dropped with it; the backends stop when the host does.
    drop(runtime);
    let _ = writer.join();
    Ok(())
}

fn read<R: Read>(mut input: R, frames: mpsc::Sender<Input>) {
    let mut framer = LineFramer::new(MAX_FRAME);
    let mut chunk = vec![0; READ_CHUNK];
    loop {
        let n = match input.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                tracing::warn!("reading stdin: {e}");
                break;
            }
        };
        framer.push(&chunk[..n]);
        while let Some(event) = framer.next_event() {
            let input = match event {
                FrameEvent::Frame(f) => Input::Frame(f),
                FrameEvent::Oversized(o) => {
                    Input::Oversized(o.id.as_deref().and_then(Id::from_token), o.len)
                }
                _ => continue,
            };
            if frames.blocking_send(input).is_err() {
                return;
            }
        }
    }
}

fn write<W: Write>(output: W, lines: std::sync::mpsc::Receiver<Bytes>) {
    let mut out = BufWriter::with_capacity(256 << 10, output);
    while let Ok(line) = lines.recv() {
        let mut ok = out.write_all(&line).is_ok();
        while ok && let Ok(more) = lines.try_recv() {
            ok = out.write_all(&more).is_ok();
        }
        if !ok || out.flush().is_err() {
            tracing::warn!("the upstream client stopped reading stdout");
            return;
        }
    }
}
