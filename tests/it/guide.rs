//! Every command shown in `docs/guide.md` is run, and its output must be what the guide
//! shows, so the guide cannot go stale.
//!
//! The guide's syntax: in a fenced block, a line `$ bcwire …` is a command and the lines
//! after it, up to the next `$` line or the end of the block, are its standard output.
//! A line that is exactly `…` stands for any number of lines left out. Commands run
//! in a scratch folder holding `captures/` (the repository's), with `NO_COLOR` set.
//!
//! `BCWIRE_REGENERATE_GUIDE=1 cargo test --profile test-release --test it guide` rewrites the outputs
//! in the guide from what the commands print now, keeping each elision in place (the
//! same number of lines before and after it).

use std::path::{Path, PathBuf};
use std::process::Command;

const ELISION: &str = "…";

/// One command of the guide: where its output lines are in the file, and them.
struct Example {
    command: String,
    /// Index of the first output line in the guide's lines.
    first: usize,
    /// One past the last output line.
    end: usize,
}

fn examples(lines: &[&str]) -> Vec<Example> {
    let mut out = Vec::new();
    let mut in_block = false;
    let mut current: Option<Example> = None;
    for (i, line) in lines.iter().enumerate() {
        if line.starts_with("```") {
            if let Some(mut e) = current.take() {
                e.end = i;
                out.push(e);
            }
            in_block = !in_block;
            continue;
        }
        if !in_block {
            continue;
        }
        if let Some(cmd) = line.strip_prefix("$ ") {
            if let Some(mut e) = current.take() {
                e.end = i;
                out.push(e);
            }
            current = Some(Example {
                command: cmd.to_string(),
                first: i + 1,
                end: i + 1,
            });
        }
    }
    out
}

/// Words of a command line: spaces separate, single and double quotes group.
fn words(command: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut started = false;
    for c in command.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => word.push(c),
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                started = true;
            }
            None if c == ' ' => {
                if started || !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                }
                started = false;
            }
            None => word.push(c),
        }
    }
    if started || !word.is_empty() {
        out.push(word);
    }
    out
}

fn scratch() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("guide");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch folder");
    let captures = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures");
    #[cfg(unix)]
    std::os::unix::fs::symlink(&captures, dir.join("captures")).expect("link captures");
    #[cfg(not(unix))]
    {
        std::fs::create_dir_all(dir.join("captures")).expect("captures");
        for e in std::fs::read_dir(&captures).expect("captures").flatten() {
            std::fs::copy(e.path(), dir.join("captures").join(e.file_name())).expect("copy");
        }
    }
    dir
}

/// Run one guide command; its stdout as lines, trailing empty lines dropped.
fn run(command: &str, cwd: &Path) -> Vec<String> {
    let w = words(command);
    assert_eq!(w.first().map(String::as_str), Some("bcwire"), "{command}");
    let o = Command::new(env!("CARGO_BIN_EXE_bcwire"))
        .args(&w[1..])
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .env_remove("COLUMNS")
        .output()
        .expect("run bcwire");
    // 1 is an answer (diff: the captures differ); 2 is trouble.
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "`{command}` failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = String::from_utf8(o.stdout).expect("utf-8 output");
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines
}

/// Whether `actual` is `expected` with each `…` line standing for any lines.
fn matches(expected: &[&str], actual: &[String]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((&ELISION, rest)) => (0..=actual.len()).any(|skip| matches(rest, &actual[skip..])),
        Some((line, rest)) => actual
            .split_first()
            .is_some_and(|(a, tail)| a == line && matches(rest, tail)),
    }
}

/// The output to write back: the actual lines, with the guide's elision kept (its
/// lines before and after it counted from the ends).
fn regenerated(expected: &[&str], actual: &[String]) -> Vec<String> {
    let Some(at) = expected.iter().position(|l| *l == ELISION) else {
        return actual.to_vec();
    };
    let after = expected.len() - at - 1;
    if at + after >= actual.len() {
        return actual.to_vec();
    }
    let mut out: Vec<String> = actual[..at].to_vec();
    out.push(ELISION.to_string());
    out.extend_from_slice(&actual[actual.len() - after..]);
    out
}

#[test]
fn guide_commands_print_what_the_guide_shows() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/guide.md");
    let text = std::fs::read_to_string(&path).expect("guide");
    let lines: Vec<&str> = text.lines().collect();
    let found = examples(&lines);
    assert!(found.len() >= 10, "the guide's examples were not found");
    let cwd = scratch();
    let regenerate = std::env::var_os("BCWIRE_REGENERATE_GUIDE").is_some_and(|v| v == "1");
    let mut stale = Vec::new();
    let mut rewritten: Vec<String> = Vec::new();
    let mut at = 0;
    for e in &found {
        let expected: Vec<&str> = {
            let mut x = lines[e.first..e.end].to_vec();
            while x.last().is_some_and(|l| l.is_empty()) {
                x.pop();
            }
            x
        };
        let actual = run(&e.command, &cwd);
        rewritten.extend(lines[at..e.first].iter().map(|l| l.to_string()));
        if matches(&expected, &actual) {
            rewritten.extend(lines[e.first..e.end].iter().map(|l| l.to_string()));
        } else {
            stale.push(e.command.clone());
            rewritten.extend(regenerated(&expected, &actual));
        }
        at = e.end;
    }
    rewritten.extend(lines[at..].iter().map(|l| l.to_string()));
    if regenerate {
        let mut new = rewritten.join("\n");
        new.push('\n');
        if new != text {
            std::fs::write(&path, new).expect("rewrite the guide");
        }
        return;
    }
    assert!(
        stale.is_empty(),
        "docs/guide.md shows other output than these commands print now \
         (BCWIRE_REGENERATE_GUIDE=1 rewrites it):\n{}",
        stale.join("\n")
    );
}

#[test]
fn elisions_match_any_lines() {
    let a: Vec<String> = ["x", "y", "z"].iter().map(|s| s.to_string()).collect();
    assert!(matches(&["x", ELISION, "z"], &a));
    assert!(matches(&["x", "y", "z", ELISION], &a));
    assert!(!matches(&["x", "z"], &a));
    assert!(!matches(&["x", ELISION, "y"], &a));
    assert_eq!(regenerated(&["x", ELISION], &a), ["x", ELISION]);
    assert_eq!(
        words("decode 'a b' \"c\" d"),
        ["decode", "a b", "c", "d"].map(String::from)
    );
}
