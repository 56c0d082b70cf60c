//! `info`, `decode`, `show`, `stats` and `flows`: capture in, report out.
//!
//! Why this file is long: about 1,060 lines; the five commands share their sinks, input expansion, `-w`
//! selection and summaries; each command body is short.

use super::inputs::{for_each, Flow};
use super::run::{config, count_selected, file_filter, no_game_traffic, run_file, warn_problems};
use super::{cut, Output};
use crate::cli::{DecodeArgs, DecodeFormat, FlowsArgs, InfoArgs, ShowArgs, StatsArgs, TableOrJson};
use crate::pipeline::filter::{parse_duration_ns, ClientAbsent, Filter};
use crate::pipeline::record::{PacketBody, PacketRecord};
use crate::pipeline::summary::CaptureSummary;
use crate::pipeline::{Config, Control, FieldTrees, NullSink, Sink};
use crate::report::decode::{csv_header, packet_csv, packet_hex, packet_lines, LineContext};
use crate::report::info;
use crate::report::json_stream;
use crate::report::names::Names;
use crate::report::schema;
use crate::report::stats::Stats;
use crate::report::term::Palette;
use crate::report::timefmt::{seconds_with, Clock};
use anyhow::Result;
use std::io::Write;

/// Exit status after every input was tried: trouble if any failed.
fn status(failed: bool) -> i32 {
    if failed {
        super::EXIT_TROUBLE
    } else {
        0
    }
}

/// Whether records are flushed one by one: asked for, or reading standard input (which
/// may be a live capture).
fn line_buffered(files: &[String], out: Output) -> bool {
    out.line_buffered || files.iter().any(|f| f == "-")
}

pub fn info(a: InfoArgs, out: Output, w: &mut dyn Write) -> Result<i32> {
    let cfg = config(&a.input)?;
    let pal = Palette::new(out.color);
    let inputs = super::inputs::expand(&a.files, out);
    let several = inputs.files.len() > 1;
    let mut all = Vec::new();
    let mut read = 0;
    let failed = for_each(&inputs.files, |path| {
        let s = match run_file(path, &cfg, &mut NullSink, out) {
            Ok(s) => s,
            Err(e) => {
                if a.format == TableOrJson::Json {
                    all.push(schema::InfoFile::Failed(schema::FileError {
                        file: path.to_string(),
                        error: format!("{e:#}"),
                    }));
                }
                return Err(e);
            }
        };
        read += 1;
        match a.format {
            TableOrJson::Table => {
                if several {
                    writeln!(w, "{}", pal.heading(path))?;
                }
                write!(w, "{}", info::render_info(path, &s, pal))?;
                if s.frames > 0 && s.has_no_game_traffic() {
                    writeln!(w, "{}", pal.warn(&no_game_traffic(&s, cfg.game_port)))?;
                }
            }
            TableOrJson::Json => {
                all.push(schema::InfoFile::Read(Box::new(info::capture_doc(
                    Some(path),
                    &s,
                ))));
            }
        }
        Ok(Flow::Next)
    })?;
    // Nothing on stdout when no input could be read: the errors say it all.
    if a.format == TableOrJson::Json && read > 0 {
        // One shape for one file or many.
        let doc = schema::InfoDocument {
            schema_version: crate::report::json::SCHEMA_VERSION,
            files: all,
        };
        writeln!(w, "{}", json_stream::doc_to_pretty_string(&doc)?)?;
    }
    Ok(status(failed || inputs.failed))
}

