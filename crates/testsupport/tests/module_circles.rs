//! A house rule: no circle of `use` between the files of one crate.
//!
//! Each crate's module tree is read from its root (`lib.rs`, `main.rs`)
//! through its `mod` declarations (test modules left out). Every path a
//! file names that starts with `crate`, `super`, `self` or one of its own
//! child modules is resolved to the file that defines the name, following
//! `use` re-exports on the way. Arrows between a module and its own
//! descendants do not count: a folder's `mod.rs` (or `x.rs` beside `x/`)
//! owns the types its files extend and calls what they add, as one room
//! with inner walls. Files that reach each other through the other arrows
//! (siblings, cousins, across folders) form a circle, and the test names
//! the files and the names that tie them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn is_test_cfg(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        (a.path().is_ident("cfg") || a.path().is_ident("test"))
            && quote::ToTokens::to_token_stream(a)
                .to_string()
                .contains("test")
    })
}

/// A module path inside one crate (`[]` is the root).
type ModPath = Vec<String>;

/// One `use` binding: the name it binds in its module, and the absolute
/// path it stands for.
struct Binding {
    module: ModPath,
    name: String,
    target: ModPath,
}

/// One crate's modules, the file of each, and every `use` binding.
#[derive(Default)]
struct Crate {
    files: BTreeMap<ModPath, PathBuf>,
    /// Inline `mod x { }` blocks share their parent's file.
    inline: BTreeSet<ModPath>,
    bindings: Vec<Binding>,
    /// (from module, absolute path named, whether it is a façade re-export)
    refs: Vec<(ModPath, ModPath, bool)>,
}

/// The directory a module's children live in.
fn child_dir(file: &Path) -> PathBuf {
    let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let dir = file.parent().unwrap_or(Path::new("")).to_path_buf();
    if matches!(name, "lib.rs" | "main.rs" | "mod.rs") {
        dir
    } else {
        dir.join(file.file_stem().unwrap_or_default())
    }
}

/// Turns `super`/`self`/`crate`/child-module paths into absolute ones.
fn absolute(module: &ModPath, segs: &[String], children: &BTreeSet<String>) -> Option<ModPath> {
    let first = segs.first()?;
    let mut out: ModPath;
    let mut rest = segs;
    match first.as_str() {
        "crate" => {
            out = Vec::new();
            rest = &segs[1..];
        }
        "self" => {
            out = module.clone();
            rest = &segs[1..];
        }
        "super" => {
            out = module.clone();
            while rest.first().is_some_and(|s| s == "super") {
                out.pop()?;
                rest = &rest[1..];
            }
        }
        name if children.contains(name) => out = module.clone(),
        _ => return None,
    }
    while rest.first().is_some_and(|s| s == "super") {
        out.pop()?;
        rest = &rest[1..];
    }
    out.extend(rest.iter().cloned());
    Some(out)
}

struct FileVisitor<'c> {
    krate: &'c mut Crate,
    module: ModPath,
    file: PathBuf,
    /// Modules still to read: (module path, its file).
    pending: Vec<(ModPath, PathBuf)>,
    /// The first pass reads `mod` declarations only, the second the rest.
    mods_only: bool,
}

impl FileVisitor<'_> {
    fn children(&self) -> BTreeSet<String> {
        let n = self.module.len();
        self.krate
            .files
            .keys()
            .chain(self.krate.inline.iter())
            .filter(|m| m.len() == n + 1 && m[..n] == self.module[..])
            .map(|m| m[n].clone())
            .collect()
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree, public: bool) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree, public);
                prefix.pop();
            }
            syn::UseTree::Name(n) => self.bind(prefix, &n.ident.to_string(), None, public),
            syn::UseTree::Rename(r) => self.bind(
                prefix,
                &r.ident.to_string(),
                Some(r.rename.to_string()),
                public,
            ),
            syn::UseTree::Glob(_) => {
                let children = self.children();
                if let Some(target) = absolute(&self.module, prefix, &children) {
                    self.krate.refs.push((self.module.clone(), target, false));
                }
            }
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(prefix, t, public);
                }
            }
        }
    }

    fn bind(&mut self, prefix: &[String], ident: &str, rename: Option<String>, public: bool) {
        let mut segs = prefix.to_vec();
        let name = rename.unwrap_or_else(|| ident.to_string());
        if ident != "self" {
            segs.push(ident.to_string());
        }
        let children = self.children();
        let Some(target) = absolute(&self.module, &segs, &children) else {
            return;
        };
        // A parent naming its own descendants for others is the façade.
        let facade = public && target.len() > self.module.len() && target.starts_with(&self.module);
        self.krate
            .refs
            .push((self.module.clone(), target.clone(), facade));
        self.krate.bindings.push(Binding {
            module: self.module.clone(),
            name,
            target,
        });
    }
}

