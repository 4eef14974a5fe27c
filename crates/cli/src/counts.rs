//! Counts given on the command line (`--max-pages`, `--rate-limit`, ...)
//! that must be at least one, read with a message that says so.

/// A whole number of 1 or more that fits `T`: `0` and words are refused
/// in plain words, not with the type's range written out.
pub fn at_least_one<T: TryFrom<u64>>(s: &str) -> Result<T, String> {
    match s.trim().parse::<u64>() {
        Ok(0) => Err("0 is too few: give 1 or more".into()),
        Ok(n) => T::try_from(n).map_err(|_| format!("{n} is more than this takes")),
        Err(_) => Err(format!("'{s}' is not a whole number of 1 or more")),
    }
}

#[cfg(test)]
mod tests {
    use super::at_least_one;

    #[test]
    fn zero_words_and_too_many_are_said_plainly() {
        assert_eq!(at_least_one::<u64>("3"), Ok(3));
        assert_eq!(at_least_one::<u16>(" 7 "), Ok(7));
        assert_eq!(
            at_least_one::<u64>("0"),
            Err("0 is too few: give 1 or more".into())
        );
        assert!(at_least_one::<u64>("-1").is_err_and(|e| e.contains("not a whole number")));
        assert!(at_least_one::<u16>("70000").is_err_and(|e| e.contains("more than")));
    }
}