pub fn flows(a: FlowsArgs, out: Output, w: &mut dyn Write) -> Result<i32> {
    let cfg = config(&a.input)?;
    let pal = Palette::new(out.color);
    let inputs = super::inputs::expand(&a.files, out);
    let several = inputs.files.len() > 1;
    let mut all = Vec::new();
    let failed = for_each(&inputs.files, |path| {
        let s = run_file(path, &cfg, &mut NullSink, out)?;
        warn_problems(path, &s, &cfg, out);
        match a.format {
            TableOrJson::Table => {
                if several {
                    writeln!(w, "{}", pal.heading(path))?;
                }
                write!(
                    w,
                    "{}",
                    info::render_flows(&s, pal, super::time_format(a.time_format))
                )?
            }
            TableOrJson::Json => {
                all.push(schema::FlowsOfFile {
                    file: path.to_string(),
                    flows: info::flows_doc(&s),
                });
            }
        }
        Ok(Flow::Next)
    })?;
    if a.format == TableOrJson::Json && !all.is_empty() {
        let doc = match all.pop() {
            Some(one) if !several => schema::FlowsOutput::One(one.flows),
            last => {
                all.extend(last);
                schema::FlowsOutput::Several(all)
            }
        };
        writeln!(w, "{}", json_stream::doc_to_pretty_string(&doc)?)?;
    }
    Ok(status(failed || inputs.failed))
}

/// Streams decoded records to the output in the chosen format.
struct DecodeSink<'w> {
    w: &'w mut dyn Write,
    format: DecodeFormat,
    filter: Filter,
    hex: bool,
    palette: Palette,
    first_ts_ns: Option<i64>,
    clock: Clock,
    /// Flush after every record.
    flush: bool,
    /// Stop after this many records (all inputs together).
    count: Option<u64>,
    /// `-w`: `-c` counts the frames written, not the rows printed.
    count_frames: bool,
    /// Rows (or, with `count_frames`, records) written for all inputs (`-c`).
    written_all: u64,
    /// Items written for all inputs, summaries included (JSON array separators, the
    /// CSV header).
    items: u64,
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
    /// Object descriptions of recent records.
    descriptions: crate::report::names::Descriptions,
    /// `-q`: no records (as tshark's `-q` prints no packet lines); JSON keeps its
    /// summary, `-w` and the exit status still work.
    quiet: bool,
}

impl DecodeSink<'_> {
    fn keep(&self, p: &PacketRecord, names: &dyn Names) -> bool {
        let first = self.first_ts_ns.unwrap_or(p.ts_ns);
        self.filter.keeps_record(p, first, names)
    }

    /// Start on the next input: times count from its own first frame.
    fn next_file(&mut self, filter: Filter) {
        self.filter = filter;
        self.first_ts_ns = None;
        self.clock = Clock::new(self.clock_format());
        self.written = 0;
        self.game_packets = 0;
        self.gamespy_packets = 0;
        self.messages = 0;
        self.warnings = 0;
    }

    fn clock_format(&self) -> crate::report::timefmt::TimeFormat {
        self.clock.format()
    }

    fn done(&self) -> bool {
        self.count.is_some_and(|c| self.written_all >= c)
    }

    /// Write the JSON records gathered in `line`; due before anything else is written.
    fn write_pending(&mut self) -> std::io::Result<()> {
        if !self.line.is_empty() {
            self.w.write_all(&self.line)?;
            self.line.clear();
        }
        Ok(())
    }
}

/// JSON records gathered before they are written: the size of the output's buffer
/// (`commands::main`), so that a full block bypasses it.
const PENDING_JSON: usize = 1 << 16;

