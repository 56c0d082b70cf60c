//! `info`, `decode`, `show`, `stats` and `flows`: capture in, report out.

use super::{cut, Output};
use crate::cli::{
    DecodeArgs, DecodeFormat, FlowsArgs, InfoArgs, InputArgs, ShowArgs, StatsArgs, TableOrJson,
};
use crate::game::ships::ShipCatalog;
use crate::pipeline::filter::{parse_duration_ns, Filter};
use crate::pipeline::record::{PacketBody, PacketRecord};
use crate::pipeline::summary::CaptureSummary;
use crate::pipeline::{Config, Control, Detail, NullSink, Pipeline, Sink};
use crate::report::decode::{packet_csv, packet_lines, LineContext, CSV_HEADER};
use crate::report::info;
use crate::report::json_stream;
use crate::report::names::Names;
use crate::report::stats::Stats;
use crate::report::term::Palette;
use anyhow::Result;
use serde_json::{json, Value as Json};
use std::io::Write;

/// Pipeline configuration from the shared input options.
pub fn config(input: &InputArgs) -> Result<Config> {
    let ships = match &input.ships {
        Some(path) => ShipCatalog::load_file(path)
            .map_err(|e| anyhow::anyhow!("cannot use ship layout file {e}"))?,
        None => ShipCatalog::stock(),
    };
    Ok(Config {
        game_port: input.port,
        ships,
        read_ahead: true,
        front_thread: true,
    })
}

/// Run one capture through the pipeline, with a progress bar for long inputs on a
/// terminal and, with `-v`, every warning on stderr.
pub fn run_file(
    path: &str,
    config: &Config,
    sink: &mut dyn Sink,
    out: Output,
) -> Result<CaptureSummary> {
    let input = super::progress::open(path, out.quiet || !out.progress)?;
    let mut observed = super::progress::Observed {
        inner: sink,
        progress: input.progress.as_ref(),
        verbose: out.verbose > 0,
        seen: 0,
    };
    let mut config = config.clone();
    // Standard input may be a live capture: hand each frame on as soon as it arrives.
    config.read_ahead &= path != "-";
    let summary = Pipeline::new(config).run(input.reader, &mut observed);
    if let Some(p) = &input.progress {
        p.finish();
    }
    summary
}

pub fn warn_problems(path: &str, s: &CaptureSummary, out: Output) {
    if out.quiet {
        return;
    }
    for p in &s.problems {
        eprintln!("bcwire: warning: {path}: {p}");
    }
}

pub fn info(a: InfoArgs, out: Output, w: &mut dyn Write) -> Result<i32> {
    let cfg = config(&a.input)?;
    let pal = Palette::new(out.color);
    let mut all = Vec::new();
    for path in &a.files {
        let s = run_file(path, &cfg, &mut NullSink, out)?;
        match a.format {
            TableOrJson::Table => {
                if a.files.len() > 1 {
                    writeln!(w, "{}", pal.heading(path))?;
                }
                write!(w, "{}", info::render_info(path, &s, pal))?;
            }
            TableOrJson::Json => {
                all.push(info::info_json(Some(path), &s));
            }
        }
    }
    if a.format == TableOrJson::Json {
        // One shape for one file or many.
        let j = json!({
            "schema_version": crate::report::json::SCHEMA_VERSION,
            "files": all,
        });
        writeln!(w, "{}", json_stream::to_pretty_string(&j))?;
    }
    Ok(0)
}

pub fn flows(a: FlowsArgs, out: Output, w: &mut dyn Write) -> Result<i32> {
    let cfg = config(&a.input)?;
    let s = run_file(&a.file, &cfg, &mut NullSink, out)?;
    warn_problems(&a.file, &s, out);
    match a.format {
        TableOrJson::Table => write!(w, "{}", info::render_flows(&s, Palette::new(out.color)))?,
        TableOrJson::Json => writeln!(
            w,
            "{}",
            json_stream::to_pretty_string(&info::flows_json(&s))
        )?,
    }
    Ok(0)
}

/// Streams decoded records to the output in the chosen format.
struct DecodeSink<'w> {
    w: &'w mut dyn Write,
    format: DecodeFormat,
    filter: Filter,
    hex: bool,
    palette: Palette,
    first_ts_ns: Option<i64>,
    written: u64,
    game_packets: u64,
    gamespy_packets: u64,
    messages: u64,
    warnings: u64,
    /// The record being written, reused.
    line: Vec<u8>,
    /// The JSON writer, which keeps the key text of the fields objects it has seen.
    json: json_stream::PacketWriter,
    /// `--fields`: only these values.
    select: Option<crate::report::select::Selection>,
}

