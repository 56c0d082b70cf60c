//! `bcwire diff`: compare two captures by meaning, not bytes.
//!
//! Each capture is reduced to a digest: statistics, and per flow (session, client,
//! direction) the sequence of delivered game messages as (opcode, fingerprint of the
//! non-volatile fields). Digests are compared; for aligned messages whose fingerprints
//! differ, a second look fetches their fields so the differences can be named.
//!
//! Why this file is long: the code ends at about 680 lines; the rest is tests, among them a reference
//! alignment over whole sequences that the incremental one must equal in any
//! interleaving.

use super::align::Aligner;
pub use super::diff_model::{
    mapped, ClientMap, ClientPair, DiffResult, Divergence, FieldDifference, FieldMismatch, FlowKey,
    MessageDigest, Side,
};
use super::names::Names;
use super::schema;
use super::stats::Stats;
use super::table::{right, table};
use super::term::Palette;
use super::text::value_text;
use crate::diag::Direction;
use crate::game::field::{Field, Value};
use crate::game::path::{self, FieldPath};
use crate::game::GameMessage;
use crate::pipeline::record::{GamePacket, MessageRecord, PacketBody, PacketRecord};
use crate::pipeline::{Control, Sink};
use comfy_table::Cell;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt::Write as _;
use std::hash::{Hash, Hasher};

/// Field names ignored by default: they differ between any two runs of the same session.
pub const VOLATILE_FIELDS: &[&str] = &["game_time", "time", "timestamp", "clock"];

/// Which fields take part in comparisons.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// Bare names: a field of that name is left out at any depth (the volatile
    /// fields, and `--ignore NAME`).
    pub ignore: Vec<String>,
    /// Paths and patterns (`subsystems[*].condition_pct`): what they name, and what
    /// lies under it, is left out (`--ignore PATH`).
    pub paths: Vec<FieldPath>,
}

impl Comparison {
    /// `extra_ignore`: names and paths to leave out, in the path syntax of
    /// [`crate::game::path`]; a malformed one is refused.
    pub fn new(include_volatile: bool, extra_ignore: &[String]) -> Result<Comparison, String> {
        let mut ignore = Vec::new();
        let mut paths = Vec::new();
        for text in extra_ignore {
            let p: FieldPath = text
                .parse()
                .map_err(|e| format!("--ignore {text:?}: not a field path ({e})"))?;
            match p.bare_name() {
                Some(name) => ignore.push(name.to_string()),
                None => paths.push(p),
            }
        }
        if !include_volatile {
            ignore.extend(VOLATILE_FIELDS.iter().map(|s| s.to_string()));
        }
        Ok(Comparison { ignore, paths })
    }

    /// The default comparison (volatile fields left out).
    pub fn standard() -> Comparison {
        Comparison {
            ignore: VOLATILE_FIELDS.iter().map(|s| s.to_string()).collect(),
            paths: Vec::new(),
        }
    }

    /// Whether fields called `name` are left out, at any depth.
    pub fn ignores(&self, name: &str) -> bool {
        self.ignore.iter().any(|i| i == name)
    }

    /// Whether the value at the concrete `path` is left out.
    fn ignores_path(&self, path: &str) -> bool {
        if self.paths.is_empty() && self.ignore.is_empty() {
            return false;
        }
        match path.parse::<FieldPath>() {
            Ok(p) => {
                self.paths.iter().any(|pat| pat.matches(&p))
                    || self.ignore.iter().any(|n| p.has_name(n))
            }
            Err(_) => false,
        }
    }

    /// Fingerprint of a message: opcode and every non-ignored field, recursively.
    pub fn fingerprint(&self, g: &GameMessage) -> u64 {
        let mut h = super::fold_hash::FoldHasher::default();
        g.opcode.hash(&mut h);
        if self.paths.is_empty() {
            self.hash_fields(&g.fields, &mut h);
        } else {
            // Paths name leaves: hash each kept leaf with its path.
            path::leaves(&g.fields, &mut |p, v| {
                if !self.ignores_path(p) {
                    p.hash(&mut h);
                    self.hash_value(v, &mut h);
                }
            });
        }
        h.finish()
    }

    /// Hash `fields` as [`Comparison::fingerprint`] hashes a message's tree, leaving
    /// out the ignored names at any depth.
    pub(super) fn hash_fields(&self, fields: &[Field], h: &mut impl Hasher) {
        for f in fields {
            if self.ignores(&f.name) {
                continue;
            }
            f.name.hash(h);
            self.hash_value(&f.value, h);
        }
    }

