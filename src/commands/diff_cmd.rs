//! `bcwire diff`: both captures read at once, each on its own thread, their message
//! digests aligned as they arrive; then a second look at the first differing messages.

use super::capture_cmds::{config, run_file, warn_problems};
use super::Output;
use crate::cli::{DiffArgs, TableOrJson};
use crate::diag::Direction;
use crate::pipeline::record::{PacketBody, PacketRecord};
use crate::pipeline::summary::CaptureSummary;
use crate::pipeline::{Config, Control, Detail, Sink};
use crate::report::align::{Aligner, Side};
use crate::report::diff::{
    self, Comparison, DiffResult, FetchSink, Fetcher, FlowKey, MessageDigest,
};
use crate::report::fingerprint::LeanFingerprints;
use crate::report::names::Names;
use crate::report::stats::Stats;
use crate::report::term::Palette;
use anyhow::{Context, Result};
use std::io::Write;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

/// Digests handed from a reading thread to the aligner at a time.
const BATCH: usize = 4096;
/// Batches a reading thread may be ahead of the aligner: this and the lockstep reading
/// keep the aligner's held digests to what the two captures differ by.
const BATCHES_IN_FLIGHT: usize = 4;

/// What a reading thread hands to the aligner, in capture order.
enum Entry {
    Digest(FlowKey, MessageDigest),
    /// The session can receive no more messages.
    SessionEnded(usize),
}

type Batch = Vec<Entry>;

/// Counts statistics and sends the digest of every delivered message to the aligner.
struct DigestSink<'a> {
    stats: Stats,
    fingerprints: LeanFingerprints<'a>,
    batch: Batch,
    tx: SyncSender<Batch>,
}

impl DigestSink<'_> {
    /// Hand the batch over; false when the aligner is gone.
    fn send(&mut self) -> bool {
        let batch = std::mem::replace(&mut self.batch, Vec::with_capacity(BATCH));
        self.tx.send(batch).is_ok()
    }
}

impl Sink for DigestSink<'_> {
    fn packet(&mut self, p: &PacketRecord, names: &dyn Names) -> Result<Control> {
        self.stats.add(p, names);
        let PacketBody::Game(g) = &p.body else {
            return Ok(Control::Continue);
        };
        let key = FlowKey {
            session: p.session,
            client: p.client,
            direction: p.direction,
        };
        for m in &g.messages {
            if let Some(game) = m.delivered_game() {
                let fp = self.fingerprints.of(g, m, game);
                self.batch
                    .push(Entry::Digest(key, MessageDigest::new(game.opcode, fp)));
            }
        }
        if self.batch.len() >= BATCH && !self.send() {
            return Ok(Control::Stop);
        }
        Ok(Control::Continue)
    }

    fn detail(&self) -> Detail {
        Detail::Lean
    }

    fn session_ended(&mut self, session: usize) {
        self.batch.push(Entry::SessionEnded(session));
    }
}

/// Read one capture, sending its digests on `tx`; its statistics and summary.
fn read_side(
    path: &str,
    cfg: &Config,
    cmp: &Comparison,
    out: Output,
    tx: SyncSender<Batch>,
) -> Result<(Stats, CaptureSummary)> {
    let mut sink = DigestSink {
        stats: Stats::default(),
        fingerprints: LeanFingerprints::new(cmp, &cfg.ships),
        batch: Vec::with_capacity(BATCH),
        tx,
    };
    let summary = run_file(path, cfg, &mut sink, out).with_context(|| format!("reading {path}"))?;
    if !sink.batch.is_empty() {
        sink.send();
    }
    Ok((sink.stats, summary))
}

