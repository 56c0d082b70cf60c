//! The code's shape, checked: data flows one way (capture → net → flow → transport →
//! game → pipeline → report), so no module of a lower layer names a higher one; no two
//! files import each other, directly or around a circle; and no source file grows past
//! ~800 lines without saying why, and how long it is, at its top. The imports are read
//! with `syn` from every file, test modules included: `use` items and paths in code,
//! made absolute and followed through re-exports to the file that defines the item.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The layers in order; each may use the ones before it, never the ones after.
/// `outfile` (safe writing of outputs) serves every layer that writes; `synth` makes
/// captures from the game and transport layers; `sm` decodes another game's packets and
/// prints them with report's JSON writer.
const LAYERS: &[&str] = &[
    "diag",
    "outfile",
    "capture",
    "net",
    "flow",
    "transport",
    "game",
    "synth",
    "pipeline",
    "report",
    "sm",
];

/// Modules above every layer: the command line and the commands that wire it.
const TOP: &[&str] = &["cli", "commands"];

/// A module's rank: its layer, or above them all (the commands); the crate root has
/// none.
fn rank(path: &[String]) -> Option<usize> {
    let first = path.first()?;
    LAYERS
        .iter()
        .position(|l| l == first)
        .or_else(|| TOP.iter().any(|t| t == first).then_some(LAYERS.len()))
}

/// Every module, test modules included, imports only its own layer and those below,
/// as the import graph (uses, paths in code, re-exports followed) says.
#[test]
fn lower_layers_never_import_higher_ones() {
    let (mods, edges) = import_graph();
    let mut offences = Vec::new();
    let mut ranked = 0;
    for (from, list) in edges.iter().enumerate() {
        let Some(own) = rank(&mods[from].path) else {
            continue;
        };
        ranked += 1;
        for (to, how) in list {
            if rank(&mods[*to].path).is_some_and(|r| r > own) {
                offences.push(format!("{}: {how}", mods[from].file.display()));
            }
        }
    }
    assert!(
        ranked > 100,
        "{ranked} modules ranked: every top-level module is in a layer"
    );
    let unranked: Vec<String> = mods
        .iter()
        .filter(|m| !m.path.is_empty() && rank(&m.path).is_none())
        .map(|m| m.path.join("::"))
        .collect();
    assert!(unranked.is_empty(), "modules in no layer: {unranked:?}");
    assert!(
        offences.is_empty(),
        "layer violations:\n{}",
        offences.join("\n")
    );
}

// The checks themselves must be able to fail: a circle is found, and a test module's
// import of a higher layer is seen and made absolute.
#[test]
fn the_checks_see_a_circle_and_a_test_module_import() {
    let edge = |to: usize| (to, String::new());
    let graph = vec![vec![edge(1)], vec![edge(2)], vec![edge(0)], vec![edge(0)]];
    assert_eq!(circles(&graph), vec![vec![0, 1, 2]]);
    assert!(circles(&[vec![edge(1)], vec![]]).is_empty());

    let path = |p: &str| p.split("::").map(String::from).collect::<Vec<_>>();
    let known: std::collections::HashSet<Vec<String>> =
        ["game", "game::message", "game::opcodes", "report::text"]
            .iter()
            .map(|p| path(p))
            .collect();
    let text = "use super::message::{self, GameMessage};\n\
                #[cfg(test)]\nmod tests {\n    use crate::report::text::value_text;\n    \
                fn f() { super::super::message::g(); }\n}";
    let mut refs = Refs {
        base: path("game::opcodes"),
        known: &known,
        crate_name_is_root: false,
        out: Vec::new(),
        reexports: Vec::new(),
        depth: 0,
    };
    syn::visit::visit_file(&mut refs, &syn::parse_file(text).expect("parses"));
    let found: Vec<String> = refs.out.iter().map(|(p, _)| p.join("::")).collect();
    for want in [
        "game::message",
        "game::message::GameMessage",
        "report::text::value_text",
        "game::message::g",
    ] {
        assert!(found.iter().any(|f| f == want), "{want} in {found:?}");
    }
    assert_eq!(rank(&path("report::text")), Some(9));
    assert!(rank(&path("game")) < rank(&path("report")));
}

#[test]
fn long_files_say_why() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut long = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("read source");
        let lines = text.lines().count();
        let head: String = text.lines().take(30).collect::<Vec<_>>().join("\n");
        if lines > 800 && !head.contains("Why this file is long:") {
            long.push(format!("{} ({lines} lines)", file.display()));
        }
    }
    assert!(
        long.is_empty(),
        "files over 800 lines without a `Why this file is long:` note at the top:\n{}",
        long.join("\n")
    );
}