impl<'a> Visit<'a> for FileVisitor<'_> {
    fn visit_item_mod(&mut self, m: &'a syn::ItemMod) {
        if is_test_cfg(&m.attrs) {
            return;
        }
        let mut path = self.module.clone();
        path.push(m.ident.to_string());
        match &m.content {
            Some(_) => {
                if self.mods_only {
                    self.krate.inline.insert(path.clone());
                }
                let outer = std::mem::replace(&mut self.module, path);
                syn::visit::visit_item_mod(self, m);
                self.module = outer;
            }
            None if !self.mods_only => {}
            None => {
                let mut dir = child_dir(&self.file);
                for inner in &path[self.depth_of_file()..path.len() - 1] {
                    dir = dir.join(inner);
                }
                let name = m.ident.to_string();
                let flat = dir.join(format!("{name}.rs"));
                let file = if flat.exists() {
                    flat
                } else {
                    dir.join(&name).join("mod.rs")
                };
                self.krate.files.insert(path.clone(), file.clone());
                self.pending.push((path, file));
            }
        }
    }

    fn visit_item_fn(&mut self, f: &'a syn::ItemFn) {
        if !is_test_cfg(&f.attrs) {
            syn::visit::visit_item_fn(self, f);
        }
    }

    fn visit_item_impl(&mut self, i: &'a syn::ItemImpl) {
        if !is_test_cfg(&i.attrs) {
            syn::visit::visit_item_impl(self, i);
        }
    }

    fn visit_item_use(&mut self, u: &'a syn::ItemUse) {
        if self.mods_only {
            return;
        }
        if is_test_cfg(&u.attrs) {
            return;
        }
        let public = !matches!(u.vis, syn::Visibility::Inherited);
        self.use_tree(&mut Vec::new(), &u.tree, public);
    }

    /// A macro's arguments, when they read as expressions (`format!`,
    /// `vec!`, `assert_eq!`): paths inside them are uses too.
    fn visit_macro(&mut self, m: &'a syn::Macro) {
        use syn::punctuated::Punctuated;
        let args = m.parse_body_with(Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated);
        if let Ok(args) = args {
            for arg in &args {
                syn::visit::visit_expr(self, arg);
            }
        }
        syn::visit::visit_macro(self, m);
    }

    fn visit_path(&mut self, p: &'a syn::Path) {
        if self.mods_only {
            return;
        }
        if p.leading_colon.is_none() && p.segments.len() > 1 {
            let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
            let children = self.children();
            if let Some(target) = absolute(&self.module, &segs, &children) {
                self.krate.refs.push((self.module.clone(), target, false));
            }
        }
        syn::visit::visit_path(self, p);
    }
}

impl FileVisitor<'_> {
    /// How deep the file's own module is (inline modules go deeper).
    fn depth_of_file(&self) -> usize {
        self.krate
            .files
            .iter()
            .find(|(_, f)| **f == self.file)
            .map_or(0, |(m, _)| m.len())
    }
}