    fn hash_value(&self, v: &Value, h: &mut impl Hasher) {
        std::mem::discriminant(v).hash(h);
        match v {
            Value::Bool(b) => b.hash(h),
            Value::Uint(n) | Value::Hex(n) => n.hash(h),
            Value::Int(n) => n.hash(h),
            Value::Float(f) => f.to_bits().hash(h),
            Value::ObjectId(n) => n.hash(h),
            Value::Text(s) => s.hash(h),
            Value::Vec3(v) => v.iter().for_each(|c| c.to_bits().hash(h)),
            Value::Bytes(b) => b.hash(h),
            Value::List(items) => items.iter().for_each(|i| self.hash_value(i, h)),
            Value::Group(fields) => self.hash_fields(fields, h),
        }
    }

    /// The differences between two messages, value by value and matched by path (so
    /// subsystem records match by key, whatever their places): A's paths in A's order,
    /// then the paths only B has, in B's order. Ignored paths are left out.
    pub fn field_differences(&self, a: &GameMessage, b: &GameMessage) -> Vec<FieldDifference> {
        // Values are compared as decoded (text may round two values alike).
        let collect = |g: &'_ GameMessage| {
            let mut v: Vec<(String, Value)> = Vec::new();
            path::leaves(&g.fields, &mut |p, val| {
                if !self.ignores_path(p) {
                    v.push((p.to_string(), val.clone()));
                }
            });
            v
        };
        let (la, lb) = (collect(a), collect(b));
        let in_b: HashMap<&str, &Value> = lb.iter().map(|(p, v)| (p.as_str(), v)).collect();
        let in_a: HashMap<&str, &Value> = la.iter().map(|(p, v)| (p.as_str(), v)).collect();
        // A list element one side lacks altogether is one row (`power_block[repair]:
        // A {…} B (absent)`), not a row per value of it.
        let prefixes = |l: &[(String, Value)]| -> HashSet<String> {
            l.iter()
                .flat_map(|(p, _)| element_prefixes(p).map(str::to_string).collect::<Vec<_>>())
                .collect()
        };
        let (pa, pb) = (prefixes(&la), prefixes(&lb));
        let mut collapsed: HashSet<String> = HashSet::new();
        let mut out = Vec::new();
        let mut absent = |p: &str,
                          other: &HashSet<String>,
                          g: &GameMessage,
                          out: &mut Vec<FieldDifference>,
                          a_side: bool|
         -> bool {
            let Some(prefix) = element_prefixes(p).find(|x| !other.contains(*x)) else {
                return false;
            };
            if prefix != p && collapsed.insert(format!("{a_side}{prefix}")) {
                let text = prefix
                    .parse::<FieldPath>()
                    .ok()
                    .and_then(|fp| fp.resolve(&g.fields).first().map(|v| value_text(v)));
                let (x, y) = if a_side { (text, None) } else { (None, text) };
                out.push(FieldDifference {
                    path: prefix.to_string(),
                    a: x,
                    b: y,
                });
            }
            prefix != p
        };
        for (p, x) in &la {
            match in_b.get(p.as_str()) {
                Some(y) if *y == x => {}
                None if absent(p, &pb, a, &mut out, true) => {}
                y => out.push(FieldDifference {
                    path: p.clone(),
                    a: Some(value_text(x)),
                    b: y.map(|y| value_text(y)),
                }),
            }
        }
        for (p, y) in &lb {
            if !in_a.contains_key(p.as_str()) && !absent(p, &pa, b, &mut out, false) {
                out.push(FieldDifference {
                    path: p.clone(),
                    a: None,
                    b: Some(value_text(y)),
                });
            }
        }
        out
    }
}

/// The prefixes of a concrete path that end at a list element, shortest first:
/// `a[x].b[y].c` → `a[x]`, `a[x].b[y]`.
fn element_prefixes(path: &str) -> impl Iterator<Item = &str> {
    path.match_indices(']').map(move |(i, _)| &path[..=i])
}

/// What one capture reduces to.
#[derive(Debug, Default)]
pub struct Digest {
    pub stats: Stats,
    pub flows: BTreeMap<FlowKey, Vec<MessageDigest>>,
}

impl Digest {
    /// Add a full record: messages are fingerprinted by their field trees.
    pub fn add(&mut self, p: &PacketRecord, names: &dyn Names, cmp: &Comparison) {
        self.add_with(p, names, |_, _, game| cmp.fingerprint(game));
    }

