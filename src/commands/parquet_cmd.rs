//! `decode --format parquet`: game messages as Parquet rows (report::parquet), to one
//! file (`-o`) or one file per input in a directory (`--out-dir`, inputs read on all
//! cores, as `stats` reads many captures).

use super::run::{config, run_file, warn_problems};
use super::Output;
use crate::cli::DecodeArgs;
use crate::pipeline::filter::Filter;
use crate::pipeline::record::PacketRecord;
use crate::pipeline::{Config, Control, FieldTrees, Sink};
use crate::report::names::Names;
use crate::report::parquet::ParquetRows;
use anyhow::{bail, Context, Result};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

struct ParquetSink<W: Write + Send> {
    rows: ParquetRows<W>,
    filter: Filter,
    first_ts_ns: Option<i64>,
}

impl<W: Write + Send> Sink for ParquetSink<W> {
    fn selects_by_player(&self) -> bool {
        self.filter.waits_for_names()
    }

    fn packet(&mut self, p: &PacketRecord, names: &dyn Names) -> Result<Control> {
        let first = *self.first_ts_ns.get_or_insert(p.ts_ns);
        if !self.filter.keep_packet(p, first, names) {
            return Ok(Control::Continue);
        }
        let player = names.client_name(p.session, p.client);
        let filter = &self.filter;
        self.rows.packet(
            p,
            player.as_deref(),
            &|id| names.object_class(p.session, id),
            &|m| filter.keep_message(p, m, names),
        )?;
        Ok(Control::Continue)
    }

    /// Rows hold typed values only: the field trees are read only by a `-Y` expression.
    fn field_trees(&self) -> FieldTrees {
        self.filter.field_trees()
    }
}

/// Decodes `path` into a Parquet stream on `out`; returns the rows written.
fn write_one<W: Write + Send>(
    path: &str,
    cfg: &Config,
    filter: &Filter,
    out: W,
    o: Output,
) -> Result<(u64, W)> {
    let mut sink = ParquetSink {
        rows: ParquetRows::new(out)?,
        filter: filter.clone(),
        first_ts_ns: None,
    };
    let s = run_file(path, cfg, &mut sink, o)?;
    warn_problems(path, &s, cfg, o);
    let rows = sink.rows.rows();
    Ok((rows, sink.rows.finish()?))
}

fn write_file(path: &str, cfg: &Config, filter: &Filter, dest: &Path, o: Output) -> Result<u64> {
    let file = crate::outfile::OutputFile::create(dest)?;
    let (rows, w) = write_one(
        path,
        cfg,
        filter,
        BufWriter::with_capacity(1 << 16, file),
        o,
    )?;
    w.into_inner()
        .map_err(|e| e.into_error())
        .with_context(|| format!("writing {}", dest.display()))?
        .commit()?;
    Ok(rows)
}

/// `DIR/<input file stem>.parquet`.
fn dest_in(dir: &Path, input: &str) -> PathBuf {
    let stem = Path::new(input)
        .file_stem()
        .map_or_else(|| "stdin".into(), |s| s.to_string_lossy().into_owned());
    dir.join(format!("{stem}.parquet"))
}

pub fn decode_parquet(a: &DecodeArgs, out: Output, w: &mut dyn Write) -> Result<i32> {
    let cfg = config(&a.input)?;
    let filter = Filter::from_spec(&super::filter_spec(&a.filter))?;
    if a.hex {
        bail!("--hex does not go with --format parquet (rows hold typed values)");
    }
    if let Some(dir) = &a.out_dir {
        let files = super::inputs::expand(&a.files, out).files;
        let dests: Vec<PathBuf> = files.iter().map(|f| dest_in(dir, f)).collect();
        for d in &dests {
            refuse_inputs(d, &files, &a.input)?;
        }
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the directory {}", dir.display()))?;
        for (i, d) in dests.iter().enumerate() {
            if dests[..i].contains(d) {
                bail!(
                    "two inputs would both be written to {} (same file name)",
                    d.display()
                );
            }
        }
        let results = write_all(&files, &dests, &cfg, &filter, out);
        for ((dest, rows), input) in dests.iter().zip(results).zip(&files) {
            let rows = rows.with_context(|| input.clone())?;
            writeln!(w, "{}: {rows} rows", dest.display())?;
        }
        return Ok(0);
    }
    let [file] = a.files.as_slice() else {
        bail!("several captures need --out-dir DIR (one Parquet file each)");
    };
    let Some(dest) = &a.output else {
        bail!("--format parquet writes a file: give -o FILE (or --out-dir DIR)");
    };
    refuse_inputs(dest, std::slice::from_ref(file), &a.input)?;
    if dest.as_os_str() == "-" {
        let stdout = std::io::stdout();
        let (_, mut s) = write_one(file, &cfg, &filter, BufWriter::new(stdout), out)?;
        s.flush()?;
        return Ok(0);
    }
    let rows = write_file(file, &cfg, &filter, dest, out)?;
    writeln!(w, "{}: {rows} rows", dest.display())?;
    Ok(0)
}

/// Refuses an output that is one of the captures or the ships file.
fn refuse_inputs(dest: &Path, files: &[String], input: &crate::cli::InputArgs) -> Result<()> {
    let inputs: Vec<&Path> = files
        .iter()
        .map(Path::new)
        .chain(input.ships.as_deref())
        .collect();
    crate::outfile::refuse_inputs("-o", dest, &inputs)
}

/// Every input read at once, one per core (rayon's pool; each a whole file, its own
/// reader), results in input order.
fn write_all(
    files: &[String],
    dests: &[PathBuf],
    cfg: &Config,
    filter: &Filter,
    out: Output,
) -> Vec<Result<u64>> {
    use rayon::prelude::*;
    let worker_out = Output {
        progress: false,
        ..out
    };
    // Every core already reads a file: a reading thread per file would only compete.
    let alone = rayon::current_num_threads() == 1 || files.len() == 1;
    let cfg = &Config {
        front_thread: alone && cfg.front_thread,
        ..cfg.clone()
    };
    files
        .par_iter()
        .zip(dests)
        .with_max_len(1)
        .map(|(path, dest)| write_file(path, cfg, filter, dest, worker_out))
        .collect()
}
