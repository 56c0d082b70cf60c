//! `decode`: the records of one capture or several in the chosen format. Several
//! inputs are read at once, one per core (`in_order`), and written in input order,
//! byte for byte what reading them one after the other writes.

use super::in_order::{self, SpoolWriter};
use super::inputs::{for_each, report_failure, Flow};
use super::run::{file_filter, line_buffered, problem_notes, run_file, status};
use super::{cut, Output};
use crate::cli::{DecodeArgs, DecodeFormat};
use crate::pipeline::filter::{ClientAbsent, Filter};
use crate::pipeline::record::{PacketBody, PacketRecord};
use crate::pipeline::summary::CaptureSummary;
use crate::pipeline::{Config, Control, FieldTrees, Sink};
use crate::report::decode::{csv_header, packet_csv, packet_hex, packet_lines, LineContext};
use crate::report::info;
use crate::report::json_stream;
use crate::report::names::Names;
use crate::report::schema;
use crate::report::select::Selection;
use crate::report::term::Palette;
use crate::report::timefmt::{seconds_with, Clock};
use anyhow::Result;
use std::io::Write;

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
        // Sessions are numbered afresh in every input: no description carries over.
        self.descriptions = Default::default();
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
    /// the names its paths start from; tables and CSV read whole trees; `-q` writes
    /// nothing. A `-Y` expression adds the fields it reads.
    fn field_trees(&self) -> FieldTrees {
        let written = match &self.select {
            _ if self.quiet => FieldTrees::None,
            Some(select) => select.field_trees(),
            None if matches!(self.format, DecodeFormat::Jsonl | DecodeFormat::Json) => {
                FieldTrees::TYPED_STATE_UPDATES
            }
            None => FieldTrees::All,
        };
        self.filter.field_trees().union(written)
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
    let (cfg, filter, inputs) =
        super::run::selection_and_inputs(&a.input, &a.filter, &a.files, &a.write, out)?;
    let several = inputs.files.len() > 1;
    let select = if a.fields.is_empty() {
        None
    } else {
        if !matches!(a.format, DecodeFormat::Csv | DecodeFormat::Jsonl) {
            anyhow::bail!("--fields writes CSV or JSON Lines: use --format csv or --format jsonl");
        }
        Some(Selection::parse(&a.fields).map_err(anyhow::Error::msg)?)
    };
    let plan = Plan {
        a: &a,
        cfg: &cfg,
        filter: &filter,
        select: &select,
        out,
        several,
        flush: line_buffered(&inputs.files, out),
        json: matches!(a.format, DecodeFormat::Jsonl | DecodeFormat::Json) && a.fields.is_empty(),
    };
    let (failed, absent) = if plan.in_parallel(&inputs.files) {
        decode_parallel(&plan, &inputs.files, w)?
    } else {
        decode_in_turn(&plan, &inputs.files, w)?
    };
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

/// What every input of one `decode` run is read with.
struct Plan<'a> {
    a: &'a DecodeArgs,
    cfg: &'a Config,
    filter: &'a Filter,
    select: &'a Option<Selection>,
    out: Output,
    several: bool,
    flush: bool,
    /// JSON records with a summary record after each input's.
    json: bool,
}

impl Plan<'_> {
    /// Several inputs are read at once unless the output must follow the input as it
    /// comes (line buffering, standard input), `-c` counts records over all inputs, `-v`
    /// prints every warning as it is met, or there is one core.
    fn in_parallel(&self, files: &[String]) -> bool {
        files.len() > 1
            && rayon::current_num_threads() > 1
            && !self.flush
            && self.a.records.count.is_none()
            && self.a.write.write.is_none()
            && self.out.verbose == 0
    }

    /// What closes the whole output: the JSON array's end.
    fn close(&self, w: &mut dyn Write, items: u64) -> std::io::Result<()> {
        if self.a.format == DecodeFormat::Json && self.a.fields.is_empty() {
            w.write_all(if items == 0 { b"[\n]\n" } else { b"\n]\n" })?;
        }
        w.flush()
    }

    fn sink<'w>(&self, w: &'w mut dyn Write) -> DecodeSink<'w> {
        DecodeSink {
            w,
            format: self.a.format,
            filter: self.filter.clone(),
            hex: self.a.hex,
            palette: Palette::new(self.out.color),
            first_ts_ns: None,
            clock: Clock::new(super::time_format(self.a.records.time_format)),
            flush: self.flush,
            count: self.a.records.count,
            count_frames: self.a.write.write.is_some(),
            written_all: 0,
            items: 0,
            written: 0,
            game_packets: 0,
            gamespy_packets: 0,
            messages: 0,
            warnings: 0,
            line: Vec::new(),
            json: json_stream::PacketWriter::new(&self.cfg.ships),
            descriptions: Default::default(),
            select: self.select.clone(),
            quiet: self.out.quiet,
        }
    }

    /// What opens the whole output before its first item: the CSV header line, or the
    /// JSON array's opening (written by the input with the first item).
    fn opening(&self) -> Option<(Vec<u8>, &'static [u8])> {
        let file = self.several;
        match self.a.format {
            DecodeFormat::Csv => {
                let header = match self.select {
                    Some(sel) => sel.csv_header(file),
                    None => csv_header(self.a.hex, file),
                };
                Some((format!("{header}\n").into_bytes(), b""))
            }
            DecodeFormat::Json if self.a.fields.is_empty() => Some((b"[\n".to_vec(), b",\n")),
            _ => None,
        }
    }
}