    /// Add a record whose delivered messages `fingerprint` reduces (records without
    /// every field tree take
    /// [`LeanFingerprints::of`](super::fingerprint::LeanFingerprints::of)).
    pub fn add_with(
        &mut self,
        p: &PacketRecord,
        names: &dyn Names,
        fingerprint: impl Fn(&GamePacket, &MessageRecord, &GameMessage) -> u64,
    ) {
        self.stats.add(p, names);
        let key = FlowKey {
            session: p.session,
            client: p.client,
            direction: p.direction,
        };
        if let PacketBody::Game(g) = &p.body {
            for m in &g.messages {
                if let Some(game) = m.delivered_game() {
                    self.flows
                        .entry(key)
                        .or_default()
                        .push(MessageDigest::new(game.opcode, fingerprint(g, m, game)));
                }
            }
        }
    }
}

/// Compare two digests; fails only when spilling to a temporary file fails.
pub fn compare(a: &Digest, b: &Digest, max_differences: usize) -> std::io::Result<DiffResult> {
    let mut al = Aligner::new(max_differences);
    for (side, d) in [(Side::A, a), (Side::B, b)] {
        for (k, seq) in &d.flows {
            for m in seq {
                al.push(side, *k, *m)?;
            }
        }
        al.end(side)?;
    }
    let mut r = DiffResult::default();
    count_rows(&mut r, &a.stats, &b.stats);
    al.finish(&mut r)?;
    Ok(r)
}

/// The opcode and dirty-flag count rows of two captures' statistics.
pub fn count_rows(r: &mut DiffResult, a: &Stats, b: &Stats) {
    for dir in [Direction::C2S, Direction::S2C] {
        let (da, db) = (&a.dirs[dir.index()], &b.dirs[dir.index()]);
        let ops: BTreeSet<u8> = da.opcodes.keys().chain(db.opcodes.keys()).collect();
        for op in ops {
            let x = da.opcodes.get(&op).copied().unwrap_or(0);
            let y = db.opcodes.get(&op).copied().unwrap_or(0);
            r.opcode_rows.push((dir, op, x, y));
        }
        for flags in 0..=255u8 {
            let (x, y) = (
                da.dirty_flags[flags as usize],
                db.dirty_flags[flags as usize],
            );
            if x != 0 || y != 0 {
                r.flag_rows.push((dir, flags, x, y));
            }
        }
    }
}

/// A sink that fetches the `wanted` messages' fields and stops once it has them all.
pub struct FetchSink<'a> {
    pub fetcher: &'a mut Fetcher,
    pub wanted: &'a BTreeSet<(FlowKey, usize)>,
    /// B's clients as A numbers them (none for A).
    pub map: Option<&'a ClientMap>,
    /// The selection the digests were taken under: messages are counted as it counted
    /// them.
    pub filter: &'a crate::pipeline::filter::Filter,
    pub first_ts_ns: Option<i64>,
}

impl Sink for FetchSink<'_> {
    fn packet(&mut self, p: &PacketRecord, names: &dyn Names) -> anyhow::Result<Control> {
        let first = *self.first_ts_ns.get_or_insert(p.ts_ns);
        let filter = self.filter;
        if !filter.keeps_record(p, first, names) {
            return Ok(Control::Continue);
        }
        let keep = |m: &crate::pipeline::record::MessageRecord| {
            filter.selects_all_messages() || filter.keep_message(p, m, names)
        };
        self.fetcher.add(p, self.wanted, self.map, &keep);
        Ok(if self.fetcher.complete(self.wanted) {
            Control::Stop
        } else {
            Control::Continue
        })
    }

    fn field_trees(&self) -> crate::pipeline::FieldTrees {
        crate::pipeline::FieldTrees::All
    }

    fn selects_by_player(&self) -> bool {
        self.filter.waits_for_names()
    }
}

/// Collects the game messages at wanted (flow, index) positions during a second look.
#[derive(Debug, Default)]
pub struct Fetcher {
    counters: HashMap<FlowKey, usize>,
    pub found: BTreeMap<(FlowKey, usize), (u64, GameMessage)>,
}

impl Fetcher {
    pub fn add(
        &mut self,
        p: &PacketRecord,
        wanted: &BTreeSet<(FlowKey, usize)>,
        map: Option<&ClientMap>,
        keep: &dyn Fn(&crate::pipeline::record::MessageRecord) -> bool,
    ) {
        let (session, client) = mapped(map, p.session, p.client);
        let key = FlowKey {
            session,
            client,
            direction: p.direction,
        };
        if let crate::pipeline::record::PacketBody::Game(g) = &p.body {
            for m in g.messages.iter().filter(|m| keep(m)) {
                if let Some(game) = m.delivered_game() {
                    let c = self.counters.entry(key).or_default();
                    if wanted.contains(&(key, *c)) {
                        self.found.insert((key, *c), (p.frame, game.clone()));
                    }
                    *c += 1;
                }
            }
        }
    }
    pub fn complete(&self, wanted: &BTreeSet<(FlowKey, usize)>) -> bool {
        self.found.len() >= wanted.len()
    }
}

