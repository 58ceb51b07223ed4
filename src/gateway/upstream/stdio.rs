//! The upstream connection over stdio: the client that launched the gateway.
//!
//! When stdin and stdout are pipes or sockets (as MCP clients launch servers), the session's
//! thread reads stdin itself (non-blocking, woken by the runtime) and writes each answer
//! straight to stdout; only when the client is slow to read and the pipe is full does a writer
//! thread take over what is left, in order, until it has caught up. Every answer thus costs
//! no thread hand-over (PERFORMANCE.md, "Gateway"). Anything else (a terminal, a file, the
//! readers and writers of [`serve`]) is served with a reader and a writer thread. stdout
//! carries protocol bytes only; logs go to stderr.

use std::collections::VecDeque;
use std::io::{BufWriter, Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::{Arc, Condvar, Mutex, PoisonError};

use nix::fcntl::{FcntlArg, OFlag, fcntl};

use bytes::Bytes;
use tokio::sync::mpsc;

use crate::frame::{FrameEvent, LineFramer};
use crate::jsonrpc::Id;
use crate::syscall::retry;

use super::super::{Gateway, GatewayError};
use super::{Inbox, Input, MAX_FRAME, Router, Source, run};

/// Bytes asked for per read of stdin.
const READ_CHUNK: usize = 256 << 10;

/// Lines handed to a stdout writer thread and not yet written, at most.
const BEHIND_LINES: usize = 4096;
/// Bytes handed to a stdout writer thread and not yet written, at most (one longer line still
/// goes when nothing else waits).
const BEHIND_BYTES: usize = 64 << 20;

/// The session's hand-over of lines to a stdout writer thread: bounded in lines and bytes.
/// Past the bound the session's thread waits for the writer. That is the back-pressure a
/// stdio gateway wants: its client is its only client, nothing it asked for can reach it
/// before what it has not read yet, and the backends' own bounded queues push back in turn
/// (docs/gateway.md, "Buffers").
pub(crate) struct Handover {
    tx: std::sync::mpsc::SyncSender<Bytes>,
    backlog: Arc<Backlog>,
}

/// The bytes a writer has yet to write, and whether it is gone.
#[derive(Default)]
struct Backlog {
    state: Mutex<(usize, bool)>,
    drained: Condvar,
}

impl Backlog {
    /// Waits until `len` more bytes fit; `false` when the writer is gone.
    fn reserve(&self, len: usize) -> bool {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        while !state.1 && state.0 > 0 && state.0 + len > BEHIND_BYTES {
            state = self.drained.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
        state.0 += len;
        !state.1
    }

    fn release(&self, len: usize) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.0 -= len;
        self.drained.notify_all();
    }

    fn close(&self) {
        self.state.lock().unwrap_or_else(PoisonError::into_inner).1 = true;
        self.drained.notify_all();
    }

    fn idle(&self) -> bool {
        self.state.lock().unwrap_or_else(PoisonError::into_inner).0 == 0
    }
}

impl Handover {
    /// Starts the writer thread: `write` gets each line in order (and may take what else is
    /// waiting from the iterator it is given); an `Err` ends it.
    fn start(
        write: impl FnMut(Bytes, &mut dyn Iterator<Item = Bytes>) -> std::io::Result<()>
        + Send
        + 'static,
    ) -> std::io::Result<(Handover, std::thread::JoinHandle<()>)> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Bytes>(BEHIND_LINES);
        let backlog = Arc::new(Backlog::default());
        let done = backlog.clone();
        let mut write = write;
        let writer =
            std::thread::Builder::new().name("gateway-stdout".into()).spawn(move || {
                while let Ok(line) = rx.recv() {
                    let mut taken = line.len();
                    let mut more = std::iter::from_fn(|| {
                        let next = rx.try_recv().ok()?;
                        taken += next.len();
                        Some(next)
                    });
                    let written = write(line, &mut more);
                    done.release(taken);
                    if let Err(e) = written {
                        tracing::warn!("the upstream client stopped reading stdout: {e}");
                        break;
                    }
                }
                done.close();
            })?;
        Ok((Handover { tx, backlog }, writer))
    }

    /// Hands a line over, waiting while the writer is too far behind; `false` when it is gone.
    pub(crate) fn send(&self, line: Bytes) -> bool {
        self.backlog.reserve(line.len()) && self.tx.send(line).is_ok()
    }
}

/// Serves the gateway on this process's stdin and stdout until stdin ends.
///
/// # Errors
/// [`GatewayError::Io`] when the runtime cannot be started or stdio fails.
pub fn serve_stdio(gateway: Gateway, inbox: Inbox) -> Result<(), GatewayError> {
    let (stdin, stdout) = (std::io::stdin(), std::io::stdout());
    if !(streamable(stdin.as_fd())? && streamable(stdout.as_fd())?) {
        return serve(gateway, inbox, stdin, stdout);
    }
    let (input, output) = (nonblocking(stdin.as_fd())?, nonblocking(stdout.as_fd())?);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let Gateway { core, reactor } = gateway;
    runtime.block_on(beside(reactor, async {
        let source = match StdinSource::new(input) {
            Ok(s) => Source::Stdin(Box::new(s)),
            Err(e) => return Err(GatewayError::Io(e)),
        };
        run(core, inbox.0, source, Router::Direct(StdoutSink::new(output)?)).await;
        Ok(())
    }))?;
    // Not waited for: an indexing still running on the blocking pool (tool search).
    runtime.shutdown_background();
    Ok(())
}

