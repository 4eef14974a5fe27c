//! Words the reports share: a count with its noun.

/// `n` and the noun, singular or plural: `1 request`, `2 requests`.
pub fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