impl Crate {
    fn read(root_file: &Path) -> Crate {
        let mut krate = Crate::default();
        krate.files.insert(Vec::new(), root_file.to_path_buf());
        let mut pending = vec![(Vec::new(), root_file.to_path_buf())];
        let mut parsed = Vec::new();
        while let Some((module, file)) = pending.pop() {
            let text = std::fs::read_to_string(&file)
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            let ast = syn::parse_file(&text)
                .unwrap_or_else(|e| panic!("{}: does not parse: {e}", file.display()));
            let mut v = FileVisitor {
                krate: &mut krate,
                module: module.clone(),
                file: file.clone(),
                pending: Vec::new(),
                mods_only: true,
            };
            v.visit_file(&ast);
            pending.append(&mut v.pending);
            parsed.push((module, file, ast));
        }
        for (module, file, ast) in parsed {
            let mut v = FileVisitor {
                krate: &mut krate,
                module,
                file,
                pending: Vec::new(),
                mods_only: false,
            };
            v.visit_file(&ast);
        }
        krate
    }

    /// The module whose file is where `module` lives.
    fn file_of(&self, module: &ModPath) -> Option<&PathBuf> {
        (0..=module.len())
            .rev()
            .find_map(|n| self.files.get(&module[..n]))
    }

    /// The module a file holds.
    fn module_of(&self, file: &Path) -> Option<&ModPath> {
        self.files.iter().find(|(_, f)| *f == file).map(|(m, _)| m)
    }

    /// The file that defines what `path` names, following `use` bindings.
    fn resolve(&self, path: &ModPath, depth: usize) -> Option<PathBuf> {
        let n = (0..=path.len())
            .rev()
            .find(|&n| self.files.contains_key(&path[..n]) || self.inline.contains(&path[..n]))?;
        let module = path[..n].to_vec();
        if depth < 8 {
            if let Some(name) = path.get(n) {
                if let Some(b) = self
                    .bindings
                    .iter()
                    .find(|b| b.module == module && &b.name == name)
                {
                    let mut next = b.target.clone();
                    next.extend(path[n + 1..].iter().cloned());
                    return self.resolve(&next, depth + 1);
                }
            }
        }
        self.file_of(&module).cloned()
    }

    /// Arrows between files: from -> to -> names taken.
    fn arrows(&self) -> BTreeMap<PathBuf, BTreeMap<PathBuf, BTreeSet<String>>> {
        let mut arrows: BTreeMap<PathBuf, BTreeMap<PathBuf, BTreeSet<String>>> = BTreeMap::new();
        for (from, path, facade) in &self.refs {
            if *facade {
                continue;
            }
            let (Some(src), Some(dst)) = (self.file_of(from), self.resolve(path, 0)) else {
                continue;
            };
            let (Some(a), Some(b)) = (self.module_of(src), self.module_of(&dst)) else {
                continue;
            };
            if !a.starts_with(b) && !b.starts_with(a) {
                let name = path.last().cloned().unwrap_or_default();
                arrows
                    .entry(src.clone())
                    .or_default()
                    .entry(dst)
                    .or_default()
                    .insert(name);
            }
        }
        arrows
    }
}

/// Strongly connected components of more than one file (Tarjan's).
fn circles(arrows: &BTreeMap<PathBuf, BTreeMap<PathBuf, BTreeSet<String>>>) -> Vec<Vec<PathBuf>> {
    struct State<'a> {
        arrows: &'a BTreeMap<PathBuf, BTreeMap<PathBuf, BTreeSet<String>>>,
        index: BTreeMap<&'a PathBuf, (usize, usize)>,
        stack: Vec<&'a PathBuf>,
        on_stack: BTreeSet<&'a PathBuf>,
        next: usize,
        found: Vec<Vec<PathBuf>>,
    }
    fn connect<'a>(s: &mut State<'a>, v: &'a PathBuf) {
        s.index.insert(v, (s.next, s.next));
        s.next += 1;
        s.stack.push(v);
        s.on_stack.insert(v);
        if let Some(outs) = s.arrows.get(v) {
            for w in outs.keys() {
                if !s.index.contains_key(w) {
                    connect(s, w);
                    let low = s.index[v].1.min(s.index[w].1);
                    s.index.get_mut(v).expect("visited").1 = low;
                } else if s.on_stack.contains(w) {
                    let low = s.index[v].1.min(s.index[w].0);
                    s.index.get_mut(v).expect("visited").1 = low;
                }
            }
        }
        if s.index[v].0 == s.index[v].1 {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.clone());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.found.push(component);
            }
        }
    }
    let mut s = State {
        arrows,
        index: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        found: Vec::new(),
    };
    for v in arrows.keys() {
        if !s.index.contains_key(v) {
            connect(&mut s, v);
        }
    }
    s.found
}