impl DecodeSink<'_> {
    fn keep(&self, p: &PacketRecord, names: &dyn Names) -> bool {
        let first = self.first_ts_ns.unwrap_or(p.ts_ns);
        if !self.filter.keep_packet(p, first, names) {
            return false;
        }
        match &p.body {
            PacketBody::GameSpy { .. } => self.filter.selects_all_messages(),
            PacketBody::Game(g) => g
                .messages
                .iter()
                .any(|m| self.filter.keep_message(m, p.session, names)),
        }
    }
}

impl Sink for DecodeSink<'_> {
    fn packet(&mut self, p: &PacketRecord, names: &dyn Names) -> Result<Control> {
        let first = *self.first_ts_ns.get_or_insert(p.ts_ns);
        if !self.keep(p, names) {
            return Ok(Control::Continue);
        }
        match &p.body {
            PacketBody::Game(g) => {
                self.game_packets += 1;
                self.messages += g.messages.len() as u64;
                self.warnings += g.warnings.len() as u64
                    + g.messages
                        .iter()
                        .map(|m| m.warnings.len() as u64)
                        .sum::<u64>();
            }
            PacketBody::GameSpy { .. } => self.gamespy_packets += 1,
        }
        let filter = &self.filter;
        let keep =
            |m: &crate::pipeline::record::MessageRecord| filter.keep_message(m, p.session, names);
        let describe = |id: u32| names.describe_object(p.session, id);
        if let Some(sel) = &self.select {
            let client = names.client_name(p.session, p.client);
            let cx = crate::report::select::Context {
                packet: p,
                client_name: client.as_deref(),
                describe: &describe,
            };
            match self.format {
                DecodeFormat::Csv => {
                    if self.written == 0 {
                        writeln!(self.w, "{}", sel.csv_header())?;
                    }
                    let mut rows = String::new();
                    sel.csv_rows(&mut self.json, &cx, &keep, &mut rows);
                    self.w.write_all(rows.as_bytes())?;
                }
                _ => {
                    self.line.clear();
                    sel.json_lines(&mut self.json, &cx, &keep, &mut self.line);
                    self.w.write_all(&self.line)?;
                }
            }
            self.written += 1;
            return Ok(Control::Continue);
        }
        match self.format {
            DecodeFormat::Table => {
                let cx = LineContext {
                    first_ts_ns: first,
                    names,
                    palette: self.palette,
                };
                self.w.write_all(packet_lines(p, &keep, &cx).as_bytes())?;
            }
            DecodeFormat::Csv => {
                if self.written == 0 {
                    writeln!(self.w, "{CSV_HEADER}")?;
                }
                self.w
                    .write_all(packet_csv(p, &keep, &describe).as_bytes())?;
            }
            // Written by parquet_cmd, which has a sink of its own.
            #[cfg(feature = "parquet")]
            DecodeFormat::Parquet => {}
            DecodeFormat::Jsonl | DecodeFormat::Json => {
                let line = &mut self.line;
                line.clear();
                if self.format == DecodeFormat::Json {
                    line.extend_from_slice(if self.written == 0 { b"[\n" } else { b",\n" });
                }
                let all = filter.selects_all_messages();
                self.json.write_packet(
                    line,
                    p,
                    self.hex,
                    names.client_name(p.session, p.client).as_deref(),
                    &describe,
                    &|m| all || keep(m),
                );
                if self.format == DecodeFormat::Jsonl {
                    line.push(b'\n');
                }
                self.w.write_all(line)?;
            }
        }
        self.written += 1;
        Ok(Control::Continue)
    }
}

