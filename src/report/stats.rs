//! `bcwire stats`: per-direction counters and histograms, as tables with bars or JSON.

use super::names::Names;
use super::schema;
use super::table::{right, table};
use super::term::Palette;
use crate::diag::{Code, Direction};
use crate::game::dirty::flag_names;
use crate::pipeline::record::{MessageRecord, PacketBody, PacketRecord, TransportInfo};
use crate::pipeline::summary::DirSummary;
use crate::pipeline::tally::Tally;
use comfy_table::{Cell, Table};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Counts keyed by a byte (opcode, transport type, start index): a flat array, because
/// it is bumped for every message; iteration yields only the non-zero keys, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ByteCounts(Box<[u64; 256]>);

impl Default for ByteCounts {
    fn default() -> Self {
        ByteCounts(Box::new([0; 256]))
    }
}

impl ByteCounts {
    pub fn add(&mut self, key: u8, n: u64) {
        self.0[key as usize] += n;
    }
    /// The count of `key`, None when zero (like a map without the key).
    pub fn get(&self, key: &u8) -> Option<&u64> {
        Some(&self.0[*key as usize]).filter(|n| **n > 0)
    }
    pub fn iter(&self) -> impl Iterator<Item = (u8, u64)> + '_ {
        self.0
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(k, n)| (k as u8, *n))
    }
    pub fn keys(&self) -> impl Iterator<Item = u8> + '_ {
        self.iter().map(|(k, _)| k)
    }
    pub fn values(&self) -> impl Iterator<Item = u64> + '_ {
        self.iter().map(|(_, n)| n)
    }
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|n| *n == 0)
    }
    /// Number of keys with a non-zero count.
    pub fn len(&self) -> usize {
        self.0.iter().filter(|n| **n > 0).count()
    }
    pub fn merge(&mut self, other: &ByteCounts) {
        for (a, b) in self.0.iter_mut().zip(other.0.iter()) {
            *a += b;
        }
    }
}

impl std::ops::Index<&u8> for ByteCounts {
    type Output = u64;
    fn index(&self, key: &u8) -> &u64 {
        &self.0[*key as usize]
    }
}

/// Counters for one direction: the transport figures every command shares, counted
/// by the one counter type, and the histograms only `stats` and the report draw.
#[derive(Debug, Clone)]
pub struct DirectionStats {
    /// Datagrams (`packets`), bytes, messages, retransmissions, ACKs, warnings … of the
    /// counted records, as `info` and `flows` count them.
    pub counts: DirSummary,
    pub transport_types: ByteCounts,
    /// Delivered game messages by opcode (retransmitted copies excluded).
    pub opcodes: ByteCounts,
    pub opcode_bytes: ByteCounts,
    pub duplicate_acks: u64,
    pub fragments: u64,
    /// Creations of an object id another live object held.
    pub object_id_conflicts: u64,
    /// StateUpdates by their whole flags byte; the per-bit counts are read from it
    /// ([`DirectionStats::dirty_bits`]).
    pub dirty_flags: Box<[u64; 256]>,
    pub subsystem_start: ByteCounts,
}

impl Default for DirectionStats {
    fn default() -> Self {
        DirectionStats {
            counts: DirSummary::default(),
            transport_types: ByteCounts::default(),
            opcodes: ByteCounts::default(),
            opcode_bytes: ByteCounts::default(),
            duplicate_acks: 0,
            fragments: 0,
            object_id_conflicts: 0,
            dirty_flags: Box::new([0; 256]),
            subsystem_start: ByteCounts::default(),
        }
    }
}

impl DirectionStats {
    /// StateUpdates with each flag bit set, bit 0 first: summed from the flags-byte
    /// histogram once, when shown, rather than counted bit by bit for every update.
    pub fn dirty_bits(&self) -> [u64; 8] {
        let mut bits = [0; 8];
        for (flags, n) in self.dirty_flags.iter().enumerate() {
            for (bit, count) in bits.iter_mut().enumerate() {
                if flags & (1 << bit) != 0 {
                    *count += n;
                }
            }
        }
        bits
    }

    /// Add another capture's counters to these.
    pub fn merge(&mut self, o: &DirectionStats) {
        self.counts.add(&o.counts);
        self.transport_types.merge(&o.transport_types);
        self.opcodes.merge(&o.opcodes);
        self.opcode_bytes.merge(&o.opcode_bytes);
        self.duplicate_acks += o.duplicate_acks;
        self.fragments += o.fragments;
        self.object_id_conflicts += o.object_id_conflicts;
        for (a, b) in self.dirty_flags.iter_mut().zip(o.dirty_flags.iter()) {
            *a += b;
        }
        self.subsystem_start.merge(&o.subsystem_start);
    }

