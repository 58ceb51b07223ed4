//! Blocking waits: a future run to completion on the calling thread with the GIL released, so
//! other Python threads run meanwhile, and Python's signal handlers run every 100 ms, so Ctrl-C
//! ends the wait (`KeyboardInterrupt`). The future is dropped then, which cancels its request
//! on the server.

use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::Thread;
use std::time::{Duration, Instant};

use pyo3::prelude::*;

/// How long a blocking wait goes without looking at Python's signals.
const SIGNAL_CHECK: Duration = Duration::from_millis(100);

/// Wakes the thread that waits.
struct Unpark(Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// Runs `fut` on this thread until it is ready, the GIL released.
///
/// # Errors
/// The exception a signal handler raised (the future is dropped).
pub(crate) fn wait<F>(py: Python<'_>, fut: F) -> PyResult<F::Output>
where
    F: Future + Send,
    F::Output: Send,
{
    let mut fut = std::pin::pin!(fut);
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    loop {
        let ready = py.detach(|| {
            let mut cx = Context::from_waker(&waker);
            let deadline = Instant::now() + SIGNAL_CHECK;
            loop {
                if let Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
                    return Some(out);
                }
                let now = Instant::now();
                if now >= deadline {
                    return None;
                }
                std::thread::park_timeout(deadline - now);
            }
        });
        match ready {
            Some(out) => return Ok(out),
            None => py.check_signals()?,
        }
    }
}

/// The awaitable of an async method, or its result at once for a blocking one.
pub(crate) fn run<'py, F, T>(py: Python<'py>, blocking: bool, fut: F) -> PyResult<Bound<'py, PyAny>>
where
    F: Future<Output = PyResult<T>> + Send + 'static,
    T: for<'a> IntoPyObject<'a> + Send + 'static,
{
    use pyo3::IntoPyObjectExt;
    if blocking { wait(py, fut)??.into_bound_py_any(py) } else { crate::aio::spawn(py, fut) }
}
