//! The workspace's house rules, checked on its sources: no function over
//! 120 lines outside tests, no source file over 1,000 lines, no
//! `too_many_arguments` allowance, and every library crate denying
//! missing docs.

use std::path::{Path, PathBuf};

use syn::spanned::Spanned;
use syn::visit::Visit;

/// The longest a function outside tests may be, in lines.
const MAX_LINES: usize = 120;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The longest a source file may be, in lines (tests in a file of their
/// own do not count against the file they test).
const MAX_FILE_LINES: usize = 1_000;

/// Every `.rs` file under the crates' `src`, `python/src` and `node/src`.
fn sources() -> Vec<PathBuf> {
    let root = workspace_root();
    let mut dirs = vec![root.join("python/src"), root.join("node/src")];
    for entry in std::fs::read_dir(root.join("crates")).expect("crates/") {
        dirs.push(entry.expect("crates/ entry").path().join("src"));
    }
    let mut files = Vec::new();
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

fn is_test_cfg(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        (a.path().is_ident("cfg") || a.path().is_ident("test"))
            && a.to_token_stream_string().contains("test")
    })
}

trait AttrText {
    fn to_token_stream_string(&self) -> String;
}

impl AttrText for syn::Attribute {
    fn to_token_stream_string(&self) -> String {
        quote::ToTokens::to_token_stream(self).to_string()
    }
}

/// Functions longer than the limit: (name, first line, lines).
#[derive(Default)]
struct Long {
    found: Vec<(String, usize, usize)>,
}

impl Long {
    /// From `fn` to the closing brace (doc comments and attributes not
    /// counted).
    fn check(&mut self, sig: &syn::Signature, body: &syn::Block) {
        let (start, end) = (sig.fn_token.span.start().line, body.span().end().line);
        let lines = end - start + 1;
        if lines > MAX_LINES {
            self.found.push((sig.ident.to_string(), start, lines));
        }
    }
}

impl<'a> Visit<'a> for Long {
    fn visit_item_mod(&mut self, m: &'a syn::ItemMod) {
        if !is_test_cfg(&m.attrs) {
            syn::visit::visit_item_mod(self, m);
        }
    }
    fn visit_item_fn(&mut self, f: &'a syn::ItemFn) {
        if !is_test_cfg(&f.attrs) {
            self.check(&f.sig, &f.block);
            syn::visit::visit_item_fn(self, f);
        }
    }
    fn visit_impl_item_fn(&mut self, f: &'a syn::ImplItemFn) {
        if !is_test_cfg(&f.attrs) {
            self.check(&f.sig, &f.block);
            syn::visit::visit_impl_item_fn(self, f);
        }
    }
    fn visit_trait_item_fn(&mut self, f: &'a syn::TraitItemFn) {
        if let Some(body) = &f.default {
            self.check(&f.sig, body);
        }
        syn::visit::visit_trait_item_fn(self, f);
    }
}

#[test]
fn no_function_outside_tests_is_over_120_lines() {
    let mut long = Vec::new();
    for path in sources() {
        let text = std::fs::read_to_string(&path).expect("read");
        let file = syn::parse_file(&text)
            .unwrap_or_else(|e| panic!("{}: does not parse: {e}", path.display()));
        let mut v = Long::default();
        v.visit_file(&file);
        for (name, line, lines) in v.found {
            long.push(format!("{}:{line} {name}: {lines} lines", path.display()));
        }
    }
    assert!(
        long.is_empty(),
        "functions over {MAX_LINES} lines:\n{}",
        long.join("\n")
    );
}

#[test]
fn no_source_file_is_over_1000_lines() {
    let long: Vec<String> = sources()
        .into_iter()
        .filter(|p| !p.ends_with("tests.rs"))
        .filter_map(|p| {
            let lines = std::fs::read_to_string(&p).expect("read").lines().count();
            (lines > MAX_FILE_LINES).then(|| format!("{}: {lines} lines", p.display()))
        })
        .collect();
    assert!(
        long.is_empty(),
        "files over {MAX_FILE_LINES} lines:\n{}",
        long.join("\n")
    );
}

#[test]
fn no_too_many_arguments_allowance() {
    let found: Vec<String> = sources()
        .into_iter()
        .filter(|p| {
            std::fs::read_to_string(p)
                .expect("read")
                .contains("too_many_arguments")
        })
        .map(|p| p.display().to_string())
        .collect();
    assert!(found.is_empty(), "too_many_arguments allowed in: {found:?}");
}

#[test]
fn every_library_crate_denies_missing_docs() {
    let root = workspace_root();
    let mut libs = vec![root.join("python/src/lib.rs")];
    for entry in std::fs::read_dir(root.join("crates")).expect("crates/") {
        let lib = entry.expect("entry").path().join("src/lib.rs");
        if lib.exists() {
            libs.push(lib);
        }
    }
    let missing: Vec<String> = libs
        .into_iter()
        .filter(|p| {
            !std::fs::read_to_string(p)
                .expect("read")
                .contains("#![deny(missing_docs)]")
        })
        .map(|p| p.display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "without #![deny(missing_docs)]: {missing:?}"
    );
}

/// The embedded crawler carries no Redis client: the fleet's backend plugs
/// into it from above.
#[test]
fn the_embedded_crawler_links_no_redis() {
    let out = std::process::Command::new(env!("CARGO"))
        .args([
            "tree",
            "-p",
            "mannerly-crawl",
            "-e",
            "normal",
            "--prefix",
            "none",
        ])
        .args(["--locked", "--offline"])
        .current_dir(workspace_root())
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "cargo tree: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = String::from_utf8_lossy(&out.stdout);
    let names: Vec<&str> = tree.lines().filter_map(|l| l.split(' ').next()).collect();
    assert!(names.contains(&"mannerly-polite"), "{tree}");
    for banned in ["redis", "mannerly-fleet"] {
        assert!(
            !names.contains(&banned),
            "mannerly-crawl depends on {banned}"
        );
    }
}