pub fn decode(a: DecodeArgs, out: Output, w: &mut dyn Write) -> Result<i32> {
    #[cfg(feature = "parquet")]
    if a.format == DecodeFormat::Parquet {
        return super::parquet_cmd::decode_parquet(&a, out, w);
    }
    if a.output.is_some() || a.out_dir.is_some() || !a.more.is_empty() {
        anyhow::bail!("-o, --out-dir and more than one capture go with --format parquet");
    }
    let cfg = config(&a.input)?;
    let filter = Filter::from_spec(&super::filter_spec(&a.filter))?;
    let spool = cut::prepare(&a.file, &a.write)?;
    let path = spool.as_ref().map_or_else(|| a.file.clone(), |s| s.path());
    // With `-w -` the capture takes standard output; the report goes nowhere.
    let mut nowhere = std::io::sink();
    let report: &mut dyn Write = if cut::to_stdout(&a.write) {
        &mut nowhere
    } else {
        &mut *w
    };
    let select = if a.fields.is_empty() {
        None
    } else {
        if !matches!(a.format, DecodeFormat::Csv | DecodeFormat::Jsonl) {
            anyhow::bail!("--fields writes CSV or JSON Lines: use --format csv or --format jsonl");
        }
        Some(crate::report::select::Selection::parse(&a.fields).map_err(anyhow::Error::msg)?)
    };
    let mut sink = DecodeSink {
        w: report,
        format: a.format,
        filter,
        hex: a.hex,
        palette: Palette::new(out.color),
        first_ts_ns: None,
        written: 0,
        game_packets: 0,
        gamespy_packets: 0,
        messages: 0,
        warnings: 0,
        line: Vec::new(),
        json: json_stream::PacketWriter::default(),
        select,
    };
    let mut picked = Vec::new();
    let mut s = if a.write.write.is_some() {
        let rule = cut::Rule::Filter(sink.filter.clone());
        let mut sel = cut::Selecting::new(&mut sink, rule, a.write.annotate);
        let s = run_file(&path, &cfg, &mut sel, out)?;
        picked = sel.picked;
        s
    } else {
        run_file(&path, &cfg, &mut sink, out)?
    };
    warn_problems(&a.file, &s, out);
    if matches!(a.format, DecodeFormat::Jsonl | DecodeFormat::Json) && a.fields.is_empty() {
        // The session list is written one session at a time, in place of an empty
        // list: a tree of up to MAX_SESSIONS_LISTED sessions would be the largest
        // thing decode ever holds in memory.
        let sessions = std::mem::take(&mut s.sessions);
        let summary = json!({
            "type": "summary",
            "schema_version": crate::report::json::SCHEMA_VERSION,
            "frames": s.frames,
            "packets": sink.written,
            "game_packets": sink.game_packets,
            "gamespy_packets": sink.gamespy_packets,
            "messages": sink.messages,
            "warnings": sink.warnings,
            "capture": info::info_json(None, &s),
        });
        if a.format == DecodeFormat::Json {
            sink.w
                .write_all(if sink.written == 0 { b"[\n" } else { b",\n" })?;
        }
        write_with_sessions(&mut *sink.w, &summary, &sessions)?;
        if a.format == DecodeFormat::Json {
            sink.w.write_all(b"\n]\n")?;
        } else {
            sink.w.write_all(b"\n")?;
        }
    }
    sink.w.flush()?;
    cut::finish(&path, &a.file, &a.write, &mut picked, w, out.quiet)?;
    Ok(0)
}

/// Write `record` (whose one `"sessions"` key holds an empty list) with `sessions` in
/// that list, serializing one session's tree at a time.
fn write_with_sessions(
    w: &mut dyn Write,
    record: &Json,
    sessions: &[crate::pipeline::summary::SessionSummary],
) -> Result<()> {
    const EMPTY: &str = "\"sessions\":[]";
    let mut text = Vec::new();
    json_stream::write_value(&mut text, record, false);
    let text = String::from_utf8(text)?;
    // Quotes inside string values are escaped, so this can only be the key.
    let Some(at) = text.find(EMPTY) else {
        w.write_all(text.as_bytes())?;
        return Ok(());
    };
    w.write_all(&text.as_bytes()[..at])?;
    w.write_all(b"\"sessions\":[")?;
    for (k, s) in sessions.iter().enumerate() {
        if k > 0 {
            w.write_all(b",")?;
        }
        let mut one = Vec::new();
        json_stream::write_value(&mut one, &info::session_json(s), false);
        w.write_all(&one)?;
    }
    w.write_all(b"]")?;
    w.write_all(&text.as_bytes()[at + EMPTY.len()..])?;
    Ok(())
}

