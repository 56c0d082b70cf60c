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

/// Whether a file starts like a capture (the format is known from its bytes, never its
/// name).
fn looks_like_capture(path: &Path) -> bool {
    let mut head = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok()
        && CAPTURE_MAGICS.contains(&head)
}

/// Files stay as given; a directory becomes its capture files (not recursing), sorted by
/// name. Other files in a directory are skipped and counted on stderr.
pub fn expand(args: &[String], out: Output) -> Result<Vec<String>> {
    let mut files = Vec::new();
    for arg in args {
        let path = Path::new(arg);
        if arg == "-" || !path.is_dir() {
            files.push(arg.clone());
            continue;
        }
        let mut found: Vec<String> = std::fs::read_dir(path)
            .with_context(|| format!("{arg}: cannot list the directory"))?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        found.sort();
        let total = found.len();
        found.retain(|p| looks_like_capture(Path::new(p)));
        if !out.quiet && found.len() < total {
            eprintln!(
                "bcwire: {arg}: {} file(s) that are not captures skipped",
                total - found.len()
            );
        }
        if found.is_empty() {
            anyhow::bail!("{arg}: the directory holds no pcap or pcapng file");
        }
        files.extend(found);
    }
    Ok(files)
}
