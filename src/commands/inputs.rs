//! Command-line inputs: files, `-`, and directories of captures.

use super::Output;
use anyhow::{Context, Result};
use std::io::Read;
use std::path::Path;

/// Magic numbers of the capture formats bcwire reads (pcap in both byte orders and
/// resolutions, pcapng's section header block type).
const CAPTURE_MAGICS: [[u8; 4]; 5] = [
    [0xD4, 0xC3, 0xB2, 0xA1],
    [0xA1, 0xB2, 0xC3, 0xD4],
    [0x4D, 0x3C, 0xB2, 0xA1],
    [0xA1, 0xB2, 0x3C, 0x4D],
    [0x0A, 0x0D, 0x0D, 0x0A],
];

/// Whether a file starts like a capture, plain or compressed with gzip, zstd or lz4
/// (the format is known from its bytes, never its name: a compressed file is looked
/// into as the reader would read it).
fn looks_like_capture(path: &Path) -> bool {
    let mut head = [0u8; 4];
    if std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_err()
    {
        return false;
    }
    if CAPTURE_MAGICS.contains(&head) {
        return true;
    }
    let Some(compression) = crate::capture::Compression::detect(&head) else {
        return false;
    };
    let mut inner = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|f| compression.decoder(Box::new(f)))
        .and_then(|mut d| d.read_exact(&mut inner))
        .is_ok()
        && CAPTURE_MAGICS.contains(&inner)
}

/// Files stay as given; a directory becomes the capture files under it (recursively),
/// sorted by path. Other files found there are skipped (listed under `-v`, counted
/// otherwise). A directory that cannot be read or holds no capture is reported and
/// counts as a failed input; the rest go on.
pub fn expand(args: &[String], out: Output) -> Expanded {
    let mut x = Expanded::default();
    for arg in args {
        let path = Path::new(arg);
        if arg == "-" || !path.is_dir() {
            x.files.push(arg.clone());
            continue;
        }
        let mut found = Vec::new();
        let mut skipped = Vec::new();
        if let Err(e) = walk(path, &mut found, &mut skipped) {
            report_failure(&e);
            x.failed = true;
            continue;
        }
        found.sort();
        skipped.sort();
        if !out.quiet && !skipped.is_empty() {
            if out.verbose > 0 {
                for s in &skipped {
                    eprintln!("bcwire: {s}: skipped, not a pcap or pcapng file");
                }
            } else {
                eprintln!(
                    "bcwire: {arg}: {} file(s) that are not captures skipped (-v lists them)",
                    skipped.len()
                );
            }
        }
        if found.is_empty() {
            report_failure(&anyhow::anyhow!(
                "{arg}: the directory holds no pcap or pcapng file"
            ));
            x.failed = true;
        }
        x.files.extend(found);
    }
    x
}

/// The inputs of a command after [`expand`].
#[derive(Debug, Default)]
pub struct Expanded {
    pub files: Vec<String>,
    /// An argument could not be used (reported already).
    pub failed: bool,
}

fn walk(dir: &Path, found: &mut Vec<String>, skipped: &mut Vec<String>) -> Result<()> {
    let entries = std::fs::read_dir(dir)
        .with_context(|| format!("{}: cannot list the directory", dir.display()))?;
    for e in entries.flatten() {
        let p = e.path();
        // Symbolic links are not followed into directories: a link back up would loop.
        let Ok(kind) = e.file_type() else { continue };
        if kind.is_dir() {
            walk(&p, found, skipped)?;
        } else if p.is_file() {
            let name = p.to_string_lossy().into_owned();
            if looks_like_capture(&p) {
                found.push(name);
            } else {
                skipped.push(name);
            }
        }
    }
    Ok(())
}

/// Print why one input failed (the others go on).
pub fn report_failure(e: &anyhow::Error) {
    eprintln!("bcwire: error: {e:#}");
}

/// Whether an error is the output going away (a closed pipe): that ends the run quietly
/// instead of being one more failed input.
pub fn is_output_gone(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Run `each` on every file; a failing file is reported and the next one read. Returns
/// whether any failed; a closed output stops at once with its error.
pub fn for_each(files: &[String], mut each: impl FnMut(&str) -> Result<Flow>) -> Result<bool> {
    let mut failed = false;
    for path in files {
        match each(path) {
            Ok(Flow::Next) => {}
            Ok(Flow::Stop) => break,
            Err(e) if is_output_gone(&e) => return Err(e),
            Err(e) => {
                report_failure(&e);
                failed = true;
            }
        }
    }
    Ok(failed)
}

/// Whether [`for_each`] reads on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Next,
    Stop,
}
