//! `bcwire diff`: both captures read at once, each on its own thread, their message
//! digests aligned as they arrive; then a second look at the first differing messages.

use super::run::{config, run_file, warn_problems};
use super::Output;
use crate::cli::{DiffArgs, TableOrJson};
use crate::diag::Direction;
use crate::pipeline::filter::{ClientAbsent, Filter};
use crate::pipeline::record::{PacketBody, PacketRecord};
use crate::pipeline::summary::CaptureSummary;
use crate::pipeline::{Config, Control, FieldTrees, Sink};
use crate::report::align::{Aligner, Side};
use crate::report::diff::{
    self, ClientMap, ClientPair, Comparison, DiffResult, FetchSink, Fetcher, FlowKey, MessageDigest,
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
    /// B's clients as A numbers them (none for A).
    map: Option<&'a ClientMap>,
    /// What is compared: the messages this selection keeps.
    filter: &'a Filter,
    first_ts_ns: Option<i64>,
    stats: Stats,
    fingerprints: LeanFingerprints,
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
        let first = *self.first_ts_ns.get_or_insert(p.ts_ns);
        let filter = self.filter;
        if !filter.keep_packet(p, first, names)
            || !super::run::count_selected(&mut self.stats, filter, p, names)
        {
            return Ok(Control::Continue);
        }
        let PacketBody::Game(g) = &p.body else {
            return Ok(Control::Continue);
        };
        let (session, client) = diff::mapped(self.map, p.session, p.client);
        let key = FlowKey {
            session,
            client,
            direction: p.direction,
        };
        let selected = |m: &&crate::pipeline::record::MessageRecord| {
            filter.selects_all_messages() || filter.keep_message(p, m, names)
        };
        for m in g.messages.iter().filter(selected) {
            if let Some(game) = m.delivered_game() {
                let fp = self.fingerprints.of(game);
                self.batch
                    .push(Entry::Digest(key, MessageDigest::new(game.opcode, fp)));
            }
        }
        if self.batch.len() >= BATCH && !self.send() {
            return Ok(Control::Stop);
        }
        Ok(Control::Continue)
    }

    fn field_trees(&self) -> FieldTrees {
        self.filter.field_trees().union(self.fingerprints.trees())
    }

    fn session_ended(&mut self, session: usize) {
        self.batch.push(Entry::SessionEnded(session));
    }

    fn selects_by_player(&self) -> bool {
        self.filter.waits_for_names()
    }
}