/// Turn the fetched pairs into named field differences: at most `max` of them in all,
/// the rest counted.
pub fn explain(r: &mut DiffResult, fa: &Fetcher, fb: &Fetcher, cmp: &Comparison, max: usize) {
    let mut left = max;
    for &(flow, i, j) in &r.wanted {
        if let (Some((af, ga)), Some((bf, gb))) =
            (fa.found.get(&(flow, i)), fb.found.get(&(flow, j)))
        {
            let mut differences = cmp.field_differences(ga, gb);
            let shown = differences.len().min(left);
            r.more_field_differences += (differences.len() - shown) as u64;
            left -= shown;
            if shown == 0 && !differences.is_empty() {
                continue;
            }
            differences.truncate(shown);
            r.mismatches.push(FieldMismatch {
                flow,
                index: i,
                b_index: j,
                opcode: ga.opcode,
                a_frame: *af,
                b_frame: *bf,
                differences,
            });
        }
    }
    // The aligner names at most `max` differing positions: at the cap, there may be more.
    r.more_messages_not_examined = max > 0 && r.wanted.len() >= max;
}

fn delta(x: u64, y: u64) -> String {
    let d = y as i64 - x as i64;
    if d == 0 {
        "=".into()
    } else {
        format!("{d:+}")
    }
}

/// Counts of A and B per (direction, byte key) with the difference.
fn side_by_side(
    rows: &[(Direction, u8, u64, u64)],
    headers: [&str; 2],
    name: impl Fn(u8) -> String,
) -> comfy_table::Table {
    let mut t = table(&["dir", headers[0], headers[1], "A", "B", "Δ"]);
    for (dir, key, x, y) in rows {
        t.add_row(vec![
            Cell::new(dir),
            Cell::new(format!("0x{key:02X}")),
            Cell::new(name(*key)),
            right(x.to_string()),
            right(y.to_string()),
            right(delta(*x, *y)),
        ]);
    }
    t
}