    /// Game datagrams: every counted datagram but GameSpy text (a datagram too short to
    /// decode makes no record, so none is counted here).
    pub fn game_datagrams(&self) -> u64 {
        self.counts.packets - self.counts.gamespy
    }
}

/// What the dirty-flag histograms are broken down by (`stats --by`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatsBy {
    Object,
    Class,
    Client,
}

/// The whole `stats` accumulator; fed one record at a time.
#[derive(Debug, Default)]
pub struct Stats {
    pub dirs: [DirectionStats; 2],
    by: Option<StatsBy>,
    /// (direction, key) → dirty-flag combination counts, for `--by`.
    breakdown: BTreeMap<(Direction, String), BTreeMap<u8, u64>>,
    interval_ns: Option<i64>,
    time_format: super::timefmt::TimeFormat,
    /// bucket index → messages per direction.
    buckets: BTreeMap<i64, [u64; 2]>,
    pub first_ts_ns: Option<i64>,
    pub last_ts_ns: Option<i64>,
    /// How clients left ("disconnect", "boot: kicked", "timeout" …), known only at the
    /// end of a capture.
    pub departures: BTreeMap<String, u64>,
}

impl Stats {
    /// How the rates table writes the start of each bucket (`-t`).
    pub fn with_time_format(mut self, t: super::timefmt::TimeFormat) -> Stats {
        self.time_format = t;
        self
    }

    pub fn new(by: Option<StatsBy>, interval_ns: Option<i64>) -> Stats {
        Stats {
            by,
            interval_ns,
            ..Stats::default()
        }
    }

    pub fn add(&mut self, p: &PacketRecord, names: &dyn Names) {
        self.add_selected(p, names, |_| true);
    }

    /// [`Stats::add`] counting only the messages `keep` accepts (a message filter or
    /// `-Y`); the datagram itself is counted whole. Generic over `keep` rather than
    /// taking a `dyn Fn`: without a filter (`add`) the test is `true`, compiled away
    /// instead of an indirect call per message.
    pub fn add_selected<F: Fn(&MessageRecord) -> bool>(
        &mut self,
        p: &PacketRecord,
        names: &dyn Names,
        keep: F,
    ) {
        let first = *self.first_ts_ns.get_or_insert(p.ts_ns);
        self.last_ts_ns = Some(p.ts_ns);
        let d = &mut self.dirs[p.direction.index()];
        d.counts.count_datagram(p);
        let PacketBody::Game(g) = &p.body else {
            return;
        };
        let mut delivered_here = 0u64;
        for m in g.messages.iter().filter(|m| keep(m)) {
            d.counts.count_message(m);
            d.transport_types.add(m.transport_type, 1);
            // One look at the transport: a fragment and a duplicate ACK exclude
            // each other.
            match m.transport {
                TransportInfo::Data {
                    fragment: Some(_), ..
                } => d.fragments += 1,
                TransportInfo::Ack {
                    duplicate: true, ..
                } => d.duplicate_acks += 1,
                _ => {}
            }
            let Some(game) = m.delivered_game() else {
                continue;
            };
            delivered_here += 1;
            // Most messages warn of nothing: the scan is skipped for them.
            if !game.warnings.is_empty() {
                d.object_id_conflicts += game
                    .warnings
                    .iter()
                    .filter(|w| w.code == Code::ObjectIdConflict)
                    .count() as u64;
            }
            d.opcodes.add(game.opcode, 1);
            d.opcode_bytes.add(game.opcode, game.length as u64);
            if let Some(su) = game.state_update() {
                d.dirty_flags[su.flags as usize] += 1;
                if let Some(s) = su.subsystem_start {
                    d.subsystem_start.add(s, 1);
                }
                if let Some(by) = self.by {
                    let key = match by {
                        StatsBy::Object => names
                            .describe_object(p.session, su.object_id)
                            .map(|n| format!("0x{:08X} {n}", su.object_id))
                            .unwrap_or_else(|| format!("0x{:08X}", su.object_id)),
                        StatsBy::Class => names
                            .object_class(p.session, su.object_id)
                            .unwrap_or_else(|| "(unknown class)".into()),
                        StatsBy::Client => {
                            names.client_name(p.session, p.client).unwrap_or_else(|| {
                                format!("session {} client {}", p.session, p.client)
                            })
                        }
                    };
                    *self
                        .breakdown
                        .entry((p.direction, key))
                        .or_default()
                        .entry(su.flags)
                        .or_default() += 1;
                }
            }
        }
        if let Some(step) = self.interval_ns.filter(|s| *s > 0) {
            let bucket = (p.ts_ns - first) / step;
            self.buckets.entry(bucket).or_default()[p.direction.index()] += delivered_here;
        }
    }

