//! `SpillFile`: a large payload the engine spilled to disk, read in place.

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::errors;

/// A spilled payload (the file is deleted when the last handle goes).
#[pyclass(module = "ringmcp._native", name = "SpillFile", frozen)]
pub(crate) struct SpillFile {
    file: ringmcp::spill::store::SpillFile,
}

impl SpillFile {
    pub(crate) fn new(file: ringmcp::spill::store::SpillFile) -> Self {
        SpillFile { file }
    }
}

#[pymethods]
impl SpillFile {
    #[getter]
    fn uri(&self) -> &str {
        self.file.uri()
    }

    #[getter]
    fn path(&self) -> String {
        self.file.path().display().to_string()
    }

    fn __len__(&self) -> usize {
        usize::try_from(self.file.len()).unwrap_or(usize::MAX)
    }

    /// Up to `size` bytes from `offset` (fewer at the end, none past it), read straight into
    /// the returned bytes with the GIL released.
    fn read_at<'py>(
        &self,
        py: Python<'py>,
        offset: u64,
        size: usize,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let left = self.file.len().saturating_sub(offset);
        let n = size.min(usize::try_from(left).unwrap_or(usize::MAX));
        let mut got = 0;
        // The bytes object is not visible to any other thread until it is returned, so it can
        // be filled without the GIL.
        let bytes = PyBytes::new_with(py, n, |buf| {
            py.detach(|| self.file.read_at(offset, buf))
                .map(|read| got = read)
                .map_err(|e| errors::to_py(ringmcp::host::Error::Spill(e)))
        })?;
        if got == n {
            Ok(bytes)
        } else {
            // The file was cut behind our back: only what was read.
            Ok(PyBytes::new(py, &bytes.as_bytes()[..got]))
        }
    }

    fn __repr__(&self) -> String {
        format!("<ringmcp.SpillFile {} ({} bytes)>", self.file.uri(), self.file.len())
    }
}
