//! Keyword-only options read from `**options`: a constructor with many
//! options takes them as one Rust parameter. An unknown name or a value of
//! the wrong type is a `TypeError` naming the argument, as pyo3's own
//! argument errors are.

use pyo3::conversion::FromPyObjectOwned;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::PyDict;

/// The keyword options a call was given.
pub(crate) struct Options<'py> {
    func: &'static str,
    given: Option<Bound<'py, PyDict>>,
}

impl<'py> Options<'py> {
    /// `given` as `func`'s options, each of them one of `known`.
    pub(crate) fn new(
        func: &'static str,
        given: Option<&Bound<'py, PyDict>>,
        known: &[&str],
    ) -> PyResult<Options<'py>> {
        if let Some(d) = given {
            for key in d.keys() {
                let name: PyBackedStr = key.extract()?;
                if !known.contains(&&*name) {
                    return Err(PyTypeError::new_err(format!(
                        "{func}() got an unexpected keyword argument '{}'",
                        &*name
                    )));
                }
            }
        }
        Ok(Options {
            func,
            given: given.cloned(),
        })
    }

    /// The option `name`, or `default` when it was not given.
    pub(crate) fn get<T: FromPyObjectOwned<'py>>(&self, name: &str, default: T) -> PyResult<T> {
        let Some(value) = self.given.as_ref().map(|d| d.get_item(name)).transpose()? else {
            return Ok(default);
        };
        let Some(value) = value else {
            return Ok(default);
        };
        value.extract::<T>().map_err(|e| {
            let e: PyErr = e.into();
            PyTypeError::new_err(format!("{}() argument '{name}': {e}", self.func))
        })
    }
}