    /// Whether [`Stats::add_tally`] counts all [`Stats::add`] would: not when the
    /// dirty flags are broken down by object, class or client, which tallies lack.
    pub fn counts_tallies(&self) -> bool {
        self.by.is_none()
    }

    /// [`Stats::add`] of a datagram's tally (see [`Stats::counts_tallies`]): the same
    /// figures, read from what the pipeline counted instead of from a record.
    pub fn add_tally(&mut self, t: &Tally) {
        let first = *self.first_ts_ns.get_or_insert(t.ts_ns);
        self.last_ts_ns = Some(t.ts_ns);
        let d = &mut self.dirs[t.direction.index()];
        d.counts.count_datagram_tally(t);
        if t.gamespy {
            return;
        }
        let mut delivered_here = 0u64;
        for m in &t.messages {
            d.counts.count_message_tally(m);
            d.transport_types.add(m.transport_type, 1);
            d.fragments += u64::from(m.fragment);
            d.duplicate_acks += u64::from(m.duplicate_ack);
            let Some(game) = &m.game else {
                continue;
            };
            delivered_here += 1;
            d.object_id_conflicts += game.object_id_conflicts;
            d.opcodes.add(game.opcode, 1);
            d.opcode_bytes.add(game.opcode, game.length as u64);
            if let Some((flags, start)) = game.state_update {
                d.dirty_flags[flags as usize] += 1;
                if let Some(s) = start {
                    d.subsystem_start.add(s, 1);
                }
            }
        }
        if let Some(step) = self.interval_ns.filter(|s| *s > 0) {
            let bucket = (t.ts_ns - first) / step;
            self.buckets.entry(bucket).or_default()[t.direction.index()] += delivered_here;
        }
    }

    /// Every bucket from the first to the last, empty ones included, as (start, span,
    /// messages per direction) in nanoseconds from the first frame. The last bucket
    /// spans only up to the last frame, so its rate is not diluted by time the capture
    /// does not cover. Past [`MAX_FILLED_BUCKETS`] only the buckets with messages are
    /// listed.
    fn series(&self, step: i64) -> Vec<(i64, i64, [u64; 2])> {
        let (Some(first), Some(last)) = (self.first_ts_ns, self.last_ts_ns) else {
            return Vec::new();
        };
        let covered = last - first;
        let last_bucket = covered / step;
        let span = |b: i64| (covered - b * step).clamp(0, step);
        if last_bucket >= MAX_FILLED_BUCKETS {
            return self
                .buckets
                .iter()
                .map(|(b, c)| (b * step, span(*b), *c))
                .collect();
        }
        (0..=last_bucket)
            .map(|b| {
                let c = self.buckets.get(&b).copied().unwrap_or_default();
                (b * step, span(b), c)
            })
            .collect()
    }

    /// Add the figures of another capture read with the same options. Rates over time
    /// (`--interval`) are bucketed from the first frame of the whole input, so captures
    /// with rates are read one after the other into one accumulator instead.
    pub fn merge(&mut self, o: &Stats) {
        debug_assert!(self.interval_ns.is_none() && o.interval_ns.is_none());
        for (a, b) in self.dirs.iter_mut().zip(o.dirs.iter()) {
            a.merge(b);
        }
        self.add_departures(&o.departures);
        for (key, hist) in &o.breakdown {
            let mine = self.breakdown.entry(key.clone()).or_default();
            for (flags, n) in hist {
                *mine.entry(*flags).or_default() += n;
            }
        }
        self.first_ts_ns = match (self.first_ts_ns, o.first_ts_ns) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.last_ts_ns = match (self.last_ts_ns, o.last_ts_ns) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
    }

    /// How the clients of a capture left, known only at its end.
    pub fn add_departures(&mut self, d: &BTreeMap<String, u64>) {
        for (how, n) in d {
            *self.departures.entry(how.clone()).or_default() += n;
        }
    }

    /// Unacknowledged reliable messages, known only at the end of a capture.
    pub fn add_unacked(&mut self, dir: Direction, n: u64) {
        self.dirs[dir.index()].counts.unacked += n;
    }