impl Sink for DecodeSink<'_> {
    fn selects_by_player(&self) -> bool {
        self.filter.waits_for_names()
    }

    fn packet(&mut self, p: &PacketRecord, names: &dyn Names) -> Result<Control> {
        self.first_ts_ns.get_or_insert(p.ts_ns);
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
        if self.quiet {
            self.written += 1;
            self.written_all += 1;
            return Ok(if self.done() {
                Control::Stop
            } else {
                Control::Continue
            });
        }
        let filter = &self.filter;
        let keep = |m: &crate::pipeline::record::MessageRecord| filter.keep_message(p, m, names);
        let descriptions = &self.descriptions;
        let describe = |id: u32| descriptions.describe(names, p.session, id);
        if let Some(sel) = &self.select {
            let cx = crate::report::select::Context {
                packet: p,
                names,
                first_ts_ns: self.first_ts_ns.unwrap_or(p.ts_ns),
            };
            // `-c N` counts the rows: one per selected message (or message-less
            // datagram); with `-w`, the frames.
            let left = self
                .count
                .filter(|_| !self.count_frames)
                .map(|c| c.saturating_sub(self.written_all));
            let rows = std::cell::Cell::new(0u64);
            let keep_row = |m: Option<&crate::pipeline::record::MessageRecord>| {
                let take = left.is_none_or(|l| rows.get() < l) && m.is_none_or(keep);
                if take {
                    rows.set(rows.get() + 1);
                }
                take
            };
            match self.format {
                DecodeFormat::Csv => {
                    if self.items == 0 {
                        writeln!(self.w, "{}", sel.csv_header(self.json.file.is_some()))?;
                    }
                    let mut text = String::new();
                    sel.csv_rows(&mut self.json, &cx, &keep_row, &mut text);
                    self.w.write_all(text.as_bytes())?;
                }
                _ => {
                    self.line.clear();
                    sel.json_lines(&mut self.json, &cx, &keep_row, &mut self.line);
                    self.write_pending()?;
                }
            }
            self.written += 1;
            self.written_all += if self.count_frames { 1 } else { rows.get() };
            self.items += 1;
            if self.flush {
                self.w.flush()?;
            }
            return Ok(if self.done() {
                Control::Stop
            } else {
                Control::Continue
            });
        }
        // `-c N` counts the output's rows: a line of the table or the CSV per message
        // (one for a message-less datagram), a JSON record per datagram.
        let left = self
            .count
            .filter(|_| !self.count_frames)
            .map(|c| c.saturating_sub(self.written_all));
        let rows = std::cell::Cell::new(0u64);
        let keep_line = |m: &crate::pipeline::record::MessageRecord| {
            let take = left.is_none_or(|l| rows.get() < l) && keep(m);
            if take {
                rows.set(rows.get() + 1);
            }
            take
        };
        match self.format {
            DecodeFormat::Table => {
                let time = self.clock.render(p.ts_ns);
                let cx = LineContext {
                    time: &time,
                    names,
                    palette: self.palette,
                };
                self.w
                    .write_all(packet_lines(p, &keep_line, &cx).as_bytes())?;
                if self.hex {
                    self.w.write_all(packet_hex(p).as_bytes())?;
                }
            }
            DecodeFormat::Csv => {
                if self.items == 0 {
                    writeln!(self.w, "{}", csv_header(self.hex, self.json.file.is_some()))?;
                }
                let time = seconds_with(p.ts_ns, self.clock.digits());
                let file = self.json.file.as_deref();
                self.w.write_all(
                    packet_csv(p, &keep_line, self.hex, &describe, &time, file).as_bytes(),
                )?;
            }
            // Written by parquet_cmd, which has a sink of its own.
            #[cfg(feature = "parquet")]
            DecodeFormat::Parquet => {}
            DecodeFormat::Jsonl | DecodeFormat::Json => {
                // Records gather in `line` and go out a block at a time: a block as
                // large as the output's buffer is written straight through it, not
                // copied into it (JSON Lines run to 2 GB per million frames).
                let line = &mut self.line;
                if self.format == DecodeFormat::Json {
                    line.extend_from_slice(if self.items == 0 { b"[\n" } else { b",\n" });
                }
                let all = filter.selects_all_messages();
                self.json.write_packet(
                    line,
                    p,
                    self.hex,
                    descriptions
                        .client_name(names, p.session, p.client)
                        .as_deref(),
                    &describe,
                    &|m| all || keep(m),
                );
                if self.format == DecodeFormat::Jsonl {
                    line.push(b'\n');
                }
                if self.flush || line.len() >= PENDING_JSON {
                    self.write_pending()?;
                }
            }
        }
        let counted = match (self.format, &p.body) {
            _ if self.count_frames => 1,
            // The default CSV has a row per message and none for a datagram without.
            (DecodeFormat::Csv, _) => rows.get(),
            (DecodeFormat::Table, PacketBody::Game(g)) if !g.messages.is_empty() => rows.get(),
            _ => 1,
        };
        self.written += 1;
        self.written_all += counted;
        self.items += 1;
        if self.flush {
            self.w.flush()?;
        }
        Ok(if self.done() {
            Control::Stop
        } else {
            Control::Continue
        })
    }

    fn frame_read(&mut self, ts_ns: i64, ts_digits: u8) {
        self.clock.frame(ts_ns, ts_digits);
    }

    /// JSON is written from typed StateUpdates; `--fields` reads the trees' fields of
    /// the names its paths start from; tables, CSV and a `-Y` expression that reads
    /// fields read whole trees.
    fn field_trees(&self) -> FieldTrees {
        if self.filter.reads_fields() {
            return FieldTrees::All;
        }
        match &self.select {
            Some(select) => select
                .top_fields()
                .map_or(FieldTrees::All, FieldTrees::Only),
            None if matches!(self.format, DecodeFormat::Jsonl | DecodeFormat::Json) => {
                FieldTrees::ExceptCleanStateUpdates
            }
            None => FieldTrees::All,
        }
    }
}