/// Every "Why this file is long" note gives the code's length ("about 1,140 lines"),
/// and gives it truly: within 5 % (or 20 lines) of where the file's tests start, or of its
/// end when it has none.
// Catches: a note left behind while its file grew (`collect.rs` said ~670 lines with
// its tests at line 1,019).
#[test]
fn long_file_notes_state_true_lengths() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut wrong = Vec::new();
    let mut checked = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).expect("read source");
        let head: String = text.lines().take(30).collect::<Vec<_>>().join(" ");
        let Some(note) = head.split("Why this file is long:").nth(1) else {
            continue;
        };
        let note = note.replace("//!", " ");
        let stated = note.find(" lines").and_then(|at| {
            let words: Vec<&str> = note[..at].split_whitespace().collect();
            words
                .last()
                .and_then(|w| w.replace(',', "").parse::<usize>().ok())
        });
        let Some(stated) = stated else {
            wrong.push(format!("{}: the note states no length", file.display()));
            continue;
        };
        let code_end = text
            .lines()
            .position(|l| l.starts_with("#[cfg(test)]"))
            .unwrap_or_else(|| text.lines().count());
        let slack = (code_end / 20).max(20);
        checked += 1;
        if stated.abs_diff(code_end) > slack {
            wrong.push(format!(
                "{}: says about {stated} lines, the code ends at line {code_end}",
                file.display()
            ));
        }
    }
    assert!(checked >= 10, "{checked} notes state a length");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A module of the crate: its path (`["report", "html", "page"]`) and file.
struct Module {
    path: Vec<String>,
    file: PathBuf,
}

/// Module path of a source file: `src/report/html/page.rs` is `report::html::page`,
/// `src/game/mod.rs` is `game`; `lib.rs` and `main.rs` are the root.
fn module_path(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src()).expect("a file under src");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().expect("a file name");
    if !matches!(last.as_str(), "mod.rs" | "lib.rs" | "main.rs") {
        parts.push(last.trim_end_matches(".rs").to_string());
    }
    parts
}

fn modules() -> Vec<Module> {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    files.sort();
    files
        .into_iter()
        .map(|file| Module {
            path: module_path(&file),
            file,
        })
        .collect()
}

/// Every path a use tree names, each with its segments (`use a::{b, c::d}` names
/// `a::b` and `a::c::d`; a glob names its module), and the name each is known by.
fn use_paths(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<(Vec<String>, String)>) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            use_paths(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => {
            let mut full = prefix.clone();
            if n.ident != "self" {
                full.push(n.ident.to_string());
            }
            let name = full.last().cloned().unwrap_or_default();
            out.push((full, name));
        }
        syn::UseTree::Rename(r) => {
            let mut full = prefix.clone();
            if r.ident != "self" {
                full.push(r.ident.to_string());
            }
            out.push((full, r.rename.to_string()));
        }
        syn::UseTree::Glob(_) => out.push((prefix.clone(), "*".into())),
        syn::UseTree::Group(g) => g.items.iter().for_each(|t| use_paths(t, prefix, out)),
    }
}

/// The crate paths a file names: in `use` items and in code (`crate::x::f()`,
/// `super::Y`, `child::z`), made absolute; test modules included.
struct Refs<'a> {
    /// The module being read: the file's, then any inline `mod` inside it.
    base: Vec<String>,
    known: &'a std::collections::HashSet<Vec<String>>,
    /// `bcwire::` means the crate (in main.rs, which is its own crate).
    crate_name_is_root: bool,
    out: Vec<(Vec<String>, String)>,
    /// `use` items at the top of the file: name → absolute path.
    reexports: Vec<(String, Vec<String>)>,
    depth: usize,
}

impl Refs<'_> {
    fn absolute(&self, segs: &[String]) -> Option<Vec<String>> {
        let first = segs.first()?;
        let mut base = self.base.clone();
        let mut rest = segs;
        match first.as_str() {
            "crate" => return Some(segs[1..].to_vec()),
            "bcwire" if self.crate_name_is_root => return Some(segs[1..].to_vec()),
            "self" => rest = &segs[1..],
            "super" => {
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop()?;
                    rest = &rest[1..];
                }
            }
            // `child::f` names a child module of the one being read.
            _ => {
                let mut child = base.clone();
                child.push(first.clone());
                if !self.known.contains(&child) {
                    return None;
                }
            }
        }
        base.extend(rest.iter().cloned());
        Some(base)
    }

    fn record(&mut self, segs: Vec<String>, shown: String) {
        if let Some(abs) = self.absolute(&segs) {
            self.out.push((abs, shown));
        }
    }
}

