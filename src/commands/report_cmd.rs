//! `bcwire report`: the HTML page of one capture, or of two side by side.

use super::capture_cmds::config;
use super::Output;
use crate::cli::ReportArgs;
use crate::report::html;
use anyhow::{Context, Result};
use std::io::Write;

pub fn report(a: ReportArgs, out: Output, w: &mut dyn Write) -> Result<i32> {
    let cfg = config(&a.input)?;
    let two = a.b.is_some();
    let mut captures = vec![html::collect_file(&a.a, &cfg, two)?];
    if let Some(b) = &a.b {
        captures.push(html::collect_file(b, &cfg, true)?);
    }
    if !out.quiet {
        for c in &captures {
            for p in &c.summary.problems {
                eprintln!("bcwire: warning: {}: {p}", c.name);
            }
            if c.summary.frames > 0 && c.summary.has_no_game_traffic() {
                eprintln!(
                    "bcwire: {}: {}",
                    c.name,
                    super::capture_cmds::no_game_traffic(&c.summary, cfg.game_port)
                );
            }
        }
    }
    let diff = match captures.as_slice() {
        [x, y] => Some(html::compare_files(x, y, &cfg)?),
        _ => None,
    };
    let page = html::render(&captures, diff.as_ref());
    if a.output == "-" {
        w.write_all(page.as_bytes())?;
    } else {
        std::fs::write(&a.output, &page).with_context(|| format!("writing {}", a.output))?;
        if !out.quiet {
            eprintln!(
                "bcwire: wrote {} ({} KiB)",
                a.output,
                page.len().div_ceil(1024)
            );
        }
    }
    Ok(0)
}
