//! Diagnostics: what the parser could not use, and what the linter thinks a
//! site owner should know.

use std::fmt;

/// How much a diagnostic matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; nothing is wrong.
    Info,
    /// Works with Google but not with every crawler, or looks unintended.
    Warning,
    /// The file does not do what it says: a line is ignored, a rule can
    /// never match, or part of the file is unreadable.
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

/// One finding about one place in a robots.txt file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Diagnostic {
    /// 1-based line number (0 for findings about the whole file).
    pub line: u32,
    /// 1-based byte column within the line (0 for the whole line or file).
    pub column: u32,
    /// How serious.
    pub severity: Severity,
    /// A stable identifier, one of [`codes`](crate::codes).
    pub code: &'static str,
    /// What is wrong, in words a site owner understands.
    pub message: String,
    /// A replacement for the line, or an instruction, where there is one.
    pub suggestion: Option<String>,
}

impl Diagnostic {
    pub(crate) fn new(
        line: u32,
        column: u32,
        severity: Severity,
        code: &'static str,
        message: impl Into<String>,
    ) -> Self {
        Diagnostic {
            line,
            column,
            severity,
            code,
            message: message.into(),
            suggestion: None,
        }
    }

    pub(crate) fn suggest(mut self, s: impl Into<String>) -> Self {
        self.suggestion = Some(s.into());
        self
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {}[{}]: {}",
            self.line, self.column, self.severity, self.code, self.message
        )?;
        if let Some(s) = &self.suggestion {
            write!(f, " (suggestion: {s})")?;
        }
        Ok(())
    }
}

/// The stable diagnostic codes. Tools may match on these strings; they never
/// change meaning once released.
pub mod codes {
    /// The file is larger than the size limit; the rest was ignored.
    pub const FILE_TOO_LARGE: &str = "file-too-large";
    /// The body is an HTML page, not a robots.txt file.
    pub const HTML_DOCUMENT: &str = "html-document";
    /// The body is UTF-16; every line reads as garbage.
    pub const UTF16: &str = "utf16";
    /// Bytes that are not valid UTF-8.
    pub const NON_UTF8: &str = "non-utf8";
    /// A byte order mark after the start of the file.
    pub const BOM_MID_FILE: &str = "bom-mid-file";
    /// Lines end with a bare carriage return.
    pub const CR_LINE_ENDINGS: &str = "cr-line-endings";
    /// A NUL byte; the rest of the line is ignored.
    pub const NUL_BYTE: &str = "nul-byte";
    /// A line longer than the reference keeps; the end was cut.
    pub const LINE_TOO_LONG: &str = "line-too-long";
    /// A line that is neither a comment nor `key: value`.
    pub const NOT_A_DIRECTIVE: &str = "not-a-directive";
    /// A misspelt key that Google accepts anyway.
    pub const TYPO_ACCEPTED: &str = "typo-accepted";
    /// A key that only matched by prefix (`Disallowed:`).
    pub const KEY_PREFIX: &str = "key-prefix";
    /// `key value` without the colon; Google accepts it.
    pub const MISSING_COLON: &str = "missing-colon";
    /// A directive no crawler knows.
    pub const UNKNOWN_DIRECTIVE: &str = "unknown-directive";
    /// A directive Google does not support (noindex, nofollow, ...).
    pub const UNSUPPORTED_DIRECTIVE: &str = "unsupported-directive";
    /// Allow or Disallow before any User-agent line; ignored.
    pub const RULE_OUTSIDE_GROUP: &str = "rule-outside-group";
    /// A group-scoped extension (Crawl-delay, ...) before any User-agent line.
    pub const DIRECTIVE_OUTSIDE_GROUP: &str = "directive-outside-group";
    /// A path that does not start with `/` or `*`; it can never match.
    pub const PATH_NOT_ABSOLUTE: &str = "path-not-absolute";
    /// A `$` that is not the last character; it matches a literal `$`.
    pub const DOLLAR_MID_PATTERN: &str = "dollar-mid-pattern";
    /// A space inside a path; URLs send it as `%20`, so the rule matches
    /// nothing (two paths on one line, often).
    pub const SPACE_IN_PATH: &str = "space-in-path";
    /// A user-agent value with characters outside `[a-zA-Z_-]`.
    pub const INVALID_USER_AGENT: &str = "invalid-user-agent";
    /// A user-agent value that can match no crawler.
    pub const USER_AGENT_MATCHES_NOTHING: &str = "user-agent-matches-nothing";
    /// A rule that another rule of the other kind always beats.
    pub const SHADOWED_RULE: &str = "shadowed-rule";
    /// The same rule twice for the same crawler.
    pub const DUPLICATE_RULE: &str = "duplicate-rule";
    /// A group with user-agent lines and no rules at the end of the file.
    pub const EMPTY_GROUP: &str = "empty-group";
    /// A Crawl-delay that is not a plain number.
    pub const CRAWL_DELAY_INVALID: &str = "crawl-delay-invalid";
    /// A Crawl-delay value that engines read differently.
    pub const CRAWL_DELAY_DISPUTED: &str = "crawl-delay-disputed";
    /// A `Crawl-delay` in a group Googlebot obeys: Google ignores the line.
    pub const CRAWL_DELAY_IGNORED_BY_GOOGLE: &str = "crawl-delay-ignored-by-google";
    /// A Request-rate that is not `n/m[smhd]`.
    pub const REQUEST_RATE_INVALID: &str = "request-rate-invalid";
    /// A Visit-time that is not `HHMM-HHMM`.
    pub const VISIT_TIME_INVALID: &str = "visit-time-invalid";
    /// A Host value that is not a host name.
    pub const HOST_INVALID: &str = "host-invalid";
    /// A Clean-param value without parameters.
    pub const CLEAN_PARAM_INVALID: &str = "clean-param-invalid";
    /// A Content-Usage value that is not a valid preference dictionary.
    pub const CONTENT_USAGE_INVALID: &str = "content-usage-invalid";
    /// A Content-Usage preference read as unknown: a category's value not
    /// `y` or `n`, or a label the vocabulary does not define.
    pub const CONTENT_USAGE_UNREAD: &str = "content-usage-unread";
    /// A User-agent line that Google keeps in the group above while AIPREF
    /// (Content-Usage is a rule) starts a new group with it.
    pub const CONTENT_USAGE_GROUPING: &str = "content-usage-grouping";
    /// A Content-Usage line without its colon, which AIPREF requires.
    pub const CONTENT_USAGE_NO_COLON: &str = "content-usage-no-colon";
    /// A Sitemap value that is not an absolute http(s) URL.
    pub const SITEMAP_NOT_ABSOLUTE: &str = "sitemap-not-absolute";
    /// A directive that appears twice where only one counts.
    pub const DUPLICATE_DIRECTIVE: &str = "duplicate-directive";
}
