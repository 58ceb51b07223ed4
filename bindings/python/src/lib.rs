//! `ringmcp._native`: the Python package's extension module, a thin layer over the engine's
//! host API (docs/python.md). Async methods return asyncio futures ([`aio`]: cancelling the
//! awaiting task drops the engine's future, which cancels the request on the server); blocking ones wait with the GIL released ([`wait`]).

mod aio;
mod callbacks;
mod client;
mod errors;
mod events;
mod host;
mod json;
mod spec;
mod spill;
mod wait;

use pyo3::prelude::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(host::close_all, m)?)?;
    m.add_class::<host::Host>()?;
    m.add_class::<host::Router>()?;
    m.add_class::<spec::ServerSpec>()?;
    m.add_class::<spec::Config>()?;
    m.add_class::<client::Client>()?;
    m.add_class::<client::ToolCall>()?;
    m.add_class::<events::EventStream>()?;
    m.add_class::<spill::SpillFile>()?;
    Ok(())
}
