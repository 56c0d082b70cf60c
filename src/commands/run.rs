//! Reading one capture file through the pipeline, shared by every command: the
//! configuration from the input options, the filter resolved against the file, the
//! notes printed after it, and what a selection counts.

use super::inputs::Expanded;
use super::Output;
use crate::cli::{FilterArgs, InputArgs, WriteArgs};
use crate::game::ships::ShipCatalog;
use crate::pipeline::filter::{ClientAbsent, Filter};
use crate::pipeline::record::{MessageRecord, PacketBody, PacketRecord};
use crate::pipeline::summary::CaptureSummary;
use crate::pipeline::{Config, NullSink, Pipeline, Sink};
use crate::report::names::Names;
use crate::report::stats::Stats;
use anyhow::Result;

/// Exit status after every input was tried: trouble if any failed.
pub fn status(failed: bool) -> i32 {
    if failed {
        super::EXIT_TROUBLE
    } else {
        0
    }
}

/// Whether records are flushed one by one: asked for, or reading standard input (which
/// may be a live capture).
pub fn line_buffered(files: &[String], out: Output) -> bool {
    out.line_buffered || files.iter().any(|f| f == "-")
}

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

/// What `decode` and `show` set up alike: the configuration, the compiled selection
/// and the expanded inputs. `-w` writes the frames of one capture, so it refuses
/// several inputs.
pub fn selection_and_inputs(
    input: &InputArgs,
    filter: &FilterArgs,
    files: &[String],
    write: &WriteArgs,
    out: Output,
) -> Result<(Config, Filter, Expanded)> {
    let cfg = config(input)?;
    let filter = Filter::from_spec_with(&super::filter_spec(filter), &cfg.ships)?;
    let inputs = super::inputs::expand(files, out);
    if write.write.is_some() && inputs.files.len() > 1 {
        anyhow::bail!("-w writes the frames of one capture: give one input");
    }
    Ok((cfg, filter, inputs))
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
    // Without a bar to advance or warnings to print the wrapper has nothing to do: the
    // pipeline then calls the sink itself, saving a second dynamic call per record and
    // per frame (the common case: output to a pipe, or no `-v`).
    let sink: &mut dyn Sink = if observed.progress.is_none() && !observed.verbose {
        observed.inner
    } else {
        &mut observed
    };
    let mut config = config.clone();
    // Standard input may be a live capture: hand each frame on as soon as it arrives.
    config.read_ahead &= path != "-";
    let summary = if path == "-" && sink.selects_by_player() {
        let mut hold = crate::pipeline::hold::HoldUntilNamed::new(sink);
        let summary = Pipeline::new(config).run(input.reader, &mut hold);
        let late = hold.released_unnamed();
        if late > 0 && !out.quiet {
            eprintln!(
                "bcwire: note: standard input: {late} records of clients whose names were \
                 not known within {} s were selected without their names",
                crate::pipeline::hold::HOLD_SECONDS
            );
        }
        summary
    } else {
        Pipeline::new(config).run(input.reader, sink)
    };
    if let Some(p) = &input.progress {
        p.finish();
    }
    summary
}

pub fn warn_problems(path: &str, s: &CaptureSummary, cfg: &Config, out: Output) {
    for note in problem_notes(path, s, cfg, out) {
        eprintln!("{note}");
    }
}

/// What [`warn_problems`] prints, one line each (for a caller that prints them later,
/// in input order).
pub fn problem_notes(path: &str, s: &CaptureSummary, cfg: &Config, out: Output) -> Vec<String> {
    let mut notes = Vec::new();
    if out.quiet {
        return notes;
    }
    for p in &s.problems {
        notes.push(format!("bcwire: warning: {path}: {p}"));
    }
    if s.frames > 0 && s.has_no_game_traffic() {
        notes.push(format!(
            "bcwire: {path}: {}",
            no_game_traffic(s, cfg.game_port)
        ));
    }
    notes
}

/// What to say of a capture without a Bridge Commander datagram: the ports seen, and
/// how to name the right one.
pub fn no_game_traffic(s: &CaptureSummary, port: u16) -> String {
    let top = s.top_udp_ports(5);
    let seen = if top.is_empty() {
        "no UDP datagram at all".to_string()
    } else {
        let list: Vec<String> = top.iter().map(|(p, n)| format!("{p} ×{n}")).collect();
        format!("UDP ports seen: {}", list.join(", "))
    };
    format!(
        "no Bridge Commander traffic on UDP port {port} ({seen}); \
         if the server used another port, give it with --port"
    )
}

/// The filter for one capture: `--client` needs a first reading of a file to know whom
/// it names (standard input cannot be read twice: there it is matched as it goes).
pub(super) fn file_filter(
    path: &str,
    filter: &Filter,
    cfg: &Config,
    out: Output,
) -> Result<Filter> {
    if !filter.needs_clients() {
        return Ok(filter.clone());
    }
    if path == "-" {
        return filter.for_stream();
    }
    let quiet = Output {
        progress: false,
        verbose: 0,
        ..out
    };
    let s = run_file(path, cfg, &mut NullSink, quiet)?;
    filter.for_capture(&s).map_err(|e| {
        let text = format!("{path}: {e}");
        if e.is::<ClientAbsent>() {
            ClientAbsent(text).into()
        } else {
            anyhow::anyhow!(text)
        }
    })
}

/// Counts what the selection keeps of a record the packet-level selection passed: a
/// GameSpy datagram, or a game datagram with the messages that pass; whether anything
/// of it was counted. (`stats` and `diff` count alike.)
pub(super) fn count_selected(
    stats: &mut Stats,
    filter: &Filter,
    p: &PacketRecord,
    names: &dyn Names,
) -> bool {
    match &p.body {
        PacketBody::GameSpy { .. } => {
            let keep = filter.keep_gamespy(p, names);
            if keep {
                stats.add(p, names);
            }
            keep
        }
        PacketBody::Game(_) if filter.selects_all_messages() => {
            stats.add(p, names);
            true
        }
        // A datagram counts when one of its messages passes the message filters.
        PacketBody::Game(g) => {
            let keep = g.messages.iter().any(|m| filter.keep_message(p, m, names));
            if keep {
                stats.add_selected(p, names, |m: &MessageRecord| {
                    filter.keep_message(p, m, names)
                });
            }
            keep
        }
    }
}
