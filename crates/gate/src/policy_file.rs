//! A policy read from its file, with the robots.txt it names: the I/O
//! layer over the sans-IO [`Policy::parse`].

use std::path::Path;

use crate::policy::{Policy, PolicyError};

impl Policy {
    /// Reads a policy file and the robots.txt it names (relative to it).
    pub fn read(path: &Path) -> Result<Policy, PolicyError> {
        let text = std::fs::read_to_string(path).map_err(|e| PolicyError {
            file: path.display().to_string(),
            line: 0,
            message: format!("cannot read it: {e}"),
        })?;
        let mut policy = Policy::parse(&text, path)?;
        if let Some((full, line)) = policy.robots_file.clone() {
            let body = std::fs::read(&full).map_err(|e| PolicyError {
                file: path.display().to_string(),
                line,
                message: format!("robots: cannot read '{}': {e}", full.display()),
            })?;
            policy.set_robots(&body);
        }
        Ok(policy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_robots_txt_a_policy_names_is_read_beside_it_or_its_line_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        let policy = dir.path().join("p.toml");
        std::fs::write(&policy, "\nrobots = \"robots.txt\"\n").expect("write");
        let e = Policy::read(&policy).expect_err("no robots.txt yet");
        assert!(
            e.to_string().contains("p.toml:2: robots: cannot read"),
            "{e}"
        );
        std::fs::write(
            dir.path().join("robots.txt"),
            "User-agent: *\nDisallow: /x\n",
        )
        .expect("write");
        let p = Policy::read(&policy).expect("reads");
        assert!(p
            .robots
            .is_some_and(|(f, _)| f == dir.path().join("robots.txt")));
    }
}
