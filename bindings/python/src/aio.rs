//! Rust futures as asyncio futures, without a Python call from any other thread.
//!
//! [`spawn`] runs the engine's future on the module's tokio runtime and returns an
//! `asyncio.Future` of the running loop. When the Rust future is ready, its outcome is queued
//! on the loop's [`Bridge`] and the loop is woken through a socket it reads
//! (`loop.add_reader`); the loop's thread then turns the outcome into Python objects and sets
//! the future's result. So no thread but the loop's ever takes the GIL for an answer: nothing
//! can touch Python while the interpreter finalizes (a completion that took the GIL on a
//! worker thread during exit crashed the process), completions that arrive together are set in
//! one wake-up, and no thread hop is spent per answer.
//!
//! Cancelling the asyncio future (its task was cancelled) aborts the tokio task, which drops
//! the engine's future: the request is cancelled on the server.

use std::future::Future;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use crossbeam_queue::SegQueue;
use pyo3::prelude::*;

/// An outcome on its way to the loop: turned into a Python object there.
type Outcome = Box<dyn FnOnce(Python<'_>) -> PyResult<Py<PyAny>> + Send>;

/// The attribute of an event loop that holds its bridge.
const ATTR: &str = "_ringmcp_bridge";

/// The runtime that polls the engine's futures (its own threads; they never take the GIL).
fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("ringmcp-aio")
            .enable_time()
            .build()
            .expect("the tokio runtime of ringmcp's asyncio bridge could not start")
    })
}

/// One event loop's bridge: its reader callback (a Python object) over the shared state.
#[pyclass(module = "ringmcp._native", frozen)]
pub(crate) struct Bridge {
    /// Boxed behind an `Arc`: the queue is cache-line aligned, which a Python object's memory
    /// is not, and the tasks share it.
    shared: Arc<Shared>,
}

/// One event loop's queue of finished futures and the socket that wakes it.
struct Shared {
    done: SegQueue<(Py<PyAny>, Outcome)>,
    /// Whether a wake-up byte is on its way, so a burst of completions writes one. Set by a
    /// producer after its push (SeqCst), cleared by the loop before it pops (SeqCst): a push
    /// the loop's pops miss found the flag clear and wrote its byte.
    signalled: AtomicBool,
    tx: UnixStream,
    rx: UnixStream,
}

impl Shared {
    fn push(&self, fut: Py<PyAny>, outcome: Outcome) {
        self.done.push((fut, outcome));
        if !self.signalled.swap(true, Ordering::SeqCst) {
            // Non-blocking: a full socket already holds a wake-up.
            let _ = (&self.tx).write(&[1]);
        }
    }
}

#[pymethods]
impl Bridge {
    /// The loop's reader callback: sets the results of every finished future.
    fn __call__(&self, py: Python<'_>) -> PyResult<()> {
        let this = &*self.shared;
        let mut buf = [0u8; 64];
        loop {
            match (&this.rx).read(&mut buf) {
                Ok(n) if n == buf.len() => continue,
                Ok(_) => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
        }
        this.signalled.store(false, Ordering::SeqCst);
        while let Some((fut, outcome)) = this.done.pop() {
            let fut = fut.bind(py);
            // Cancelled meanwhile: its task has moved on.
            if fut.call_method0(pyo3::intern!(py, "done"))?.is_truthy()? {
                continue;
            }
            match outcome(py) {
                Ok(value) => fut.call_method1(pyo3::intern!(py, "set_result"), (value,))?,
                Err(e) => {
                    fut.call_method1(pyo3::intern!(py, "set_exception"), (e.into_value(py),))?
                }
            };
        }
        Ok(())
    }
}

/// The bridge of `lp`, made (and its reader added) on first use.
fn bridge(py: Python<'_>, lp: &Bound<'_, PyAny>) -> PyResult<Arc<Shared>> {
    if let Ok(b) = lp.getattr(ATTR)
        && let Ok(b) = b.cast_into::<Bridge>()
    {
        return Ok(b.get().shared.clone());
    }
    let (tx, rx) = UnixStream::pair()?;
    tx.set_nonblocking(true)?;
    rx.set_nonblocking(true)?;
    let fd = rx.as_raw_fd();
    let shared =
        Arc::new(Shared { done: SegQueue::new(), signalled: AtomicBool::new(false), tx, rx });
    let b = Py::new(py, Bridge { shared: shared.clone() })?;
    lp.call_method1("add_reader", (fd, b.clone_ref(py)))?;
    lp.setattr(ATTR, b)?;
    Ok(shared)
}

/// Aborts the tokio task of a future whose asyncio future was cancelled.
#[pyclass(module = "ringmcp._native", frozen)]
struct Abort(tokio::task::AbortHandle);

#[pymethods]
impl Abort {
    fn __call__(&self, fut: &Bound<'_, PyAny>) -> PyResult<()> {
        if fut.call_method0("cancelled")?.is_truthy()? {
            self.0.abort();
        }
        Ok(())
    }
}

/// Runs `fut` and returns an `asyncio.Future` (of the running loop) of its outcome.
///
/// # Errors
/// `RuntimeError` when no event loop runs on this thread.
pub(crate) fn spawn<'py, F, T>(py: Python<'py>, fut: F) -> PyResult<Bound<'py, PyAny>>
where
    F: Future<Output = PyResult<T>> + Send + 'static,
    T: for<'a> IntoPyObject<'a> + Send + 'static,
{
    let lp = py.import("asyncio")?.call_method0("get_running_loop")?;
    let bridge = bridge(py, &lp)?;
    let pyfut = lp.call_method0("create_future")?;
    let handle = pyfut.clone().unbind();
    let task = runtime().spawn(async move {
        let out = fut.await;
        let outcome: Outcome = Box::new(move |py| {
            use pyo3::IntoPyObjectExt;
            out.and_then(|v| v.into_py_any(py))
        });
        bridge.push(handle, outcome);
    });
    pyfut.call_method1("add_done_callback", (Abort(task.abort_handle()),))?;
    Ok(pyfut)
}