struct ShowSink<'w> {
    w: &'w mut dyn Write,
    frame: Option<u64>,
    filter: Filter,
    limit: usize,
    shown: usize,
    palette: Palette,
    first_ts_ns: Option<i64>,
}

impl Sink for ShowSink<'_> {
    fn packet(&mut self, p: &PacketRecord, names: &dyn Names) -> Result<Control> {
        let first = *self.first_ts_ns.get_or_insert(p.ts_ns);
        let selected = match self.frame {
            Some(f) => p.frame == f,
            None => {
                self.filter.keep_packet(p, first, names)
                    && match &p.body {
                        PacketBody::Game(g) => g
                            .messages
                            .iter()
                            .any(|m| self.filter.keep_message(m, p.session, names)),
                        PacketBody::GameSpy { .. } => self.filter.selects_all_messages(),
                    }
            }
        };
        if selected {
            if self.shown > 0 {
                writeln!(self.w)?;
            }
            self.w.write_all(
                crate::report::show::render_packet(p, first, names, self.palette).as_bytes(),
            )?;
            self.shown += 1;
        }
        let done = match self.frame {
            Some(f) => p.frame >= f,
            None => self.shown >= self.limit,
        };
        Ok(if done {
            Control::Stop
        } else {
            Control::Continue
        })
    }
}

pub fn show(a: ShowArgs, out: Output, w: &mut dyn Write) -> Result<i32> {
    let cfg = config(&a.input)?;
    let spool = cut::prepare(&a.file, &a.write)?;
    let path = spool.as_ref().map_or_else(|| a.file.clone(), |s| s.path());
    let mut nowhere = std::io::sink();
    let report: &mut dyn Write = if cut::to_stdout(&a.write) {
        &mut nowhere
    } else {
        &mut *w
    };
    let mut sink = ShowSink {
        w: report,
        frame: a.frame,
        filter: Filter::from_spec(&super::filter_spec(&a.filter))?,
        limit: a.limit.max(1),
        shown: 0,
        palette: Palette::new(out.color),
        first_ts_ns: None,
    };
    let mut picked = Vec::new();
    let s = if a.write.write.is_some() {
        let rule = match a.frame {
            Some(f) => cut::Rule::Frame(f),
            None => cut::Rule::Filter(Filter::from_spec(&super::filter_spec(&a.filter))?),
        };
        let mut sel = cut::Selecting::new(&mut sink, rule, a.write.annotate);
        let s = run_file(&path, &cfg, &mut sel, out)?;
        picked = sel.picked;
        s
    } else {
        run_file(&path, &cfg, &mut sink, out)?
    };
    warn_problems(&a.file, &s, out);
    let shown = sink.shown;
    cut::finish(&path, &a.file, &a.write, &mut picked, w, out.quiet)?;
    if shown == 0 {
        let what = match a.frame {
            Some(f) if f > s.frames => format!(
                "frame {f} is past the end of the capture ({} frames)",
                s.frames
            ),
            Some(f) => format!("frame {f} is not a Bridge Commander datagram (see `bcwire info`)"),
            None => "no datagram matches the filter".to_string(),
        };
        eprintln!("bcwire: {what}");
        return Ok(1);
    }
    Ok(0)
}

struct StatsSink<'a> {
    stats: &'a mut Stats,
    filter: Filter,
    first_ts_ns: Option<i64>,
}

impl Sink for StatsSink<'_> {
    fn packet(&mut self, p: &PacketRecord, names: &dyn Names) -> Result<Control> {
        let first = *self.first_ts_ns.get_or_insert(p.ts_ns);
        if self.filter.keep_packet(p, first, names) {
            self.stats.add(p, names);
        }
        Ok(Control::Continue)
    }

    /// Statistics count messages and read StateUpdate summaries, never fields; the
    /// filter here is packet-level only.
    fn detail(&self) -> Detail {
        Detail::Lean
    }
}

/// Read one capture into `stats`.
fn stats_file(
    path: &str,
    cfg: &Config,
    filter: &Filter,
    stats: &mut Stats,
    out: Output,
) -> Result<()> {
    let mut sink = StatsSink {
        stats,
        filter: filter.clone(),
        first_ts_ns: None,
    };
    let s = run_file(path, cfg, &mut sink, out)?;
    warn_problems(path, &s, out);
    for dir in [crate::diag::Direction::C2S, crate::diag::Direction::S2C] {
        stats.add_unacked(dir, s.totals[dir.index()].unacked);
    }
    stats.add_departures(&s.departures);
    Ok(())
}