/// Runs `session` with the host's `reactor` (when it runs on this thread) beside it. The
/// session's end stops the host (`Core::shutdown`); the reactor then stops every backend and
/// ends, and only then does this.
async fn beside<T>(reactor: Option<crate::host::Reactor>, session: impl Future<Output = T>) -> T {
    let reactor = async {
        if let Some(reactor) = reactor {
            reactor.run().await;
        }
    };
    tokio::join!(session, reactor).0
}

/// Whether `fd` is a pipe or a socket, whose non-blocking flag no terminal or shell shares
/// (MCP clients launch servers with one or the other: Node's child processes get sockets).
fn streamable(fd: BorrowedFd<'_>) -> std::io::Result<bool> {
    use nix::sys::stat::{SFlag, fstat};
    let kind = fstat(fd).map_err(std::io::Error::from)?.st_mode & SFlag::S_IFMT.bits();
    Ok(kind == SFlag::S_IFIFO.bits() || kind == SFlag::S_IFSOCK.bits())
}

/// A non-blocking duplicate of `fd`.
fn nonblocking(fd: BorrowedFd<'_>) -> std::io::Result<OwnedFd> {
    let owned = fd.try_clone_to_owned()?;
    let flags = fcntl(&owned, FcntlArg::F_GETFL).map_err(std::io::Error::from)?;
    let flags = OFlag::from_bits_truncate(flags) | OFlag::O_NONBLOCK;
    fcntl(&owned, FcntlArg::F_SETFL(flags)).map_err(std::io::Error::from)?;
    Ok(owned)
}

/// stdin as the runtime watches it.
enum Stdin {
    Pipe(tokio::net::unix::pipe::Receiver),
    Socket(tokio::net::UnixStream),
}

impl Stdin {
    fn new(fd: OwnedFd) -> std::io::Result<Stdin> {
        use nix::sys::stat::{SFlag, fstat};
        let kind = fstat(&fd).map_err(std::io::Error::from)?.st_mode & SFlag::S_IFMT.bits();
        if kind == SFlag::S_IFSOCK.bits() {
            let std = std::os::unix::net::UnixStream::from(fd);
            return Ok(Stdin::Socket(tokio::net::UnixStream::from_std(std)?));
        }
        Ok(Stdin::Pipe(tokio::net::unix::pipe::Receiver::from_owned_fd(fd)?))
    }

    async fn readable(&self) -> std::io::Result<()> {
        match self {
            Stdin::Pipe(p) => p.readable().await,
            Stdin::Socket(s) => s.readable().await,
        }
    }

    fn try_read(&self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stdin::Pipe(p) => p.try_read(buf),
            Stdin::Socket(s) => s.try_read(buf),
        }
    }
}

/// stdin, read on the session's thread when the runtime says it is readable.
pub(crate) struct StdinSource {
    pipe: Stdin,
    framer: LineFramer,
    chunk: Vec<u8>,
    ready: VecDeque<Input>,
    eof: bool,
}

impl StdinSource {
    fn new(fd: OwnedFd) -> std::io::Result<Self> {
        Ok(StdinSource {
            pipe: Stdin::new(fd)?,
            framer: LineFramer::new(MAX_FRAME),
            chunk: vec![0; READ_CHUNK],
            ready: VecDeque::new(),
            eof: false,
        })
    }

    /// The next message; `None` at the end of stdin. Cancel-safe: bytes are read and framed
    /// without an await in between.
    pub(crate) async fn next(&mut self) -> Option<Input> {
        loop {
            if let Some(input) = self.ready.pop_front() {
                return Some(input);
            }
            if self.eof {
                if let Some(len) = self.framer.finish() {
                    tracing::warn!("ignored an unterminated last line of {len} bytes on stdin");
                }
                return None;
            }
            if let Err(e) = self.pipe.readable().await {
                tracing::warn!("waiting for stdin: {e}");
                self.eof = true;
                continue;
            }
            match self.pipe.try_read(&mut self.chunk) {
                Ok(0) => self.eof = true,
                Ok(n) => {
                    self.framer.push(&self.chunk[..n]);
                    while let Some(event) = self.framer.next_event() {
                        if let Some(input) = framed(event) {
                            self.ready.push_back(input);
                        }
                    }
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted
                    ) => {}
                Err(e) => {
                    tracing::warn!("reading stdin: {e}");
                    self.eof = true;
                }
            }
        }
    }
}

