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
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use nix::fcntl::{FcntlArg, OFlag, fcntl};

use bytes::Bytes;
use tokio::sync::mpsc;

use crate::frame::{FrameEvent, LineFramer};
use crate::jsonrpc::Id;

use super::super::{Gateway, GatewayError};
use super::{Inbox, Input, MAX_FRAME, Router, Source, run};

/// Bytes asked for per read of stdin.
const READ_CHUNK: usize = 256 << 10;

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
    let core = gateway.core;
    runtime.block_on(async {
        let source = match StdinSource::new(input) {
            Ok(s) => Source::Stdin(Box::new(s)),
            Err(e) => return Err(GatewayError::Io(e)),
        };
        core.start();
        run(core, inbox.0, source, Router::Direct(StdoutSink::new(output)?)).await;
        Ok(())
    })?;
    // Not waited for: an indexing still running on the blocking pool (tool search).
    runtime.shutdown_background();
    Ok(())
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
        FrameEvent::Frame(f) => Some(Input::Frame(f)),
        FrameEvent::Oversized(o) => {
            Some(Input::Oversized(o.id.as_deref().and_then(Id::from_token), o.len))
        }
        _ => None,
    }
}

/// stdout, written on the session's thread; what a full pipe does not take goes, in order, to
/// a writer thread that waits for the pipe to drain.
pub(crate) struct StdoutSink {
    fd: Arc<OwnedFd>,
    /// Lines handed to the writer thread and not yet written.
    behind: Arc<AtomicUsize>,
    tx: std::sync::mpsc::Sender<Bytes>,
}

impl StdoutSink {
    fn new(fd: OwnedFd) -> std::io::Result<Self> {
        let fd = Arc::new(fd);
        let behind = Arc::new(AtomicUsize::new(0));
        let (tx, rx) = std::sync::mpsc::channel::<Bytes>();
        let (wfd, wbehind) = (fd.clone(), behind.clone());
        std::thread::Builder::new().name("gateway-stdout".into()).spawn(move || {
            while let Ok(rest) = rx.recv() {
                if let Err(e) = write_all_waiting(&wfd, &rest) {
                    tracing::warn!("the upstream client stopped reading stdout: {e}");
                    return;
                }
                wbehind.fetch_sub(1, Ordering::AcqRel);
            }
        })?;
        Ok(StdoutSink { fd, behind, tx })
    }

    /// Writes one line; `false` when stdout is gone.
    pub(crate) fn line(&mut self, line: Bytes) -> bool {
        let mut written = 0;
        if self.behind.load(Ordering::Acquire) == 0 {
            while written < line.len() {
                match nix::unistd::write(&*self.fd, &line[written..]) {
                    Ok(n) => written += n,
                    Err(nix::errno::Errno::EINTR) => {}
                    Err(nix::errno::Errno::EAGAIN) => break,
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
        self.behind.fetch_add(1, Ordering::AcqRel);
        self.tx.send(line.slice(written..)).is_ok()
    }
}

/// Writes `bytes` to the non-blocking `fd`, waiting with poll(2) while the pipe is full.
fn write_all_waiting(fd: &OwnedFd, mut bytes: &[u8]) -> std::io::Result<()> {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    while !bytes.is_empty() {
        match nix::unistd::write(fd, bytes) {
            Ok(n) => bytes = &bytes[n..],
            Err(nix::errno::Errno::EINTR) => {}
            Err(nix::errno::Errno::EAGAIN) => {
                let mut fds = [PollFd::new(fd.as_fd(), PollFlags::POLLOUT)];
                match poll(&mut fds, PollTimeout::NONE) {
                    Ok(_) | Err(nix::errno::Errno::EINTR) => {}
                    Err(e) => return Err(e.into()),
                }
            }
            Err(e) => return Err(e.into()),
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
        run(core, inbox.0, Source::Channel(frames), Router::Stdio(lines_tx)).await;
    });
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
            let Some(input) = framed(event) else { continue };
            if frames.blocking_send(input).is_err() {
                return;
            }
        }
    }
}

fn write<W: Write>(output: W, lines: std::sync::mpsc::Receiver<Bytes>) {
    let mut out = BufWriter::with_capacity(256 << 10, output);
    while let Ok(line) = lines.recv() {
        let mut written = out.write_all(&line);
        while written.is_ok()
            && let Ok(more) = lines.try_recv()
        {
            written = out.write_all(&more);
        }
        if let Err(e) = written.and_then(|()| out.flush()) {
            tracing::warn!("the upstream client stopped reading stdout: {e}");
            return;
        }
    }
}
