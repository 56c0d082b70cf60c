//! `info`, `show`, `stats` and `flows`: capture in, report out (`decode` is in
//! `decode_cmd`).

use super::inputs::{for_each, Flow};
use super::run::{
    config, count_selected, file_filter, line_buffered, no_game_traffic, run_file, status,
    warn_problems,
};
use super::{cut, Output};
use crate::cli::{FlowsArgs, InfoArgs, ShowArgs, StatsArgs, TableOrJson};
use crate::pipeline::filter::{parse_duration_ns, ClientAbsent, Filter};
use crate::pipeline::record::PacketRecord;
use crate::pipeline::summary::CaptureSummary;
use crate::pipeline::tally::Tally;
use crate::pipeline::{Config, Control, FieldTrees, NullSink, Sink};
use crate::report::info;
use crate::report::json_stream;
use crate::report::names::Names;
use crate::report::schema;
use crate::report::stats::Stats;
use crate::report::term::Palette;
use crate::report::timefmt::Clock;
use anyhow::Result;
use std::io::Write;

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
    let (cfg, filter, inputs) =
        super::run::selection_and_inputs(&a.input, &a.filter, &a.files, &a.write, out)?;
    let several = inputs.files.len() > 1;
    let flush = line_buffered(&inputs.files, out);
    let limit = match a.count {
        Some(c) => a.limit.max(1).min(usize::try_from(c).unwrap_or(usize::MAX)),
        None => a.limit.max(1),
    };
    let palette = Palette::new(out.color);
    let cutting = cut::Cutting::prepare(&inputs.files, a.input.ships.as_deref(), &a.write)?;
    let read_path = |path: &str| cutting.read_path(path);
    let mut nowhere = std::io::sink();
    let report = cut::report_writer(&a.write, &mut *w, &mut nowhere);
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
    if a.write.write.is_some() && !cutting.first().is_empty() {
        cut::finish(
            &read_path(cutting.first()),
            cutting.first(),
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
    /// The filter selects everything (`Filter::selects_everything`), asked once.
    everything: bool,
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
        // Without a condition every record counts whole: no test to run on it, and
        // no client to note (all departures count).
        if self.everything {
            self.stats.add(p, names);
            return Ok(Control::Continue);
        }
        let first = *self.first_ts_ns.get_or_insert(p.ts_ns);
        if !self.filter.keep_packet(p, first, names) {
            return Ok(Control::Continue);
        }
        let counted = count_selected(self.stats, &self.filter, p, names);
        // Only a filtered count needs to know whose departures to count.
        if counted {
            self.counted.insert((p.session, p.client));
        }
        Ok(Control::Continue)
    }

    /// Statistics count messages and read of a StateUpdate only its flags and
    /// subsystem start, never fields nor records: only the fields a `-Y` expression
    /// reads are built, and without one, no records ([`FieldTrees::Counts`]).
    fn field_trees(&self) -> FieldTrees {
        // The selection's facts read no records either (`facts::trees`).
        match self.filter.field_trees() {
            FieldTrees::None => FieldTrees::Counts,
            trees => trees,
        }
    }

    /// Counts do not depend on which host message relays which client message.
    fn links_relays(&self) -> bool {
        false
    }

    /// Without a condition every record counts whole, and a tally holds all that is
    /// counted of it (but for a breakdown by object, class or client).
    fn tallies(&self) -> bool {
        self.everything && self.stats.counts_tallies()
    }

    fn tally(&mut self, t: &Tally) {
        self.stats.add_tally(t);
    }

    /// The counts are made here, of the selected records; of the summary only the
    /// unacknowledged messages and the departures are read.
    fn reads_flow_counts(&self) -> bool {
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
        everything: filter.selects_everything(),
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
    let workers = rayon::current_num_threads().min(files.len());
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
        stats_parallel(files, &cfg, &filter, a.by.map(super::stats_by), out)?
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
        everything: filter.selects_everything(),
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

/// Several captures read at once, one per core (rayon's pool), each into its own
/// accumulator, merged in file order (the sums do not depend on which thread read
/// what). Progress bars would interleave, so none is drawn.
fn stats_parallel(
    files: &[String],
    cfg: &Config,
    filter: &Filter,
    by: Option<crate::report::stats::StatsBy>,
    out: Output,
) -> Result<(Stats, usize, usize)> {
    use rayon::prelude::*;
    let worker_out = Output {
        progress: false,
        ..out
    };
    // Every core already reads a file: a reading thread per file would only compete.
    let cfg = &Config {
        front_thread: false,
        ..cfg.clone()
    };
    // One file per task, so that a core done with a short file takes the next one.
    let by_index: Vec<FileCount> = files
        .par_iter()
        .with_max_len(1)
        .map(|path| {
            let mut stats = Stats::new(by, None);
            let r = stats_file(path, cfg, filter, &mut stats, worker_out, files.len() > 1);
            r.map(|counted| (stats, counted))
        })
        .collect();
    let mut total = Stats::new(by, None);
    let (mut read, mut absent) = (0, 0);
    for r in by_index {
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