    /// The `stats --format json` document.
    pub fn to_doc(&self) -> schema::StatsDocument {
        let [c2s, s2c] = &self.dirs;
        let by = self.by.is_some().then(|| {
            let mut by: BTreeMap<String, BTreeMap<String, schema::Count>> = BTreeMap::new();
            for ((dir, key), hist) in &self.breakdown {
                by.entry(dir.as_str().to_string())
                    .or_default()
                    .insert(key.clone(), hex_hist(hist.iter().map(|(k, v)| (*k, *v))));
            }
            by
        });
        let rates = self.interval_ns.map(|step| {
            self.series(step)
                .into_iter()
                .map(|(start, span, c)| schema::Rate {
                    start: start as f64 / 1e9,
                    span: span as f64 / 1e9,
                    c2s: c[0],
                    s2c: c[1],
                })
                .collect()
        });
        schema::StatsDocument {
            schema_version: super::json::SCHEMA_VERSION,
            directions: schema::StatsDirections {
                c2s: direction_doc(c2s),
                s2c: direction_doc(s2c),
            },
            departures: self.departures.clone(),
            duration: match (self.first_ts_ns, self.last_ts_ns) {
                (Some(a), Some(b)) => (b - a) as f64 / 1e9,
                _ => 0.0,
            },
            by,
            interval: self.interval_ns.map(|step| step as f64 / 1e9),
            rates,
        }
    }