/// Read `sides` at once, one thread each, feeding `al` one batch of each in turn (so
/// that neither capture runs far ahead of the other); each side's result, in order.
/// Fails when the aligner cannot spill to (or read back from) its temporary files.
fn read_sides(
    sides: &[(&str, Side, Output)],
    cfg: &Config,
    cmp: &Comparison,
    al: &mut Aligner,
) -> Result<Vec<Result<(Stats, CaptureSummary)>>> {
    std::thread::scope(|scope| {
        let mut readers: Vec<(Side, Receiver<Batch>)> = Vec::new();
        let mut handles = Vec::new();
        for &(path, side, out) in sides {
            let (tx, rx) = sync_channel(BATCHES_IN_FLIGHT);
            readers.push((side, rx));
            handles.push(scope.spawn(move || read_side(path, cfg, cmp, out, tx)));
        }
        let mut failed: Option<std::io::Error> = None;
        while !readers.is_empty() && failed.is_none() {
            readers.retain(|(side, rx)| {
                if failed.is_some() {
                    return false;
                }
                let kept = match rx.recv() {
                    Ok(batch) => batch
                        .into_iter()
                        .try_for_each(|e| match e {
                            Entry::Digest(k, d) => al.push(*side, k, d),
                            Entry::SessionEnded(session) => {
                                al.session_ended(*side, session);
                                Ok(())
                            }
                        })
                        .map(|()| true),
                    Err(_) => al.end(*side).map(|()| false),
                };
                kept.unwrap_or_else(|e| {
                    failed = Some(e);
                    false
                })
            });
        }
        // Without receivers, reading threads still running stop at their next batch.
        drop(readers);
        let results = handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a reading thread stopped")))
            })
            .collect();
        match failed {
            Some(e) => Err(e).context("diff: spilling to a temporary file"),
            None => Ok(results),
        }
    })
}

pub fn diff(a: DiffArgs, out: Output, w: &mut dyn Write) -> Result<i32> {
    let cfg = config(&a.input)?;
    let cmp = Comparison::new(a.include_volatile, &a.ignore).map_err(anyhow::Error::msg)?;
    let mut al = Aligner::new(a.max_differences);
    // One progress bar (A's: the two are read in step); with -v, whose warnings go to
    // stderr as they are found, one capture after the other so they do not interleave.
    let quiet_bar = Output {
        progress: false,
        ..out
    };
    let results = if out.verbose > 0 {
        let mut r = read_sides(&[(&a.a, Side::A, out)], &cfg, &cmp, &mut al)?;
        r.extend(read_sides(&[(&a.b, Side::B, out)], &cfg, &cmp, &mut al)?);
        r
    } else {
        // Both captures are read at once: a reading thread for each would only compete
        // for the cores.
        let side_cfg = Config {
            front_thread: false,
            ..cfg.clone()
        };
        read_sides(
            &[(&a.a, Side::A, out), (&a.b, Side::B, quiet_bar)],
            &side_cfg,
            &cmp,
            &mut al,
        )?
    };
    let mut read = Vec::new();
    let mut flow_names = std::collections::BTreeMap::new();
    for (path, r) in [&a.a, &a.b].into_iter().zip(results) {
        let (stats, summary) = r?;
        warn_problems(path, &summary, &cfg, out);
        read.push(stats);
        // Flows are named by their player (A's name where both captures know one).
        for s in &summary.sessions {
            for c in &s.clients {
                let Some(name) = &c.name else { continue };
                for direction in [Direction::C2S, Direction::S2C] {
                    let k = FlowKey {
                        session: s.index,
                        client: c.index,
                        direction,
                    };
                    flow_names.entry(k).or_insert_with(|| name.clone());
                }
            }
        }
    }
    let mut result = DiffResult::default();
    diff::count_rows(&mut result, &read[0], &read[1]);
    al.finish(&mut result)
        .context("diff: reading back what was spilled to a temporary file")?;
    let code = if result.is_same() { 0 } else { 1 };
    // With -q the exit status is the answer: no need for the second look that explains
    // the first differences.
    if out.quiet {
        return Ok(code);
    }
    if !result.wanted.is_empty() {
        let mut fa = Fetcher::default();
        let mut fb = Fetcher::default();
        for (path, side, fetcher) in [(&a.a, Side::A, &mut fa), (&a.b, Side::B, &mut fb)] {
            let wanted = result.wanted_in(side);
            run_file(
                path,
                &cfg,
                &mut FetchSink {
                    fetcher,
                    wanted: &wanted,
                },
                out,
            )?;
        }
        diff::explain(&mut result, &fa, &fb, &cmp);
    }
    result.flow_names = flow_names;
    match a.format {
        TableOrJson::Table => write!(
            w,
            "{}",
            diff::render(&result, &a.a, &a.b, Palette::new(out.color))
        )?,
        TableOrJson::Json => writeln!(
            w,
            "{}",
            crate::report::json_stream::doc_to_pretty_string(&diff::to_doc(&result))?
        )?,
    }
    Ok(code)
}
