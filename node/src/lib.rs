//! Node.js bindings of mannerly, built with napi-rs: the robots.txt engine
//! that agrees with Google's reference library, the robots.txt fetch state
//! machine, and per-host politeness. The JavaScript layer (`index.js`)
//! checks argument types, turns the errors thrown here into `TypeError` and
//! `RangeError`, and adds the Crawlee integration.
//!
//! Errors: every error is thrown with the `InvalidArg` status; a message
//! that starts with `RangeError: ` is a value out of range.

#![deny(unsafe_code)]

use std::time::Duration;

use mannerly_time::UnixMillis;
use napi::bindgen_prelude::*;
use napi_derive::napi;

mod pace;
mod robots;
mod state;

/// An argument error (turned into a TypeError, or a RangeError when the
/// message says so, by the JavaScript layer).
pub(crate) fn invalid(message: impl Into<String>) -> Error {
    Error::new(Status::InvalidArg, message.into())
}

/// A product token must be text a crawler could send.
pub(crate) fn check_agent(agent: &str) -> Result<()> {
    if agent.trim().is_empty() {
        return Err(invalid(
            "agent is empty: pass a crawler's product token, such as 'Googlebot'",
        ));
    }
    Ok(())
}

/// `now` in ms since 1970, or the clock.
pub(crate) fn at(now: Option<f64>) -> Result<UnixMillis> {
    match now {
        None => Ok(UnixMillis::now()),
        Some(ms) if ms.is_finite() && ms >= 0.0 => Ok(UnixMillis(ms as u64)),
        Some(ms) => Err(invalid(format!(
            "RangeError: now {ms} is not a time (milliseconds since 1970, as Date.now() gives)"
        ))),
    }
}

/// A duration option in seconds.
pub(crate) fn seconds(name: &str, v: Option<f64>, default: f64) -> Result<Duration> {
    let v = v.unwrap_or(default);
    if !(v.is_finite() && v >= 0.0) {
        return Err(invalid(format!(
            "RangeError: {name} {v} is not a number of seconds"
        )));
    }
    Ok(Duration::from_secs_f64(v))
}

/// A duration option in seconds, as milliseconds.
pub(crate) fn millis(name: &str, v: Option<f64>, default: f64) -> Result<u64> {
    Ok(seconds(name, v, default)?.as_millis() as u64)
}

/// The URL as a crawler requests it: what a browser percent-encodes in
/// the path and query becomes `%XX`. Every method that judges a URL judges
/// this form.
#[napi]
pub fn as_requested(url: String) -> String {
    mannerly_robots::as_requested(&url).into_owned()
}

/// The product token a User-Agent names (`MyBot` in `Mozilla/5.0
/// (compatible; MyBot/1.0; +https://...)`), as mannerly's crawler, audit
/// and gate read it; `null` when it names none.
#[napi]
pub fn product_token(user_agent: String) -> Option<String> {
    mannerly_robots::product_token(&user_agent)
}

/// Lints a robots.txt body: every finding with its line, column,
/// severity, stable code, message and suggested fix.
#[napi]
pub fn lint(body: Either<Buffer, String>, rfc: Option<bool>) -> Vec<robots::Finding> {
    let options = mannerly_robots::ParseOptions::strict(rfc.unwrap_or(false));
    let found = match &body {
        Either::A(b) => mannerly_robots::lint_with(b, options),
        Either::B(s) => mannerly_robots::lint_with(s.as_bytes(), options),
    };
    found.iter().map(robots::finding).collect()
}

/// Whether a User-Agent product token is one robots.txt can name (letters,
/// `-` and `_`), as Google's reference library decides.
#[napi]
pub fn is_valid_user_agent(agent: String) -> bool {
    mannerly_robots::is_valid_user_agent(&agent)
}

/// The path, params and query of a URL, as robots.txt rules match them
/// (`/` when empty), as Google's reference library extracts them.
#[napi]
pub fn path_params_query(url: String) -> String {
    mannerly_robots::path_params_query(&url).into_owned()
}