pub fn decode(a: DecodeArgs, out: Output, w: &mut dyn Write) -> Result<i32> {
    #[cfg(feature = "parquet")]
    if a.format == DecodeFormat::Parquet {
        return super::parquet_cmd::decode_parquet(&a, out, w);
    }
    if a.output.is_some() || a.out_dir.is_some() {
        anyhow::bail!("-o and --out-dir go with --format parquet");
    }
    let cfg = config(&a.input)?;
    let filter = Filter::from_spec_with(&super::filter_spec(&a.filter), &cfg.ships)?;
    let inputs = super::inputs::expand(&a.files, out);
    let several = inputs.files.len() > 1;
    if a.write.write.is_some() && several {
        anyhow::bail!("-w writes the frames of one capture: give one input");
    }
    let pal = Palette::new(out.color);
    let first = inputs.files.first().cloned().unwrap_or_default();
    let spool = if a.write.write.is_some() && !first.is_empty() {
        cut::prepare(&first, a.input.ships.as_deref(), &a.write)?
    } else {
        None
    };
    let read_path = |path: &str| {
        spool
            .as_ref()
            .map_or_else(|| path.to_string(), |s| s.path())
    };
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
        filter: filter.clone(),
        hex: a.hex,
        palette: pal,
        first_ts_ns: None,
        clock: Clock::new(super::time_format(a.records.time_format)),
        flush: line_buffered(&inputs.files, out),
        count: a.records.count,
        count_frames: a.write.write.is_some(),
        written_all: 0,
        items: 0,
        written: 0,
        game_packets: 0,
        gamespy_packets: 0,
        messages: 0,
        warnings: 0,
        line: Vec::new(),
        json: json_stream::PacketWriter::new(&cfg.ships),
        descriptions: Default::default(),
        select,
        quiet: out.quiet,
    };
    let json = matches!(a.format, DecodeFormat::Jsonl | DecodeFormat::Json) && a.fields.is_empty();
    let mut picked = Vec::new();
    // Inputs without the `--client` asked for.
    let mut absent = 0;
    let failed = for_each(&inputs.files, |path| {
        let source = read_path(path);
        let f = match file_filter(&source, &filter, &cfg, out) {
            Ok(f) => f,
            // The client may be in the other inputs: this one has nothing to select.
            Err(e) if several && e.is::<ClientAbsent>() => {
                absent += 1;
                if !out.quiet {
                    eprintln!("bcwire: note: {e}; nothing selected from it");
                }
                return Ok(Flow::Next);
            }
            Err(e) => return Err(e),
        };
        sink.next_file(f);
        sink.json.file = several.then(|| path.to_string());
        if several && a.format == DecodeFormat::Table {
            writeln!(sink.w, "{}", pal.heading(path))?;
        }
        let run = if a.write.write.is_some() {
            let rule = cut::Rule::Filter(Box::new(sink.filter.clone()));
            let mut sel = cut::Selecting::new(&mut sink, rule, a.write.annotate);
            let s = run_file(&source, &cfg, &mut sel, out);
            picked = sel.picked;
            s
        } else {
            run_file(&source, &cfg, &mut sink, out)
        };
        // The records of a run that failed part way are still written.
        sink.write_pending()?;
        let mut s = run?;
        warn_problems(path, &s, &cfg, out);
        if json {
            write_decode_summary(&mut sink, &mut s, path, a.format)?;
        }
        Ok(if sink.done() { Flow::Stop } else { Flow::Next })
    })?;
    if a.format == DecodeFormat::Json && a.fields.is_empty() {
        sink.w
            .write_all(if sink.items == 0 { b"[\n]\n" } else { b"\n]\n" })?;
    }
    sink.w.flush()?;
    if a.write.write.is_some() && !first.is_empty() {
        cut::finish(
            &read_path(&first),
            &first,
            &a.write,
            &mut picked,
            w,
            out.quiet,
        )?;
    }
    // A client in none of the inputs is the mistake a single input makes an error of.
    let nowhere = absent > 0 && absent == inputs.files.len();
    if nowhere {
        eprintln!(
            "bcwire: error: --client: in none of the {} inputs",
            inputs.files.len()
        );
    }
    Ok(status(failed || inputs.failed || nowhere))
}