    pub fn render(&self, pal: Palette) -> String {
        let mut out = String::new();
        let [c, s] = &self.dirs;
        let (cc, sc) = (&c.counts, &s.counts);
        let mut t = table(&["", "c2s", "s2c"]);
        let rows: [(&str, u64, u64); 15] = [
            ("datagrams", cc.packets, sc.packets),
            ("  game", c.game_datagrams(), s.game_datagrams()),
            ("  GameSpy", cc.gamespy, sc.gamespy),
            ("UDP payload bytes", cc.bytes, sc.bytes),
            ("transport messages", cc.messages, sc.messages),
            (
                "game messages delivered",
                c.opcodes.values().sum(),
                s.opcodes.values().sum(),
            ),
            ("retransmissions", cc.retransmissions, sc.retransmissions),
            ("ACKs (duplicate)", cc.acks, sc.acks),
            ("fragments", c.fragments, s.fragments),
            (
                "fragment sets completed",
                cc.fragment_sets_completed,
                sc.fragment_sets_completed,
            ),
            ("unacknowledged at end", cc.unacked, sc.unacked),
            ("sequence gaps", cc.seq_gaps, sc.seq_gaps),
            ("out of order", cc.seq_late, sc.seq_late),
            (
                "object id conflicts",
                c.object_id_conflicts,
                s.object_id_conflicts,
            ),
            ("warnings (non-stock)", cc.warnings, sc.warnings),
        ];
        for (name, a, b) in rows {
            let (a, b) = match name {
                "ACKs (duplicate)" => (
                    format!("{a} ({})", c.duplicate_acks),
                    format!("{b} ({})", s.duplicate_acks),
                ),
                "warnings (non-stock)" => (
                    format!("{a} ({})", cc.non_stock),
                    format!("{b} ({})", sc.non_stock),
                ),
                _ => (a.to_string(), b.to_string()),
            };
            t.add_row(vec![Cell::new(name), right(a), right(b)]);
        }
        let t = t.trim_fmt();
        let _ = writeln!(out, "{}\n{t}\n", pal.heading("Traffic"));
        if !self.departures.is_empty() {
            let mut t = table(&["how", "clients"]);
            for (how, n) in &self.departures {
                t.add_row(vec![Cell::new(how), right(n.to_string())]);
            }
            let _ = writeln!(out, "{}\n{t}\n", pal.heading("Clients left"));
        }

        for dir in [Direction::C2S, Direction::S2C] {
            let d = &self.dirs[dir.index()];
            if d.opcodes.is_empty() {
                continue;
            }
            let mut t = table(&["opcode", "name", "messages", "bytes", ""]);
            let max = d.opcodes.values().max().unwrap_or(1);
            for (op, n) in d.opcodes.iter() {
                t.add_row(vec![
                    Cell::new(format!("0x{op:02X}")),
                    Cell::new(crate::game::opcodes::opcode_name(op)),
                    right(n.to_string()),
                    right(d.opcode_bytes[&op].to_string()),
                    Cell::new(bar(n, max)),
                ]);
            }
            let t = t.trim_fmt();
            let _ = writeln!(out, "{}\n{t}\n", pal.heading(&format!("Opcodes {dir}")));
        }

        for dir in [Direction::C2S, Direction::S2C] {
            let d = &self.dirs[dir.index()];
            let total: u64 = d.dirty_flags.iter().sum();
            if total == 0 {
                continue;
            }
            let _ = writeln!(
                out,
                "{}\n{}\n",
                pal.heading(&format!("StateUpdate dirty flags {dir} ({total} updates)")),
                flag_hist_table(
                    d.dirty_flags.iter().enumerate().map(|(k, v)| (k as u8, *v)),
                    total
                )
            );
            let mut t = table(&["bit", "name", "updates", "%", ""]);
            let dirty_bits = d.dirty_bits();
            let max = dirty_bits.iter().copied().max().unwrap_or(1);
            for (bit, n) in dirty_bits.iter().enumerate() {
                let mask = 1u8 << bit;
                t.add_row(vec![
                    Cell::new(format!("0x{mask:02X}")),
                    Cell::new(flag_names(mask)),
                    right(n.to_string()),
                    right(percent(*n, total)),
                    Cell::new(bar(*n, max)),
                ]);
            }
            let t = t.trim_fmt();
            let _ = writeln!(out, "{}\n{t}\n", pal.heading(&format!("Dirty bits {dir}")));
            if !d.subsystem_start.is_empty() {
                let starts: u64 = d.subsystem_start.values().sum();
                let max = d.subsystem_start.values().max().unwrap_or(1);
                let mut t = table(&["start index", "updates", "%", ""]);
                for (i, n) in d.subsystem_start.iter() {
                    t.add_row(vec![
                        right(i.to_string()),
                        right(n.to_string()),
                        right(percent(n, starts)),
                        Cell::new(bar(n, max)),
                    ]);
                }
                let t = t.trim_fmt();
                let _ = writeln!(
                    out,
                    "{}\n{t}\n",
                    pal.heading(&format!("Subsystem block start index {dir}"))
                );
            }
        }
        for ((dir, key), hist) in &self.breakdown {
            let total: u64 = hist.values().sum();
            let _ = writeln!(
                out,
                "{}\n{}\n",
                pal.heading(&format!("Dirty flags {dir} — {key} ({total} updates)")),
                flag_hist_table(hist.iter().map(|(k, v)| (*k, *v)), total)
            );
        }
        if let Some(step) = self.interval_ns {
            use super::timefmt::{Clock, TimeFormat};
            let first = self.first_ts_ns.unwrap_or(0);
            let (absolute, heading) = match self.time_format {
                TimeFormat::E => (true, "from (epoch s)"),
                TimeFormat::U | TimeFormat::Ud | TimeFormat::Udoy => (true, "from (UTC)"),
                TimeFormat::A | TimeFormat::Ad | TimeFormat::Adoy => (true, "from"),
                TimeFormat::R | TimeFormat::D | TimeFormat::Dd => (false, "from (s)"),
            };
            let mut clock = Clock::new(self.time_format);
            let mut t = table(&[heading, "c2s msgs", "s2c msgs", "c2s/s", "s2c/s"]);
            for (start, span, c) in self.series(step) {
                let rate = |n: u64| {
                    if span > 0 {
                        format!("{:.1}", n as f64 / (span as f64 / 1e9))
                    } else {
                        "-".to_string()
                    }
                };
                let from = if absolute {
                    clock.render(first + start)
                } else {
                    format!("{:.1}", start as f64 / 1e9)
                };
                t.add_row(vec![
                    right(from),
                    right(c[0].to_string()),
                    right(c[1].to_string()),
                    right(rate(c[0])),
                    right(rate(c[1])),
                ]);
            }
            let t = t.trim_fmt();
            let _ = writeln!(out, "{}\n{t}", pal.heading("Game messages over time"));
        }
        out
    }
}