/// What reading one input leaves to say after its records, in input order.
enum FileEnd {
    /// Read (to its end or to `-c`): its notes for stderr.
    Read { notes: Vec<String>, stop: bool },
    /// Without the `--client` asked for: the note saying so.
    Absent(String),
}

/// Read one input into `sink`: its records, then its summary record (JSON). The
/// records of a run that failed part way are still written. `picked`: with `-w`, the
/// frames selected.
fn decode_file(
    sink: &mut DecodeSink,
    plan: &Plan,
    path: &str,
    source: &str,
    picked: Option<&mut Vec<(u64, Option<String>)>>,
) -> Result<FileEnd> {
    let (cfg, out) = (plan.cfg, plan.out);
    let f = match file_filter(source, plan.filter, cfg, out) {
        Ok(f) => f,
        // The client may be in the other inputs: this one has nothing to select.
        Err(e) if plan.several && e.is::<ClientAbsent>() => {
            return Ok(FileEnd::Absent(format!(
                "bcwire: note: {e}; nothing selected from it"
            )));
        }
        Err(e) => return Err(e),
    };
    sink.next_file(f);
    sink.json.file = plan.several.then(|| path.to_string());
    if plan.several && plan.a.format == DecodeFormat::Table {
        writeln!(sink.w, "{}", sink.palette.heading(path))?;
    }
    let run = match picked {
        Some(picked) => {
            let rule = cut::Rule::Filter(Box::new(sink.filter.clone()));
            let mut sel = cut::Selecting::new(sink, rule, plan.a.write.annotate);
            let s = run_file(source, cfg, &mut sel, out);
            *picked = sel.picked;
            s
        }
        None => run_file(source, cfg, sink, out),
    };
    sink.write_pending()?;
    let mut s = run?;
    let notes = problem_notes(path, &s, cfg, out);
    if plan.json {
        write_decode_summary(sink, &mut s, path, plan.a.format)?;
    }
    Ok(FileEnd::Read {
        notes,
        stop: sink.done(),
    })
}

/// The inputs one after the other: (any failed, inputs without the `--client`).
fn decode_in_turn(plan: &Plan, files: &[String], w: &mut dyn Write) -> Result<(bool, usize)> {
    let a = plan.a;
    let cutting = cut::Cutting::prepare(files, a.input.ships.as_deref(), &a.write)?;
    let read_path = |path: &str| cutting.read_path(path);
    let mut nowhere = std::io::sink();
    let report = cut::report_writer(&a.write, &mut *w, &mut nowhere);
    let mut sink = plan.sink(report);
    let mut picked = Vec::new();
    let mut absent = 0;
    let failed = for_each(files, |path| {
        let source = read_path(path);
        let cutting = a.write.write.is_some().then_some(&mut picked);
        Ok(
            match decode_file(&mut sink, plan, path, &source, cutting)? {
                FileEnd::Absent(note) => {
                    absent += 1;
                    if !plan.out.quiet {
                        eprintln!("{note}");
                    }
                    Flow::Next
                }
                FileEnd::Read { notes, stop } => {
                    for n in notes {
                        eprintln!("{n}");
                    }
                    if stop {
                        Flow::Stop
                    } else {
                        Flow::Next
                    }
                }
            },
        )
    })?;
    plan.close(sink.w, sink.items)?;
    drop(sink);
    if a.write.write.is_some() && !cutting.first().is_empty() {
        cut::finish(
            &read_path(cutting.first()),
            cutting.first(),
            &a.write,
            &mut picked,
            w,
            plan.out.quiet,
        )?;
    }
    Ok((failed, absent))
}

/// The inputs read at once, one per core, written in input order: each input's reader
/// writes as if its records were the first of the output, and the opening of the
/// output ([`Plan::opening`]) is taken off every input's output but the first one's.
fn decode_parallel(plan: &Plan, files: &[String], w: &mut dyn Write) -> Result<(bool, usize)> {
    let worker = Plan {
        out: Output {
            progress: false,
            ..plan.out
        },
        ..*plan
    };
    // Every core already reads a file: a reading thread per file would only compete.
    let cfg = Config {
        front_thread: false,
        ..plan.cfg.clone()
    };
    let worker = Plan {
        cfg: &cfg,
        ..worker
    };
    let opening = plan.opening();
    let (mut failed, mut absent) = (false, 0);
    // Items the inputs before the one being written wrote.
    let items = std::cell::Cell::new(0u64);
    let read = |i: usize, w: &mut SpoolWriter| -> (Result<FileEnd>, u64) {
        let mut sink = worker.sink(w);
        let end = decode_file(&mut sink, &worker, &files[i], &files[i], None);
        (end, sink.items)
    };
    let mut write_first = |_: usize, bytes: &[u8]| -> Vec<u8> {
        match &opening {
            Some((open, instead)) if items.get() > 0 && bytes.starts_with(open) => {
                [*instead, &bytes[open.len()..]].concat()
            }
            _ => bytes.to_vec(),
        }
    };
    let mut after = |_: usize, (end, n): (Result<FileEnd>, u64)| -> Result<()> {
        match end {
            Ok(FileEnd::Absent(note)) => {
                absent += 1;
                if !plan.out.quiet {
                    eprintln!("{note}");
                }
            }
            Ok(FileEnd::Read { notes, .. }) => {
                for n in notes {
                    eprintln!("{n}");
                }
            }
            Err(e) if super::inputs::is_output_gone(&e) => return Err(e),
            Err(e) => {
                report_failure(&e);
                failed = true;
            }
        }
        items.set(items.get() + n);
        Ok(())
    };
    in_order::run(files.len(), w, read, &mut write_first, &mut after)?;
    plan.close(w, items.get())?;
    Ok((failed, absent))
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