/// The `summary` record that closes one capture's records in JSON output.
fn write_decode_summary(
    sink: &mut DecodeSink,
    s: &mut CaptureSummary,
    path: &str,
    format: DecodeFormat,
) -> Result<()> {
    // The session list is written one session at a time, in place of an empty list: a
    // tree of up to MAX_SESSIONS_LISTED sessions would be the largest thing decode ever
    // holds in memory.
    let sessions = std::mem::take(&mut s.sessions);
    let summary = schema::SummaryRecord {
        r#type: schema::SummaryTag::Summary,
        schema_version: crate::report::json::SCHEMA_VERSION,
        file: path.to_string(),
        frames: s.frames,
        packets: sink.written,
        game_packets: sink.game_packets,
        gamespy_packets: sink.gamespy_packets,
        messages: sink.messages,
        warnings: sink.warnings,
        capture: info::capture_doc(None, s),
    };
    if format == DecodeFormat::Json {
        sink.w
            .write_all(if sink.items == 0 { b"[\n" } else { b",\n" })?;
    }
    write_with_sessions(&mut *sink.w, &summary, &sessions)?;
    sink.items += 1;
    if format == DecodeFormat::Jsonl {
        sink.w.write_all(b"\n")?;
    }
    if sink.flush {
        sink.w.flush()?;
    }
    Ok(())
}

/// Write `record` (whose one `"sessions"` key holds an empty list) with `sessions` in
/// that list, serializing one session's tree at a time.
fn write_with_sessions(
    w: &mut dyn Write,
    record: &schema::SummaryRecord,
    sessions: &[crate::pipeline::summary::SessionSummary],
) -> Result<()> {
    const EMPTY: &str = "\"sessions\":[]";
    let mut text = Vec::new();
    json_stream::write_doc(&mut text, record, false)?;
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
        json_stream::write_doc(&mut one, &info::session_doc(s), false)?;
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
    /// Trees printed at most.
    limit: usize,
    shown: usize,
    /// Stop reading after this many selected datagrams (none: read on, for `-w`).
    stop_after: Option<usize>,
    /// Datagrams selected, printed or not.
    matched: usize,
    palette: Palette,
    first_ts_ns: Option<i64>,
    flush: bool,
    /// `-t`: the heading's time format.
    clock: Option<Clock>,
}

impl Sink for ShowSink<'_> {
    fn selects_by_player(&self) -> bool {
        self.filter.waits_for_names()
    }

    fn packet(&mut self, p: &PacketRecord, names: &dyn Names) -> Result<Control> {
        let first = *self.first_ts_ns.get_or_insert(p.ts_ns);
        let selected = match self.frame {
            Some(f) => p.frame == f,
            None => self.filter.keeps_record(p, first, names),
        };
        if selected {
            self.matched += 1;
        }
        if selected && self.shown < self.limit {
            if self.shown > 0 {
                writeln!(self.w)?;
            }
            let time = self.clock.as_mut().map(|c| c.render(p.ts_ns));
            self.w.write_all(
                crate::report::show::render_packet(p, first, time.as_deref(), names, self.palette)
                    .as_bytes(),
            )?;
            self.shown += 1;
            if self.flush {
                self.w.flush()?;
            }
        }
        let done = match self.frame {
            Some(f) => p.frame >= f,
            None => self.stop_after.is_some_and(|n| self.matched >= n),
        };
        Ok(if done {
            Control::Stop
        } else {
            Control::Continue
        })
    }

    fn frame_read(&mut self, ts_ns: i64, ts_digits: u8) {
        if let Some(c) = self.clock.as_mut() {
            c.frame(ts_ns, ts_digits);
        }
    }
}