fn direction_doc(d: &DirectionStats) -> schema::StatsDirection {
    let c = &d.counts;
    schema::StatsDirection {
        datagrams: c.packets,
        game_datagrams: d.game_datagrams(),
        gamespy_datagrams: c.gamespy,
        bytes: c.bytes,
        messages: c.messages,
        transport_types: hex_hist(d.transport_types.iter()),
        game_messages: d.opcodes.values().sum::<u64>(),
        opcodes: hex_hist(d.opcodes.iter()),
        opcode_bytes: hex_hist(d.opcode_bytes.iter()),
        retransmissions: c.retransmissions,
        acks: c.acks,
        duplicate_acks: d.duplicate_acks,
        fragments: d.fragments,
        fragment_sets_completed: c.fragment_sets_completed,
        unacked: c.unacked,
        warnings: c.warnings,
        non_stock: c.non_stock,
        seq_gaps: c.seq_gaps,
        seq_late: c.seq_late,
        object_id_conflicts: d.object_id_conflicts,
        dirty_flags: hex_hist(d.dirty_flags.iter().enumerate().map(|(k, v)| (k as u8, *v))),
        dirty_bits: hex_hist(
            d.dirty_bits()
                .into_iter()
                .enumerate()
                .map(|(b, n)| (1u8 << b, n)),
        ),
        subsystem_start: schema::OrderedCount(
            d.subsystem_start
                .iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        ),
    }
}

/// `{"0x9E": n, …}` with zero counts left out.
fn hex_hist(it: impl Iterator<Item = (u8, u64)>) -> schema::Count {
    it.filter(|(_, v)| *v > 0)
        .map(|(k, v)| (format!("0x{k:02X}"), v))
        .collect()
}

fn flag_hist_table(it: impl Iterator<Item = (u8, u64)>, total: u64) -> Table {
    let mut rows: Vec<(u8, u64)> = it.filter(|(_, v)| *v > 0).collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let max = rows.first().map(|r| r.1).unwrap_or(1);
    let mut t = table(&["flags", "fields", "updates", "%", ""]);
    for (flags, n) in rows {
        t.add_row(vec![
            Cell::new(format!("0x{flags:02X}")),
            Cell::new(flag_names(flags)),
            right(n.to_string()),
            right(percent(n, total)),
            Cell::new(bar(n, max)),
        ]);
    }
    t
}

/// Rate buckets listed one by one, empty ones too; a finer `--interval` over a long
/// capture lists only the buckets with messages. At 100,000, a damaged timestamp 27
/// hours into a short capture made `stats --interval 1` lay out a 98,000-row table of
/// zeros (166 MB, 0.5 s); 10,000 rows is more than anyone reads (2.8 hours at 1 s).
const MAX_FILLED_BUCKETS: i64 = 10_000;

fn percent(n: u64, total: u64) -> String {
    if total == 0 {
        "-".into()
    } else {
        format!("{:.1}", n as f64 * 100.0 / total as f64)
    }
}

/// A horizontal bar of up to 30 cells, with eighth-block resolution.
pub fn bar(n: u64, max: u64) -> String {
    const WIDTH: u64 = 30;
    const PARTS: [char; 8] = [' ', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];
    if max == 0 {
        return String::new();
    }
    let eighths = (n * WIDTH * 8).div_ceil(max);
    let mut s = "█".repeat((eighths / 8) as usize);
    if !eighths.is_multiple_of(8) {
        s.push(PARTS[(eighths % 8) as usize]);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_scale_to_the_maximum() {
        assert_eq!(bar(10, 10).chars().count(), 30);
        assert_eq!(bar(5, 10).chars().count(), 15);
        assert_eq!(bar(0, 10), "");
        assert_eq!(bar(1, 1000).chars().count(), 1);
    }

    // Found by fuzzing: a frame whose timestamp jumps a day ahead must not make the
    // rates list every empty second in between.
    #[test]
    fn rates_list_empty_buckets_only_over_a_bounded_span() {
        let second = 1_000_000_000i64;
        let mut s = Stats::new(None, Some(second));
        s.first_ts_ns = Some(0);
        s.last_ts_ns = Some(98_183 * second + second / 2);
        s.buckets.insert(0, [1, 0]);
        s.buckets.insert(98_183, [0, 1]);
        let series = s.series(second);
        assert_eq!(series.len(), 2, "only the buckets with messages");
        assert_eq!(series[1], (98_183 * second, second / 2, [0, 1]));
        // A span under the bound lists every bucket, empty ones included.
        s.last_ts_ns = Some(5 * second);
        s.buckets.remove(&98_183);
        s.buckets.insert(5, [0, 1]);
        assert_eq!(s.series(second).len(), 6);
    }

    #[test]
    fn histogram_json_uses_hex_keys_and_skips_zero() {
        let j = hex_hist([(0x9E, 3), (0x20, 0)].into_iter());
        assert_eq!(j, [("0x9E".to_string(), 3)].into_iter().collect());
    }
}