/// Every crate root of the workspace and the bindings.
fn roots() -> Vec<PathBuf> {
    let root = workspace_root();
    let mut roots = vec![root.join("python/src/lib.rs"), root.join("node/src/lib.rs")];
    for entry in std::fs::read_dir(root.join("crates")).expect("crates/") {
        let dir = entry.expect("crates/ entry").path().join("src");
        for name in ["lib.rs", "main.rs"] {
            if dir.join(name).exists() {
                roots.push(dir.join(name));
            }
        }
    }
    roots.retain(|r| r.exists());
    roots.sort();
    roots
}

fn describe(
    circle: &[PathBuf],
    arrows: &BTreeMap<PathBuf, BTreeMap<PathBuf, BTreeSet<String>>>,
) -> String {
    let root = workspace_root();
    let short = |p: &Path| p.strip_prefix(&root).unwrap_or(p).display().to_string();
    let mut text = format!(
        "circle of {}:\n",
        circle
            .iter()
            .map(|p| short(p))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for from in circle {
        for (to, names) in arrows.get(from).into_iter().flatten() {
            if circle.contains(to) {
                let names: Vec<&str> = names.iter().map(String::as_str).collect();
                text += &format!("  {} -> {}: {}\n", short(from), short(to), names.join(", "));
            }
        }
    }
    text
}

#[test]
fn no_circle_of_use_between_the_files_of_a_crate() {
    let mut found = Vec::new();
    for root in roots() {
        let krate = Crate::read(&root);
        let arrows = krate.arrows();
        for circle in circles(&arrows) {
            found.push(describe(&circle, &arrows));
        }
    }
    assert!(found.is_empty(), "module circles:\n{}", found.join("\n"));
}

/// The checker itself finds a circle it is shown, and names its files.
#[test]
fn the_checker_finds_a_circle_and_names_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path();
    std::fs::write(
        src.join("lib.rs"),
        "mod a;\nmod b;\nmod c;\npub use a::A;\n",
    )
    .expect("write");
    std::fs::write(src.join("a.rs"), "use crate::b::B;\npub struct A(B);\n").expect("write");
    std::fs::write(
        src.join("b.rs"),
        "pub struct B;\nimpl B { fn a() -> super::A { todo!() } }\n",
    )
    .expect("write");
    // c extends its parent's type and the parent calls c: one room.
    std::fs::write(
        src.join("c.rs"),
        "use crate::a::A;\nfn f() -> crate::C { crate::C }\n",
    )
    .expect("write");
    // d and e tie each other, e only inside a macro's arguments.
    std::fs::write(
        src.join("d.rs"),
        "use crate::e::E;\npub fn name() -> E { E }\n",
    )
    .expect("write");
    std::fs::write(
        src.join("e.rs"),
        "pub struct E;\nfn f() -> String { format!(\"{:?}\", vec![crate::d::name()]) }\n",
    )
    .expect("write");
    std::fs::write(
        src.join("lib.rs"),
        "mod a;\nmod b;\nmod c;\nmod d;\nmod e;\npub use a::A;\npub struct C;\nfn g() { c::f(); }\n",
    )
    .expect("write");
    let krate = Crate::read(&src.join("lib.rs"));
    let arrows = krate.arrows();
    let found = circles(&arrows);
    assert_eq!(
        found,
        vec![
            vec![src.join("a.rs"), src.join("b.rs")],
            vec![src.join("d.rs"), src.join("e.rs")]
        ],
        "{arrows:?}"
    );
    let text = describe(&found[0], &arrows);
    assert!(text.contains("a.rs -> ") && text.contains(": B"), "{text}");
}