pub fn show(a: ShowArgs, out: Output, w: &mut dyn Write) -> Result<i32> {
    let cfg = config(&a.input)?;
    let filter = Filter::from_spec_with(&super::filter_spec(&a.filter), &cfg.ships)?;
    let inputs = super::inputs::expand(&a.files, out);
    let several = inputs.files.len() > 1;
    if a.write.write.is_some() && several {
        anyhow::bail!("-w writes the frames of one capture: give one input");
    }
    let flush = line_buffered(&inputs.files, out);
    let limit = match a.count {
        Some(c) => a.limit.max(1).min(usize::try_from(c).unwrap_or(usize::MAX)),
        None => a.limit.max(1),
    };
    let palette = Palette::new(out.color);
    let first = inputs.files.first().cloned().unwrap_or_default();
    let spool = if a.write.write.is_some() && !first.is_empty() {
        cut::prepare(&first, a.input.ships.as_deref(), &a.write)?
    } else {
        None
    };
    let read_path = |path: &str| {
        spool
            .as_ref()
            .map_or_else(|| path.to_string(), |s| s.path())
    };
    // With `-w -` the capture takes standard output; the report goes nowhere.
    let mut nowhere = std::io::sink();
    let report: &mut dyn Write = if cut::to_stdout(&a.write) {
        &mut nowhere
    } else {
        &mut *w
    };
    let mut picked = Vec::new();
    let mut shown = 0;
    let failed = for_each(&inputs.files, |path| {
        let source = read_path(path);
        let mut sink = ShowSink {
            w: &mut *report,
            frame: a.frame,
            filter: file_filter(&source, &filter, &cfg, out)?,
            limit: limit - shown,
            shown: 0,
            // `-w` writes every selected frame (up to `-c`), whatever `--limit` prints.
            stop_after: if a.write.write.is_some() {
                a.count.and_then(|c| usize::try_from(c).ok())
            } else {
                Some(limit - shown)
            },
            matched: 0,
            palette,
            first_ts_ns: None,
            flush,
            clock: a.time_format.map(|t| Clock::new(super::time_format(t))),
        };
        if several {
            if shown > 0 {
                writeln!(sink.w)?;
            }
            writeln!(sink.w, "{}", palette.heading(&format!("==> {path} <==")))?;
        }
        let s = if a.write.write.is_some() {
            let rule = match a.frame {
                Some(f) => cut::Rule::Frame(f),
                None => cut::Rule::Filter(Box::new(sink.filter.clone())),
            };
            let mut sel = cut::Selecting::new(&mut sink, rule, a.write.annotate);
            let s = run_file(&source, &cfg, &mut sel, out)?;
            picked = sel.picked;
            s
        } else {
            run_file(&source, &cfg, &mut sink, out)?
        };
        let here = sink.shown;
        if sink.matched > here && !out.quiet {
            eprintln!(
                "bcwire: {path}: showed {here} of {} selected datagrams (--limit {}); -w \
                 writes all of them",
                sink.matched, a.limit
            );
        }
        warn_problems(path, &s, &cfg, out);
        if here == 0 && !out.quiet {
            let what = match a.frame {
                Some(f) if f > s.frames => format!(
                    "frame {f} is past the end of the capture ({} frames)",
                    s.frames
                ),
                Some(f) => {
                    format!("frame {f} is not a Bridge Commander datagram (see `bcwire info`)")
                }
                None => "no datagram matches the filter".to_string(),
            };
            eprintln!("bcwire: {path}: {what}");
        }
        shown += here;
        Ok(if a.frame.is_none() && shown >= limit {
            Flow::Stop
        } else {
            Flow::Next
        })
    })?;
    if a.write.write.is_some() && !first.is_empty() {
        cut::finish(
            &read_path(&first),
            &first,
            &a.write,
            &mut picked,
            w,
            out.quiet,
        )?;
    }
    if failed || inputs.failed {
        return Ok(super::EXIT_TROUBLE);
    }
    Ok(if shown == 0 { 1 } else { 0 })
}