/// Read one capture, sending its digests on `tx`; its statistics and summary.
fn read_side(
    path: &str,
    cfg: &Config,
    cmp: &Comparison,
    out: Output,
    tx: SyncSender<Batch>,
    map: Option<&ClientMap>,
    filter: &Filter,
) -> Result<(Stats, CaptureSummary)> {
    let mut sink = DigestSink {
        map,
        filter,
        first_ts_ns: None,
        stats: Stats::default(),
        fingerprints: LeanFingerprints::new(cmp.clone(), cfg.ships.clone()),
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
    sides: &[(&str, Side, Output, &Filter)],
    cfg: &Config,
    cmp: &Comparison,
    al: &mut Aligner,
    map: &ClientMap,
) -> Result<Vec<Result<(Stats, CaptureSummary)>>> {
    std::thread::scope(|scope| {
        let mut readers: Vec<(Side, Receiver<Batch>)> = Vec::new();
        let mut handles = Vec::new();
        for &(path, side, out, filter) in sides {
            let (tx, rx) = sync_channel(BATCHES_IN_FLIGHT);
            readers.push((side, rx));
            let map = (side == Side::B).then_some(map);
            handles.push(scope.spawn(move || read_side(path, cfg, cmp, out, tx, map, filter)));
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

/// Where a client of B stands in A: paired by player name, then slot, then client
/// port, then order, within each session (sessions by order). B's clients left over get
/// numbers past A's, so their flows are B's alone. Both captures are read once first
/// for their clients (as `--client` reads a capture to learn its names).
fn pair_clients(
    a: &str,
    b: &str,
    cfg: &Config,
    out: Output,
) -> Result<(ClientMap, Vec<ClientPair>, [CaptureSummary; 2])> {
    let quiet = Output {
        progress: false,
        verbose: 0,
        ..out
    };
    let (sa, sb) = std::thread::scope(|scope| {
        let ha = scope.spawn(|| run_file(a, cfg, &mut crate::pipeline::NullSink, quiet));
        let sb = run_file(b, cfg, &mut crate::pipeline::NullSink, quiet);
        let sa = ha
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("a reading thread stopped")));
        (sa, sb)
    });
    let (sa, sb) = (
        sa.with_context(|| format!("reading {a}"))?,
        sb.with_context(|| format!("reading {b}"))?,
    );
    let mut map = ClientMap::new();
    let mut pairs = Vec::new();
    for (k, s_b) in sb.sessions.iter().enumerate() {
        let Some(s_a) = sa.sessions.get(k) else {
            for c in &s_b.clients {
                map.insert(
                    (s_b.index, c.index),
                    (s_b.index + sa.sessions.len(), c.index),
                );
            }
            continue;
        };
        let mut free_a: Vec<&crate::pipeline::summary::ClientSummary> =
            s_a.clients.iter().collect();
        let mut free_b: Vec<&crate::pipeline::summary::ClientSummary> =
            s_b.clients.iter().collect();
        type Same = fn(
            &crate::pipeline::summary::ClientSummary,
            &crate::pipeline::summary::ClientSummary,
        ) -> bool;
        let rules: [(&'static str, Same); 4] = [
            ("name", |x, y| x.name.is_some() && x.name == y.name),
            ("slot", |x, y| x.slot.is_some() && x.slot == y.slot),
            ("port", |x, y| {
                x.addr.is_some() && x.addr.map(|a| a.port()) == y.addr.map(|a| a.port())
            }),
            ("order", |_, _| true),
        ];
        for (by, same) in rules {
            let mut k = 0;
            while k < free_b.len() {
                let cb = free_b[k];
                match free_a.iter().position(|ca| same(ca, cb)) {
                    Some(i) => {
                        let ca = free_a.remove(i);
                        free_b.remove(k);
                        map.insert((s_b.index, cb.index), (s_a.index, ca.index));
                        pairs.push(ClientPair {
                            session: s_a.index,
                            a: Some((ca.index, ca.name.clone())),
                            b: Some((cb.index, cb.name.clone())),
                            by,
                        });
                    }
                    None => k += 1,
                }
            }
        }
        for ca in free_a {
            pairs.push(ClientPair {
                session: s_a.index,
                a: Some((ca.index, ca.name.clone())),
                b: None,
                by: "",
            });
        }
        // Only "order" can leave B's clients over when A has fewer.
        let past = s_a.clients.iter().map(|c| c.index + 1).max().unwrap_or(0);
        for (n, cb) in free_b.into_iter().enumerate() {
            map.insert((s_b.index, cb.index), (s_a.index, past + n));
            pairs.push(ClientPair {
                session: s_a.index,
                a: None,
                b: Some((cb.index, cb.name.clone())),
                by: "",
            });
        }
    }
    pairs.sort_by_key(|p| {
        (
            p.session,
            p.a.as_ref().map(|a| a.0),
            p.b.as_ref().map(|b| b.0),
        )
    });
    Ok((map, pairs, [sa, sb]))
}

/// The selection for one side: `--client` resolved against that capture's clients. A
/// client one capture lacks is a note, not an error: that side then has none of the
/// client's flows, which makes the captures different.
fn side_filter(
    filter: &Filter,
    path: &str,
    summary: &CaptureSummary,
    out: Output,
) -> Result<Filter> {
    if !filter.needs_clients() {
        return Ok(filter.clone());
    }
    match filter.for_capture(summary) {
        Ok(f) => Ok(f),
        Err(e) if e.is::<ClientAbsent>() => {
            if !out.quiet {
                eprintln!("bcwire: note: {path}: {e}");
            }
            filter.selecting_no_client()
        }
        Err(e) => Err(anyhow::anyhow!("{path}: {e}")),
    }
}

pub fn diff(a: DiffArgs, out: Output, w: &mut dyn Write) -> Result<i32> {
    let cfg = config(&a.input)?;
    let cmp = Comparison::new(a.include_volatile, &a.ignore).map_err(anyhow::Error::msg)?;
    let mut al = Aligner::new(a.max_differences);
    let filter = Filter::from_spec_with(&super::filter_spec(&a.filter), &cfg.ships)?;
    let (map, pairing, [sum_a, sum_b]) = pair_clients(&a.a, &a.b, &cfg, out)?;
    let (fa_sel, fb_sel) = (
        side_filter(&filter, &a.a, &sum_a, out)?,
        side_filter(&filter, &a.b, &sum_b, out)?,
    );
    // One progress bar (A's: the two are read in step); with -v, whose warnings go to
    // stderr as they are found, one capture after the other so they do not interleave.
    let quiet_bar = Output {
        progress: false,
        ..out
    };
    let results = if out.verbose > 0 {
        let mut r = read_sides(&[(&a.a, Side::A, out, &fa_sel)], &cfg, &cmp, &mut al, &map)?;
        r.extend(read_sides(
            &[(&a.b, Side::B, out, &fb_sel)],
            &cfg,
            &cmp,
            &mut al,
            &map,
        )?);
        r
    } else {
        // Both captures are read at once: a reading thread for each would only compete
        // for the cores.
        let side_cfg = Config {
            front_thread: false,
            ..cfg.clone()
        };
        read_sides(
            &[
                (&a.a, Side::A, out, &fa_sel),
                (&a.b, Side::B, quiet_bar, &fb_sel),
            ],
            &side_cfg,
            &cmp,
            &mut al,
            &map,
        )?
    };
    let mut read = Vec::new();
    let mut flow_names = std::collections::BTreeMap::new();
    for ((path, r), side) in [&a.a, &a.b]
        .into_iter()
        .zip(results)
        .zip([Side::A, Side::B])
    {
        let (stats, summary) = r?;
        warn_problems(path, &summary, &cfg, out);
        read.push(stats);
        // Flows are named by their player (A's name where both captures know one).
        for s in &summary.sessions {
            for c in &s.clients {
                let Some(name) = &c.name else { continue };
                let map = (side == Side::B).then_some(&map);
                let (session, client) = diff::mapped(map, s.index, c.index);
                for direction in [Direction::C2S, Direction::S2C] {
                    let k = FlowKey {
                        session,
                        client,
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
        for (path, side, fetcher, filter) in [
            (&a.a, Side::A, &mut fa, &fa_sel),
            (&a.b, Side::B, &mut fb, &fb_sel),
        ] {
            let wanted = result.wanted_in(side);
            run_file(
                path,
                &cfg,
                &mut FetchSink {
                    fetcher,
                    wanted: &wanted,
                    map: (side == Side::B).then_some(&map),
                    filter,
                    first_ts_ns: None,
                },
                out,
            )?;
        }
        diff::explain(&mut result, &fa, &fb, &cmp, a.max_differences);
    }
    result.flow_names = flow_names;
    result.pairing = pairing;
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