impl<'ast> syn::visit::Visit<'ast> for Refs<'_> {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if m.content.is_some() {
            self.base.push(m.ident.to_string());
            self.depth += 1;
            syn::visit::visit_item_mod(self, m);
            self.depth -= 1;
            self.base.pop();
        }
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let mut found = Vec::new();
        use_paths(&u.tree, &mut Vec::new(), &mut found);
        for (segs, name) in found {
            let shown = segs.join("::");
            if let Some(abs) = self.absolute(&segs) {
                // A name a module imports is known in it by that name (to its children
                // as `super::name` too), so a path through it leads to the item's
                // module.
                if self.depth == 0 && name != "*" {
                    self.reexports.push((name, abs.clone()));
                }
                self.out.push((abs, shown));
            }
        }
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        if segs.len() > 1 {
            let shown = segs.join("::");
            self.record(segs, shown);
        }
        syn::visit::visit_path(self, p);
    }
}

/// The import graph between files: for each module, the modules whose items it names
/// (with the path it wrote), a re-export followed to the module that defines the item.
fn import_graph() -> (Vec<Module>, Vec<Vec<(usize, String)>>) {
    let mods = modules();
    let known: std::collections::HashSet<Vec<String>> =
        mods.iter().map(|m| m.path.clone()).collect();
    let index: std::collections::HashMap<Vec<String>, usize> = mods
        .iter()
        .enumerate()
        .map(|(i, m)| (m.path.clone(), i))
        .collect();
    let mut refs = Vec::new();
    let mut reexports: Vec<std::collections::HashMap<String, Vec<String>>> = Vec::new();
    for m in &mods {
        let text = std::fs::read_to_string(&m.file).expect("read source");
        let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", m.file.display()));
        let mut r = Refs {
            base: m.path.clone(),
            known: &known,
            crate_name_is_root: m.file.ends_with("main.rs"),
            out: Vec::new(),
            reexports: Vec::new(),
            depth: 0,
        };
        syn::visit::visit_file(&mut r, &ast);
        refs.push(r.out);
        reexports.push(r.reexports.into_iter().collect());
    }
    // The module a path ends in: its longest prefix that is a module, then through
    // that module's re-export of the next name, if it re-exports it.
    let resolve = |path: &[String]| -> Option<usize> {
        let mut path = path.to_vec();
        for _ in 0..8 {
            let len = (0..=path.len())
                .rev()
                .find(|n| index.contains_key(&path[..*n]))?;
            let at = index[&path[..len]];
            match path.get(len).and_then(|name| reexports[at].get(name)) {
                Some(target) if target.as_slice() != path.as_slice() => {
                    let mut next = target.clone();
                    next.extend(path[len + 1..].iter().cloned());
                    path = next;
                }
                _ => return Some(at),
            }
        }
        None
    };
    let edges = refs
        .iter()
        .enumerate()
        .map(|(from, list)| {
            let mut out: Vec<(usize, String)> = Vec::new();
            for (path, shown) in list {
                if let Some(to) = resolve(path) {
                    if to != from && !out.iter().any(|(t, _)| *t == to) {
                        out.push((to, shown.clone()));
                    }
                }
            }
            out
        })
        .collect();
    (mods, edges)
}

/// Strongly connected components of more than one module (Tarjan's algorithm): each
/// is a circle of imports.
fn circles(edges: &[Vec<(usize, String)>]) -> Vec<Vec<usize>> {
    struct State<'a> {
        edges: &'a [Vec<(usize, String)>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(s: &mut State<'_>, v: usize) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for &(w, _) in &s.edges[v] {
            match s.index[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(i) if s.on_stack[w] => s.low[v] = s.low[v].min(i),
                Some(_) => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut component = Vec::new();
            loop {
                let w = s.stack.pop().expect("v is on the stack");
                s.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort_unstable();
                s.out.push(component);
            }
        }
    }
    let n = edges.len();
    let mut s = State {
        edges,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(&mut s, v);
        }
    }
    s.out
}

#[test]
fn no_circles_between_files() {
    let (mods, edges) = import_graph();
    let name = |i: usize| mods[i].path.join("::");
    let found: Vec<String> = circles(&edges)
        .into_iter()
        .map(|c| {
            let members: Vec<String> = c.iter().map(|&i| name(i)).collect();
            let links: Vec<String> = c
                .iter()
                .flat_map(|&i| {
                    edges[i]
                        .iter()
                        .filter(|(t, _)| c.contains(t))
                        .map(move |(t, how)| format!("    {} -> {} ({how})", name(i), name(*t)))
                })
                .collect();
            format!("{}\n{}", members.join(" <-> "), links.join("\n"))
        })
        .collect();
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
}