struct StatsSink<'a> {
    stats: &'a mut Stats,
    filter: Filter,
    first_ts_ns: Option<i64>,
    /// (session, client) of every datagram counted: whose departures count.
    counted: std::collections::BTreeSet<(usize, usize)>,
}

impl StatsSink<'_> {
    /// How the counted clients left: all of the capture's departures without a filter,
    /// else those of the clients the filter kept ("Clients left" follows the filter).
    fn departures(&self, s: &CaptureSummary) -> std::collections::BTreeMap<String, u64> {
        if self.filter.selects_everything() {
            return s.departures.clone();
        }
        let mut out = std::collections::BTreeMap::new();
        for session in &s.sessions {
            for c in &session.clients {
                if !self.counted.contains(&(session.index, c.index)) {
                    continue;
                }
                if let Some(how) = c.departure() {
                    *out.entry(how).or_default() += 1;
                }
            }
        }
        out
    }
}

impl Sink for StatsSink<'_> {
    fn selects_by_player(&self) -> bool {
        self.filter.waits_for_names()
    }

    fn packet(&mut self, p: &PacketRecord, names: &dyn Names) -> Result<Control> {
        let first = *self.first_ts_ns.get_or_insert(p.ts_ns);
        if !self.filter.keep_packet(p, first, names) {
            return Ok(Control::Continue);
        }
        let counted = count_selected(self.stats, &self.filter, p, names);
        // Only a filtered count needs to know whose departures to count.
        if counted && !self.filter.selects_everything() {
            self.counted.insert((p.session, p.client));
        }
        Ok(Control::Continue)
    }

    /// Statistics count messages and read StateUpdate summaries, never fields, unless
    /// a `-Y` expression reads them.
    fn field_trees(&self) -> FieldTrees {
        if self.filter.reads_fields() {
            FieldTrees::All
        } else {
            FieldTrees::None
        }
    }

    /// Counts do not depend on which host message relays which client message.
    fn links_relays(&self) -> bool {
        false
    }
}

/// Read one capture into `stats`. `several`: other inputs are read too, so a
/// `--client` this capture lacks is a note (it may be in the others), not an error.
fn stats_file(
    path: &str,
    cfg: &Config,
    filter: &Filter,
    stats: &mut Stats,
    out: Output,
    several: bool,
) -> Result<bool> {
    let filter = match file_filter(path, filter, cfg, out) {
        Ok(f) => f,
        Err(e) if several && e.is::<ClientAbsent>() => {
            if !out.quiet {
                eprintln!("bcwire: note: {e}; nothing counted from it");
            }
            return Ok(false);
        }
        Err(e) => return Err(e),
    };
    let mut sink = StatsSink {
        stats,
        filter,
        first_ts_ns: None,
        counted: Default::default(),
    };
    let s = run_file(path, cfg, &mut sink, out)?;
    let departures = sink.departures(&s);
    warn_problems(path, &s, cfg, out);
    for dir in [crate::diag::Direction::C2S, crate::diag::Direction::S2C] {
        stats.add_unacked(dir, s.totals[dir.index()].unacked);
    }
    stats.add_departures(&departures);
    Ok(true)
}