pub fn stats(a: StatsArgs, out: Output, w: &mut dyn Write) -> Result<i32> {
    let cfg = config(&a.input)?;
    let interval = a.interval.as_deref().map(parse_duration_ns).transpose()?;
    let filter = Filter::from_spec(&super::filter_spec(&a.filter))?;
    let files = super::inputs::expand(&a.files, out)?;
    if a.write.write.is_some() {
        return stats_writing(&a, &files, &cfg, filter, interval, out, w);
    }
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(files.len());
    let stats = if interval.is_some() || workers <= 1 {
        // Rates over time are bucketed from the first frame of the whole input, so the
        // captures are read in order into one accumulator.
        let mut stats = Stats::new(a.by.map(super::stats_by), interval);
        for path in &files {
            stats_file(path, &cfg, &filter, &mut stats, out)?;
        }
        stats
    } else {
        stats_parallel(
            &files,
            workers,
            &cfg,
            &filter,
            a.by.map(super::stats_by),
            out,
        )?
    };
    match a.format {
        TableOrJson::Table => write!(w, "{}", stats.render(Palette::new(out.color)))?,
        TableOrJson::Json => writeln!(w, "{}", json_stream::to_pretty_string(&stats.to_json()))?,
    }
    Ok(0)
}

/// `stats -w`: one capture, whose counted frames are also written out.
fn stats_writing(
    a: &StatsArgs,
    files: &[String],
    cfg: &Config,
    filter: Filter,
    interval: Option<i64>,
    out: Output,
    w: &mut dyn Write,
) -> Result<i32> {
    let [file] = files else {
        anyhow::bail!(
            "-w writes the frames of one capture; {} were given",
            files.len()
        );
    };
    let spool = cut::prepare(file, &a.write)?;
    let path = spool.as_ref().map_or_else(|| file.clone(), |s| s.path());
    let mut stats = Stats::new(a.by.map(super::stats_by), interval);
    let mut sink = StatsSink {
        stats: &mut stats,
        filter: filter.clone(),
        first_ts_ns: None,
    };
    let mut sel = cut::Selecting::new(&mut sink, cut::Rule::Packets(filter), a.write.annotate);
    let s = run_file(&path, cfg, &mut sel, out)?;
    let mut picked = sel.picked;
    warn_problems(file, &s, out);
    for dir in [crate::diag::Direction::C2S, crate::diag::Direction::S2C] {
        stats.add_unacked(dir, s.totals[dir.index()].unacked);
    }
    if !cut::to_stdout(&a.write) {
        match a.format {
            TableOrJson::Table => write!(w, "{}", stats.render(Palette::new(out.color)))?,
            TableOrJson::Json => {
                writeln!(w, "{}", serde_json::to_string_pretty(&stats.to_json())?)?
            }
        }
        w.flush()?;
    }
    cut::finish(&path, file, &a.write, &mut picked, w, out.quiet)?;
    Ok(0)
}

/// Several captures on `workers` threads, each into its own accumulator, merged in file
/// order (the sums do not depend on which thread read what). Progress bars would
/// interleave, so workers draw none.
fn stats_parallel(
    files: &[String],
    workers: usize,
    cfg: &Config,
    filter: &Filter,
    by: Option<crate::report::stats::StatsBy>,
    out: Output,
) -> Result<Stats> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let worker_out = Output {
        progress: false,
        ..out
    };
    // Every core already reads a file: a reading thread per file would only compete.
    let cfg = &Config {
        front_thread: false,
        ..cfg.clone()
    };
    let results: Vec<Vec<(usize, Result<Stats>)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(path) = files.get(i) else { break };
                        let mut stats = Stats::new(by, None);
                        let r = stats_file(path, cfg, filter, &mut stats, worker_out);
                        done.push((i, r.map(|()| stats)));
                    }
                    done
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    });
    let mut by_index: Vec<(usize, Result<Stats>)> = results.into_iter().flatten().collect();
    by_index.sort_by_key(|(i, _)| *i);
    if by_index.len() != files.len() {
        anyhow::bail!("a worker thread stopped before reading its captures");
    }
    let mut total = Stats::new(by, None);
    for (_, r) in by_index {
        total.merge(&r?);
    }
    Ok(total)
}
