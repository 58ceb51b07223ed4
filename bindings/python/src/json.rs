//! JSON values between Rust and Python: [`Json`] and [`Ser`] become Python objects (dicts, lists,
//! ...) when a result is handed over; [`value`] reads a Python object (or a pydantic model) as
//! JSON.

use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde::Serialize;
use serde_json::Value;

/// A JSON value on its way to Python (converted with the GIL held, where the result is set).
#[derive(Debug)]
pub(crate) struct Json(pub(crate) Value);

impl<'py> IntoPyObject<'py> for Json {
    type Target = PyAny;
    type Output = Bound<'py, PyAny>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(pythonize::pythonize(py, &self.0)?)
    }
}

/// A typed result on its way to Python, serialised straight into Python objects (no
/// intermediate JSON value).
#[derive(Debug)]
pub(crate) struct Ser<T>(pub(crate) T);

impl<'py, T: Serialize> IntoPyObject<'py> for Ser<T> {
    type Target = PyAny;
    type Output = Bound<'py, PyAny>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(pythonize::pythonize(py, &self.0)?)
    }
}

/// `None` on its way to Python.
#[derive(Debug)]
pub(crate) struct Unit;

impl<'py> IntoPyObject<'py> for Unit {
    type Target = PyAny;
    type Output = Bound<'py, PyAny>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(py.None().into_bound(py))
    }
}

/// A Python object as JSON: dicts, lists, strings, numbers, booleans, `None`; a pydantic model
/// (the official SDK's types) is dumped first, in its wire form (aliases, JSON mode, no
/// `None` fields).
pub(crate) fn value(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    let py = obj.py();
    if obj.hasattr(pyo3::intern!(py, "model_dump"))? {
        let kwargs = PyDict::new(py);
        kwargs.set_item("by_alias", true)?;
        kwargs.set_item("mode", "json")?;
        kwargs.set_item("exclude_none", true)?;
        let dumped = obj.call_method(pyo3::intern!(py, "model_dump"), (), Some(&kwargs))?;
        return Ok(pythonize::depythonize(&dumped)?);
    }
    Ok(pythonize::depythonize(obj)?)
}

/// An optional Python object as JSON (`None` stays `None`).
pub(crate) fn optional(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Value>> {
    match obj {
        Some(o) if !o.is_none() => value(o).map(Some),
        _ => Ok(None),
    }
}