pub fn render(r: &DiffResult, a_name: &str, b_name: &str, pal: Palette) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}",
        pal.heading(&format!("A = {a_name}\nB = {b_name}\n"))
    );
    if !r.pairing.is_empty() {
        let _ = writeln!(out, "{}", pal.heading("Clients paired"));
        let who = |c: &Option<(usize, Option<String>)>| match c {
            Some((i, Some(n))) => format!("client {i} ({n})"),
            Some((i, None)) => format!("client {i}"),
            None => "-".to_string(),
        };
        for p in &r.pairing {
            let how = match (&p.a, &p.b) {
                (Some(_), Some(_)) => format!("by {}", p.by),
                (Some(_), None) => "only in A".to_string(),
                _ => "only in B".to_string(),
            };
            let _ = writeln!(
                out,
                "  session {}: A {} = B {}  {how}",
                p.session,
                who(&p.a),
                who(&p.b)
            );
        }
        out.push('\n');
    }
    let t = side_by_side(&r.opcode_rows, ["opcode", "name"], |op| {
        crate::game::opcodes::opcode_name(op).to_string()
    });
    let t = t.trim_fmt();
    let _ = writeln!(out, "{}\n{t}\n", pal.heading("Game messages by opcode"));
    if !r.flag_rows.is_empty() {
        let t = side_by_side(
            &r.flag_rows,
            ["flags", "fields"],
            crate::game::dirty::flag_names,
        );
        let t = t.trim_fmt();
        let _ = writeln!(out, "{}\n{t}\n", pal.heading("StateUpdate dirty flags"));
    }
    for k in &r.only_in_a {
        let _ = writeln!(
            out,
            "{}",
            pal.warn(&format!("flow only in A: {}", r.flow_label(k)))
        );
    }
    for k in &r.only_in_b {
        let _ = writeln!(
            out,
            "{}",
            pal.warn(&format!("flow only in B: {}", r.flow_label(k)))
        );
    }
    if !r.unmatched.is_empty() {
        let mut t = table(&["dir", "opcode", "name", "only in A", "only in B"]);
        for (dir, op, x, y) in &r.unmatched {
            t.add_row(vec![
                Cell::new(dir),
                Cell::new(format!("0x{op:02X}")),
                Cell::new(crate::game::opcodes::opcode_name(*op)),
                right(x.to_string()),
                right(y.to_string()),
            ]);
        }
        let t = t.trim_fmt();
        let _ = writeln!(
            out,
            "{}\n{t}\n",
            pal.heading("Messages without an equal twin in the other capture")
        );
    }
    for d in &r.divergences {
        let name = |o: Option<u8>| {
            o.map(|o| format!("0x{o:02X} {}", crate::game::opcodes::opcode_name(o)))
                .unwrap_or_else(|| "(no counterpart)".into())
        };
        let at = if d.index == d.b_index {
            format!("message #{}", d.index)
        } else {
            format!("A message #{}, B message #{}", d.index, d.b_index)
        };
        let _ = writeln!(
            out,
            "first divergence in {}: {at}: A {} / B {}",
            r.flow_label(&d.flow),
            name(d.a_opcode),
            name(d.b_opcode)
        );
    }
    for m in &r.mismatches {
        let _ = writeln!(
            out,
            "\n{}",
            pal.heading(&format!(
                "{} message #{} 0x{:02X} {} (A frame {}, B frame {})",
                r.flow_label(&m.flow),
                if m.index == m.b_index {
                    m.index.to_string()
                } else {
                    format!("{} (B #{})", m.index, m.b_index)
                },
                m.opcode,
                crate::game::opcodes::opcode_name(m.opcode),
                m.a_frame,
                m.b_frame
            ))
        );
        for d in &m.differences {
            let side = |v: &Option<String>| v.clone().unwrap_or_else(|| "(absent)".into());
            let _ = writeln!(out, "  {}: A {}  B {}", d.path, side(&d.a), side(&d.b));
        }
    }
    if r.more_field_differences > 0 || r.more_messages_not_examined {
        let more = match (r.more_field_differences, r.more_messages_not_examined) {
            (0, _) => "more differing messages were not examined".to_string(),
            (n, false) => format!("{n} more field differences not shown"),
            (n, true) => format!(
                "{n} more field differences not shown, and more differing messages not examined"
            ),
        };
        let _ = writeln!(out, "\n… {more} (--max-differences)");
    }
    let _ = writeln!(
        out,
        "\n{}",
        if r.is_same() {
            "The captures are equivalent.".to_string()
        } else {
            pal.warn("The captures differ.")
        }
    );
    out
}