fn framed(event: FrameEvent) -> Option<Input> {
    match event {
        FrameEvent::Frame(f) => Some(Input::Frame(f, None)),
        FrameEvent::Oversized(o) => {
            Some(Input::Oversized(o.id.as_deref().and_then(Id::from_token), o.len))
        }
        _ => None,
    }
}

/// stdout, written on the session's thread; what a full pipe does not take goes, in order, to
/// a writer thread that waits for the pipe to drain (a bounded [`Handover`]).
pub(crate) struct StdoutSink {
    fd: Arc<OwnedFd>,
    /// What the writer thread has yet to write.
    behind: Handover,
}

impl StdoutSink {
    fn new(fd: OwnedFd) -> std::io::Result<Self> {
        let fd = Arc::new(fd);
        let wfd = fd.clone();
        let (behind, _writer) = Handover::start(move |rest, _| write_all_waiting(&wfd, &rest))?;
        Ok(StdoutSink { fd, behind })
    }

    /// Writes one line; `false` when stdout is gone.
    pub(crate) fn line(&mut self, line: Bytes) -> bool {
        let mut written = 0;
        if self.behind.backlog.idle() {
            while written < line.len() {
                match retry(|| Ok(nix::unistd::write(&*self.fd, &line[written..])?)) {
                    Ok(n) => written += n,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(e) => {
                        tracing::warn!("writing stdout: {e}");
                        return false;
                    }
                }
            }
            if written == line.len() {
                return true;
            }
        }
        self.behind.send(line.slice(written..))
    }
}

/// Writes `bytes` to the non-blocking `fd`, waiting with poll(2) while the pipe is full.
fn write_all_waiting(fd: &OwnedFd, mut bytes: &[u8]) -> std::io::Result<()> {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    while !bytes.is_empty() {
        match retry(|| Ok(nix::unistd::write(fd, bytes)?)) {
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                let mut fds = [PollFd::new(fd.as_fd(), PollFlags::POLLOUT)];
                retry(|| Ok(poll(&mut fds, PollTimeout::NONE)?))?;
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
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
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let (frames_tx, frames) = mpsc::channel(256);
    std::thread::Builder::new()
        .name("gateway-stdin".into())
        .spawn(move || read(input, frames_tx))?;
    let mut out = BufWriter::with_capacity(256 << 10, output);
    let (lines, writer) = Handover::start(move |line, more| {
        out.write_all(&line)?;
        for line in more {
            out.write_all(&line)?;
        }
        out.flush()
    })?;
    let Gateway { core, reactor } = gateway;
    runtime.block_on(beside(reactor, async {
        run(core, inbox.0, Source::Channel(frames), Router::Stdio(lines)).await;
    }));
    // The runtime's tasks are dropped with it, an indexing still running on the blocking pool
    // (tool search) is not waited for; the backends stop when the host does.
    runtime.shutdown_background();
    let _ = writer.join();
    Ok(())
}

fn read<R: Read>(mut input: R, frames: mpsc::Sender<Input>) {
    let mut framer = LineFramer::new(MAX_FRAME);
    let mut chunk = vec![0; READ_CHUNK];
    loop {
        let n = match retry(|| input.read(&mut chunk)) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) => {
                tracing::warn!("reading stdin: {e}");
                break;
            }
        };
        framer.push(&chunk[..n]);
        while let Some(event) = framer.next_event() {
            let Some(input) = framed(event) else { continue };
            if frames.blocking_send(input).is_err() {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    #[test]
    fn a_writer_too_far_behind_holds_the_session_back_and_a_gone_one_ends_it() {
        let backlog = Arc::new(Backlog::default());
        assert!(backlog.reserve(BEHIND_BYTES + 5), "an idle writer takes any one line");
        let passed = Arc::new(AtomicBool::new(false));
        let (b, p) = (backlog.clone(), passed.clone());
        let waiter = std::thread::spawn(move || {
            let ok = b.reserve(1);
            p.store(true, Ordering::SeqCst);
            ok
        });
        std::thread::sleep(Duration::from_millis(50));
        assert!(!passed.load(Ordering::SeqCst), "held back while the writer is behind");
        backlog.release(BEHIND_BYTES + 5);
        assert!(waiter.join().unwrap(), "let through once the writer caught up");
        backlog.close();
        assert!(!backlog.reserve(1), "the writer is gone");
    }

    #[test]
    fn handed_over_lines_are_written_in_order() {
        let written = Arc::new(Mutex::new(Vec::new()));
        let w = written.clone();
        let (handover, writer) = Handover::start(move |line, more| {
            let mut w = w.lock().unwrap();
            w.push(line);
            w.extend(more);
            Ok(())
        })
        .unwrap();
        for i in 0..100u8 {
            assert!(handover.send(Bytes::from(vec![i; 1000])));
        }
        drop(handover);
        writer.join().unwrap();
        let written = written.lock().unwrap();
        assert_eq!(written.len(), 100);
        assert!(written.iter().enumerate().all(|(i, l)| l[0] == i as u8));
    }
}