pub fn stats(a: StatsArgs, out: Output, w: &mut dyn Write) -> Result<i32> {
    let cfg = config(&a.input)?;
    let interval = a.interval.as_deref().map(parse_duration_ns).transpose()?;
    let filter = Filter::from_spec_with(&super::filter_spec(&a.filter), &cfg.ships)?;
    let inputs = super::inputs::expand(&a.files, out);
    let files = &inputs.files;
    if a.write.write.is_some() {
        return stats_writing(&a, files, &cfg, filter, interval, out, w);
    }
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(files.len());
    let (stats, read, absent) = if interval.is_some() || workers <= 1 {
        // Rates over time are bucketed from the first frame of the whole input, so the
        // captures are read in order into one accumulator.
        let mut stats = Stats::new(a.by.map(super::stats_by), interval)
            .with_time_format(super::time_format(a.time_format));
        let (mut read, mut absent) = (0, 0);
        for_each(files, |path| {
            if !stats_file(path, &cfg, &filter, &mut stats, out, files.len() > 1)? {
                absent += 1;
            }
            read += 1;
            Ok(Flow::Next)
        })?;
        (stats, read, absent)
    } else {
        stats_parallel(
            files,
            workers,
            &cfg,
            &filter,
            a.by.map(super::stats_by),
            out,
        )?
    };
    let failed = read < files.len();
    // Nothing on stdout when no input could be read: the errors say it all.
    if read == 0 && !files.is_empty() {
        return Ok(super::EXIT_TROUBLE);
    }
    // A client in none of the inputs is the mistake a single input makes an error of.
    let nowhere = absent > 0 && absent == files.len();
    if nowhere {
        eprintln!(
            "bcwire: error: --client: in none of the {} inputs",
            files.len()
        );
    }
    match a.format {
        TableOrJson::Table => write!(w, "{}", stats.render(Palette::new(out.color)))?,
        TableOrJson::Json => {
            writeln!(w, "{}", json_stream::doc_to_pretty_string(&stats.to_doc())?)?
        }
    }
    Ok(status(failed || inputs.failed || nowhere))
}

/// One capture's statistics, and whether it held the `--client` asked for.
type FileCount = Result<(Stats, bool)>;

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
    let spool = cut::prepare(file, a.input.ships.as_deref(), &a.write)?;
    let path = spool.as_ref().map_or_else(|| file.clone(), |s| s.path());
    let mut stats = Stats::new(a.by.map(super::stats_by), interval)
        .with_time_format(super::time_format(a.time_format));
    // The same selection as without -w (a client known from a first reading), and -w
    // writes the frames that hold a counted message, as `decode -w` does.
    let filter = file_filter(&path, &filter, cfg, out)?;
    let mut sink = StatsSink {
        stats: &mut stats,
        filter: filter.clone(),
        first_ts_ns: None,
        counted: Default::default(),
    };
    let mut sel = cut::Selecting::new(
        &mut sink,
        cut::Rule::Filter(Box::new(filter)),
        a.write.annotate,
    );
    let s = run_file(&path, cfg, &mut sel, out)?;
    let mut picked = sel.picked;
    let departures = sink.departures(&s);
    warn_problems(file, &s, cfg, out);
    for dir in [crate::diag::Direction::C2S, crate::diag::Direction::S2C] {
        stats.add_unacked(dir, s.totals[dir.index()].unacked);
    }
    stats.add_departures(&departures);
    if !cut::to_stdout(&a.write) {
        match a.format {
            TableOrJson::Table => write!(w, "{}", stats.render(Palette::new(out.color)))?,
            TableOrJson::Json => {
                writeln!(w, "{}", json_stream::doc_to_pretty_string(&stats.to_doc())?)?
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
) -> Result<(Stats, usize, usize)> {
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
    let results: Vec<Vec<(usize, FileCount)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(path) = files.get(i) else { break };
                        let mut stats = Stats::new(by, None);
                        let r =
                            stats_file(path, cfg, filter, &mut stats, worker_out, files.len() > 1);
                        done.push((i, r.map(|counted| (stats, counted))));
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
    let mut by_index: Vec<(usize, Result<(Stats, bool)>)> = results.into_iter().flatten().collect();
    by_index.sort_by_key(|(i, _)| *i);
    if by_index.len() != files.len() {
        anyhow::bail!("a worker thread stopped before reading its captures");
    }
    let mut total = Stats::new(by, None);
    let (mut read, mut absent) = (0, 0);
    for (_, r) in by_index {
        match r {
            Ok((s, counted)) => {
                total.merge(&s);
                read += 1;
                absent += usize::from(!counted);
            }
            Err(e) if super::inputs::is_output_gone(&e) => return Err(e),
            Err(e) => super::inputs::report_failure(&e),
        }
    }
    Ok((total, read, absent))
}
