//! `bcwire report`: the HTML page of one capture, or of two side by side.

use super::run::config;
use super::Output;
use crate::cli::ReportArgs;
use crate::pipeline::filter::{Filter, FilterSpec};
use crate::report::html;
use anyhow::Result;
use std::io::Write;

pub fn report(a: ReportArgs, out: Output, w: &mut dyn Write) -> Result<i32> {
    let output = std::path::Path::new(&a.output);
    let inputs: Vec<&std::path::Path> = [Some(a.a.as_str()), a.b.as_deref()]
        .into_iter()
        .flatten()
        .map(std::path::Path::new)
        .chain(a.input.ships.as_deref())
        .collect();
    crate::outfile::refuse_inputs("-o", output, &inputs)?;
    let cfg = config(&a.input)?;
    let two = a.b.is_some();
    let filter = Filter::from_spec_with(
        &FilterSpec {
            display: a.display_filter.clone(),
            ..FilterSpec::default()
        },
        &cfg.ships,
    )?;
    let collect = |path: &str, fingerprints: bool| -> Result<(html::CaptureReport, Filter)> {
        let filter = super::run::file_filter(path, &filter, &cfg, out)?;
        Ok((
            html::collect_file_filtered(path, &cfg, fingerprints, &filter)?,
            filter,
        ))
    };
    let (first, first_filter) = collect(&a.a, two)?;
    let mut captures = vec![first];
    let mut filters = vec![first_filter];
    if let Some(b) = &a.b {
        let (c, f) = collect(b, true)?;
        captures.push(c);
        filters.push(f);
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
                    super::run::no_game_traffic(&c.summary, cfg.game_port)
                );
            }
        }
    }
    let diff = match captures.as_slice() {
        [x, y] => Some(html::compare_files(x, y, &cfg, [&filters[0], &filters[1]])?),
        _ => None,
    };
    let page = html::render(&captures, diff.as_ref());
    if a.output == "-" {
        w.write_all(page.as_bytes())?;
    } else {
        crate::outfile::write_whole(output, page.as_bytes())?;
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