/// The `diff --format json` document.
pub fn to_doc(r: &DiffResult) -> schema::DiffDocument {
    use schema::Dir;
    let dir = |d: &Direction| match d {
        Direction::C2S => Dir::C2s,
        Direction::S2C => Dir::S2c,
    };
    let flow = |k: &FlowKey| schema::Flow {
        session: k.session as u64,
        client: k.client as u64,
        direction: dir(&k.direction),
        player: r.flow_names.get(k).cloned(),
    };
    let delta = |x: u64, y: u64| y as i64 - x as i64;
    schema::DiffDocument {
        schema_version: super::json::SCHEMA_VERSION,
        same: r.is_same(),
        pairing: r
            .pairing
            .iter()
            .map(|p| schema::ClientPairing {
                session: p.session as u64,
                a_client: p.a.as_ref().map(|a| a.0 as u64),
                a_player: p.a.as_ref().and_then(|a| a.1.clone()),
                b_client: p.b.as_ref().map(|b| b.0 as u64),
                b_player: p.b.as_ref().and_then(|b| b.1.clone()),
                by: (!p.by.is_empty()).then(|| p.by.to_string()),
            })
            .collect(),
        opcodes: r
            .opcode_rows
            .iter()
            .map(|&(d, op, x, y)| schema::OpcodeCount {
                direction: dir(&d),
                opcode: op,
                opcode_hex: format!("0x{op:02X}"),
                name: crate::game::opcodes::opcode_name(op).to_string(),
                a: x,
                b: y,
                delta: delta(x, y),
            })
            .collect(),
        dirty_flags: r
            .flag_rows
            .iter()
            .map(|&(d, f, x, y)| schema::FlagCount {
                direction: dir(&d),
                flags: f,
                flags_hex: format!("0x{f:02X}"),
                a: x,
                b: y,
                delta: delta(x, y),
            })
            .collect(),
        flows_only_in_a: r.only_in_a.iter().map(flow).collect(),
        flows_only_in_b: r.only_in_b.iter().map(flow).collect(),
        unmatched: r
            .unmatched
            .iter()
            .map(|&(d, op, x, y)| schema::Unmatched {
                direction: dir(&d),
                opcode: op,
                opcode_hex: format!("0x{op:02X}"),
                only_in_a: x,
                only_in_b: y,
            })
            .collect(),
        divergences: r
            .divergences
            .iter()
            .map(|d| schema::Divergence {
                flow: flow(&d.flow),
                index: d.index as u64,
                b_index: d.b_index as u64,
                a_opcode: d.a_opcode,
                b_opcode: d.b_opcode,
            })
            .collect(),
        field_differences: r
            .mismatches
            .iter()
            .map(|m| schema::FieldMismatch {
                flow: flow(&m.flow),
                index: m.index as u64,
                b_index: m.b_index as u64,
                opcode: m.opcode,
                a_frame: m.a_frame,
                b_frame: m.b_frame,
                differences: m
                    .differences
                    .iter()
                    .map(|d| schema::FieldDifference {
                        field: d.path.clone(),
                        a: d.a.clone(),
                        b: d.b.clone(),
                    })
                    .collect(),
            })
            .collect(),
        more_field_differences: r.more_field_differences,
        more_messages_not_examined: r.more_messages_not_examined,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::align::{next_step, Step, DEFAULT_BUDGET, RESYNC_WINDOW};

    /// `compare` as it was before alignment became incremental: the reference.
    #[allow(clippy::all)]
    fn reference_compare(a: &Digest, b: &Digest, max_differences: usize) -> DiffResult {
        let mut r = DiffResult::default();
        count_rows(&mut r, &a.stats, &b.stats);
        for k in a.flows.keys() {
            if !b.flows.contains_key(k) {
                r.only_in_a.push(*k);
            }
        }
        for k in b.flows.keys() {
            if !a.flows.contains_key(k) {
                r.only_in_b.push(*k);
            }
        }
        // Multiset of (direction, opcode, fingerprint): messages with no twin on the other side.
        let mut bag: HashMap<(Direction, MessageDigest), i64> = HashMap::new();
        for (k, seq) in &a.flows {
            for d in seq {
                *bag.entry((k.direction, *d)).or_default() += 1;
            }
        }
        for (k, seq) in &b.flows {
            for d in seq {
                *bag.entry((k.direction, *d)).or_default() -= 1;
            }
        }
        let mut unmatched: BTreeMap<(Direction, u8), (u64, u64)> = BTreeMap::new();
        for ((dir, d), n) in bag {
            let e = unmatched.entry((dir, d.opcode())).or_default();
            if n > 0 {
                e.0 += n as u64;
            } else if n < 0 {
                e.1 += (-n) as u64;
            }
        }
        r.unmatched = unmatched
            .into_iter()
            .filter(|(_, (x, y))| *x > 0 || *y > 0)
            .map(|((d, op), (x, y))| (d, op, x, y))
            .collect();
        // The same alignment over whole sequences: equal fronts pair off; differing
        // fronts take `next_step` over the next RESYNC_WINDOW messages of each side.
        for (k, sa) in &a.flows {
            let Some(sb) = b.flows.get(k) else { continue };
            let (sa, sb): (Vec<u64>, Vec<u64>) = (
                sa.iter().map(|d| d.raw()).collect(),
                sb.iter().map(|d| d.raw()).collect(),
            );
            let (mut i, mut j) = (0, 0);
            // (diverged, candidates so far)
            let mut st = (false, 0usize);
            let note = |i: usize,
                        j: usize,
                        x: Option<u64>,
                        y: Option<u64>,
                        st: &mut (bool, usize),
                        r: &mut DiffResult| {
                let (x, y) = (
                    x.map(MessageDigest::from_raw),
                    y.map(MessageDigest::from_raw),
                );
                if !st.0 {
                    r.divergences.push(Divergence {
                        flow: *k,
                        index: i,
                        b_index: j,
                        a_opcode: x.map(|v| v.opcode()),
                        b_opcode: y.map(|v| v.opcode()),
                    });
                    st.0 = true;
                }
                if let (Some(x), Some(y)) = (x, y) {
                    if x.opcode() == y.opcode() && st.1 < max_differences {
                        st.1 += 1;
                        if r.wanted.len() < max_differences {
                            r.wanted.insert((*k, i, j));
                        }
                    }
                }
            };
            while i < sa.len() || j < sb.len() {
                if st.0 && st.1 >= max_differences {
                    break;
                }
                match (sa.get(i), sb.get(j)) {
                    (Some(x), Some(y)) if x == y => {
                        i += 1;
                        j += 1;
                    }
                    (Some(x), Some(y)) => {
                        let wa: std::collections::VecDeque<u64> =
                            sa[i..].iter().take(RESYNC_WINDOW).copied().collect();
                        let wb: std::collections::VecDeque<u64> =
                            sb[j..].iter().take(RESYNC_WINDOW).copied().collect();
                        match next_step(&wa, &wb) {
                            Step::ExtraInA(n) => {
                                for _ in 0..n {
                                    note(i, j, Some(sa[i]), None, &mut st, &mut r);
                                    i += 1;
                                }
                            }
                            Step::ExtraInB(n) => {
                                for _ in 0..n {
                                    note(i, j, None, Some(sb[j]), &mut st, &mut r);
                                    j += 1;
                                }
                            }
                            Step::Pair => {
                                note(i, j, Some(*x), Some(*y), &mut st, &mut r);
                                i += 1;
                                j += 1;
                            }
                        }
                    }
                    (x, y) => {
                        note(i, j, x.copied(), y.copied(), &mut st, &mut r);
                        i += x.is_some() as usize;
                        j += y.is_some() as usize;
                    }
                }
            }
        }
        r
    }

    /// A tiny deterministic generator (xorshift).
    use crate::report::test_rng::Rng;

    fn flow(i: u64) -> FlowKey {
        FlowKey {
            session: (i / 4) as usize,
            client: (i / 2 % 2) as usize,
            direction: if i.is_multiple_of(2) {
                Direction::C2S
            } else {
                Direction::S2C
            },
        }
    }

    /// Two digests with flows that share prefixes, differ in places (same or other
    /// opcode), end early, or exist on one side only.
    fn pair(rng: &mut Rng) -> (Digest, Digest) {
        let (mut a, mut b) = (Digest::default(), Digest::default());
        for f in 0..rng.below(7) {
            let key = flow(f);
            let len = rng.below(40) as usize;
            let seq: Vec<MessageDigest> = (0..len)
                .map(|_| MessageDigest::new(rng.below(3) as u8, rng.below(6)))
                .collect();
            let mut other = seq.clone();
            for _ in 0..rng.below(4) {
                if !other.is_empty() {
                    let i = rng.below(other.len() as u64) as usize;
                    other[i] = MessageDigest::new(rng.below(3) as u8, rng.below(6));
                }
            }
            other.truncate(len.saturating_sub(rng.below(3) as usize * 5));
            if rng.below(3) == 0 {
                other.extend((0..rng.below(8)).map(|_| MessageDigest::new(1, rng.below(6))));
            }
            // A digest holds a flow once it has a message.
            let (in_a, in_b) = match rng.below(6) {
                0 => (true, false),
                1 => (false, true),
                _ => (true, true),
            };
            if in_a && !seq.is_empty() {
                a.flows.insert(key, seq);
            }
            if in_b && !other.is_empty() {
                b.flows.insert(key, other);
            }
        }
        (a, b)
    }

    fn same(x: &DiffResult, y: &DiffResult) -> bool {
        let div = |r: &DiffResult| {
            r.divergences
                .iter()
                .map(|d| (d.flow, d.index, d.a_opcode, d.b_opcode))
                .collect::<Vec<_>>()
        };
        x.only_in_a == y.only_in_a
            && x.only_in_b == y.only_in_b
            && x.unmatched == y.unmatched
            && div(x) == div(y)
            && x.wanted == y.wanted
    }

    #[test]
    fn incremental_alignment_in_any_interleaving_equals_the_reference() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut spilled_rounds = 0;
        for round in 0..400 {
            let (a, b) = pair(&mut rng);
            for max in [0, 1, 3, 20] {
                let want = reference_compare(&a, &b, max);
                assert!(
                    same(&compare(&a, &b, max).unwrap(), &want),
                    "round {round} max {max}"
                );
                // B first, then A; and the two interleaved at random.
                let mut orders = vec![vec![Side::B, Side::A]];
                let mut mixed = Vec::new();
                let (na, nb): (usize, usize) = (
                    a.flows.values().map(Vec::len).sum(),
                    b.flows.values().map(Vec::len).sum(),
                );
                let (mut ia, mut ib) = (0, 0);
                while ia < na || ib < nb {
                    if ib >= nb || (ia < na && rng.below(2) == 0) {
                        mixed.push(Side::A);
                        ia += 1;
                    } else {
                        mixed.push(Side::B);
                        ib += 1;
                    }
                }
                orders.push(mixed);
                // Spilling everything (a budget of nothing), some, or nothing at all.
                let budgets = [0, 8 * (1 + rng.below(64) as usize), DEFAULT_BUDGET];
                for (order, budget) in orders
                    .iter()
                    .flat_map(|o| budgets.iter().map(move |b| (o.clone(), *b)))
                {
                    let mut al = Aligner::with_budget(max, budget);
                    let mut next = [
                        a.flows
                            .iter()
                            .flat_map(|(k, s)| s.iter().map(move |d| (*k, *d)))
                            .collect::<Vec<_>>()
                            .into_iter(),
                        b.flows
                            .iter()
                            .flat_map(|(k, s)| s.iter().map(move |d| (*k, *d)))
                            .collect::<Vec<_>>()
                            .into_iter(),
                    ];
                    let drive = |al: &mut Aligner,
                                 next: &mut [std::vec::IntoIter<(FlowKey, MessageDigest)>; 2],
                                 side: Side| {
                        let it = &mut next[if side == Side::A { 0 } else { 1 }];
                        it.next().map(|(k, d)| al.push(side, k, d).unwrap())
                    };
                    if order.len() == 2 {
                        for side in order {
                            while drive(&mut al, &mut next, side).is_some() {}
                            al.end(side).unwrap();
                        }
                    } else {
                        // As `bcwire diff` reads: a capture ends as soon as it runs out.
                        let mut ended = [na == 0, nb == 0];
                        for (i, side) in [Side::A, Side::B].into_iter().enumerate() {
                            if ended[i] {
                                al.end(side).unwrap();
                            }
                        }
                        for side in order {
                            drive(&mut al, &mut next, side);
                            let i = if side == Side::A { 0 } else { 1 };
                            if !ended[i] && next[i].len() == 0 {
                                ended[i] = true;
                                al.end(side).unwrap();
                            }
                        }
                    }
                    if budget == DEFAULT_BUDGET {
                        assert_eq!(al.spills(), 0, "round {round}: small inputs fit");
                    } else if budget == 0 && al.spills() > 0 {
                        spilled_rounds += 1;
                    }
                    let mut r = DiffResult::default();
                    al.finish(&mut r).unwrap();
                    assert!(
                        same(&r, &want),
                        "round {round} max {max} budget {budget}: interleaved"
                    );
                }
            }
        }
        // Most pairs differ somewhere: spilling must have been exercised, not skipped.
        assert!(spilled_rounds > 400, "{spilled_rounds}");
    }

    #[test]
    fn ended_sessions_let_go_of_alike_flows_and_change_nothing() {
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        for round in 0..50 {
            let sessions = 1 + rng.below(30);
            let mut plain = Aligner::new(20);
            let mut letting_go = Aligner::new(20);
            let mut differing = 0;
            for session in 0..sessions {
                let mut side_a = Vec::new();
                let mut side_b = Vec::new();
                for f in 0..4 {
                    let key = flow(session * 4 + f);
                    let seq: Vec<MessageDigest> = (0..rng.below(12))
                        .map(|_| MessageDigest::new(rng.below(3) as u8, rng.below(6)))
                        .collect();
                    let mut other = seq.clone();
                    match rng.below(6) {
                        0 if !other.is_empty() => other[0] = MessageDigest::new(7, 7),
                        1 => other.push(MessageDigest::new(1, 1)),
                        _ => {}
                    }
                    if seq != other {
                        differing += 1;
                    }
                    side_a.extend(seq.into_iter().map(|d| (key, d)));
                    side_b.extend(other.into_iter().map(|d| (key, d)));
                }
                // Either capture may end the session first.
                let order = if rng.below(2) == 0 {
                    [(Side::A, &side_a), (Side::B, &side_b)]
                } else {
                    [(Side::B, &side_b), (Side::A, &side_a)]
                };
                for (side, entries) in order {
                    for &(k, d) in entries.iter() {
                        plain.push(side, k, d).unwrap();
                        letting_go.push(side, k, d).unwrap();
                    }
                    letting_go.session_ended(side, session as usize);
                }
            }
            assert!(
                letting_go.flows_kept() <= differing,
                "round {round}: {} kept, {differing} differ",
                letting_go.flows_kept()
            );
            let (mut want, mut got) = (DiffResult::default(), DiffResult::default());
            for side in [Side::A, Side::B] {
                plain.end(side).unwrap();
                letting_go.end(side).unwrap();
            }
            plain.finish(&mut want).unwrap();
            letting_go.finish(&mut got).unwrap();
            assert!(same(&got, &want), "round {round}");
        }
    }
}
