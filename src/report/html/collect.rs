//! Reduces a capture's records to what the HTML report shows.
//!
//! Fed one [`PacketRecord`] at a time (like every other report), it keeps exact counters
//! (the [`Stats`] of `bcwire stats`, per-second message counts, transport figures) and
//! bounded detail for drawing: position tracks ([`Tracks`]), subsystem condition
//! changes, and game events. Every table the page shows comes from the exact counters;
//! only the drawn series are limited (and the page says when they are).
//!
//! Why this file is long: about 1,300 lines of collector (counters, lives, tracks,
//! events, scores and client health, kept in one pass); the rest is tests that feed it
//! hand-built records.

use super::pending::{at_latest, OpcodeTally};
use super::series::thin_steps;
use super::tally::{
    kill_of, merge_kills, ClientHealth, Kill, Scores, MAX_HEALTH_CLIENTS, MAX_KILLS,
};
use crate::diag::{Code, Direction, Warning};
use crate::game::objects::slot_of;
use crate::game::opcodes::script::Chat;
use crate::game::opcodes::{op, Body, FieldTrees};
use crate::game::ships::ShipCatalog;
use crate::game::stateupdate::{StateUpdate, SubsystemData};
use crate::game::subsys::byte_pct;
use crate::game::track::Tracks;
use crate::game::GameMessage;
use crate::pipeline::record::{PacketBody, PacketRecord, TransportInfo};
use crate::pipeline::summary::CaptureSummary;
use crate::report::diff::{Comparison, Digest};
use crate::report::fingerprint::LeanFingerprints;
use crate::report::names::{Names, ShipIdentity};
use crate::report::stats::Stats;
use rustc_hash::FxHashMap as HashMap;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// Sessions with their own position tracks; later sessions are counted, not tracked.
pub const MAX_TRACKED_SESSIONS: usize = 64;
/// Objects whose StateUpdates are counted (ids come from the input).
pub const MAX_OBJECTS: usize = 16_384;
/// Game events (fire, damage, explosions) kept for drawing.
pub const MAX_EVENTS: usize = 200_000;
/// Chat lines kept.
pub const MAX_CHAT: usize = 1000;
/// Subsystem condition series (session, object, list index) kept: far more than a
/// real game has (a 15-player hour has about 8,400); beyond it series are dropped and
/// the page says how many.
pub const MAX_HEALTH_SERIES: usize = 65_536;
/// Condition changes kept per series before it is thinned (dips are kept).
pub const MAX_HEALTH_POINTS: usize = 8192;
/// Condition changes kept over all series: each series may hold its share of these
/// (at least [`MIN_HEALTH_POINTS`]) before it is thinned, so many lives thin their
/// points rather than lose their series.
pub const MAX_HEALTH_TOTAL_POINTS: usize = 4_000_000;
pub const MIN_HEALTH_POINTS: usize = 64;
/// Distinct seconds with per-second counters (about 55 hours); later ones go to the last.
pub const MAX_SECONDS: i64 = 200_000;
/// Silence in one direction of one client's flow that counts as a gap (seconds).
pub const GAP_SECONDS: f64 = 1.0;
/// Longest gaps listed.
pub const MAX_GAPS: usize = 50;
/// Streams (session, client, direction) watched for gaps.
pub const MAX_STREAMS: usize = 4096;
/// Host messages sent to every client are counted once: copies of the same message to
/// another client within this many seconds are the same event.
const FANOUT_WINDOW: f64 = 0.5;
const FANOUT_MEMORY: usize = 4096;

/// What happened, for the map and the per-ship time lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EventKind {
    /// 0x29: damage at a position (`value` = damage).
    Explosion,
    /// 0x14 DestroyObject.
    Destroyed,
    /// 0x06 object-exploding event (the ship blows up).
    ShipExploding,
    /// 0x19 (`target` = target).
    TorpedoFire,
    /// 0x1A.
    BeamFire,
    /// 0x07.
    StartFiring,
    /// 0x08.
    StopFiring,
    /// 0x15 (`value` = force).
    Collision,
}

impl EventKind {
    pub fn name(self) -> &'static str {
        match self {
            EventKind::Explosion => "explosion",
            EventKind::Destroyed => "destroyed",
            EventKind::ShipExploding => "ship exploding",
            EventKind::TorpedoFire => "torpedo fire",
            EventKind::BeamFire => "beam fire",
            EventKind::StartFiring => "start firing",
            EventKind::StopFiring => "stop firing",
            EventKind::Collision => "collision",
        }
    }
    /// Weapon fire, as opposed to damage or destruction.
    pub fn is_fire(self) -> bool {
        matches!(
            self,
            EventKind::TorpedoFire
                | EventKind::BeamFire
                | EventKind::StartFiring
                | EventKind::StopFiring
        )
    }
    /// Kills and explosions, marked on the map.
    pub fn on_map(self) -> bool {
        matches!(
            self,
            EventKind::Explosion | EventKind::Destroyed | EventKind::ShipExploding
        )
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Seconds from the first datagram.
    pub t: f64,
    pub frame: u64,
    pub session: usize,
    pub kind: EventKind,
    /// The object concerned as the message names it: shooter (a launcher or emitter
    /// subsystem), damaged or destroyed object.
    pub object: Option<u32>,
    pub target: Option<u32>,
    /// The ship life `object` belonged to when the message was sent.
    pub ship: Option<ShipIdentity>,
    /// The ship life `target` belonged to.
    pub target_ship: Option<ShipIdentity>,
    /// Where, when the message says (explosions) or the track knows (destruction).
    pub position: Option<[f32; 3]>,
    /// Damage (explosions) or force (collisions).
    pub value: Option<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ChatLine {
    pub t: f64,
    pub session: usize,
    /// Client name if known, else the sender's peer id.
    pub sender: String,
    pub team: bool,
    pub text: String,
}

/// One position of a drawn ship, times relative to the first datagram.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShipPoint {
    pub t: f64,
    pub pos: [f32; 3],
    pub speed: Option<f32>,
}

/// Condition of one top-level subsystem over time (percent; a point per change).
#[derive(Debug, Clone, PartialEq)]
pub struct HealthSeries {
    pub index: u8,
    pub name: String,
    pub points: Vec<(f64, f32)>,
    /// Condition values seen (every update, not only the changes).
    pub updates: u64,
}

/// One life of a ship (or of any object with StateUpdates): from its creation (or first
/// sighting) to its explosion or destruction, or the end of its session. A ship
/// created again under the same id is another life.
#[derive(Debug, Clone, PartialEq)]
pub struct Ship {
    pub session: usize,
    pub object_id: u32,
    /// Frame of the creation message that began this life; `None` when the creation
    /// was not in the capture.
    pub created_frame: Option<u64>,
    /// "Galaxy (Kirk, slot 2)" when the creation was seen, else the id.
    pub label: String,
    /// Ship class and player name, when known.
    pub class: Option<String>,
    pub player: Option<String>,
    /// Seconds from the first datagram: the creation (or first sighting) and the
    /// explosion or destruction; `end` is the death or the session's last datagram.
    pub born: f64,
    pub died: Option<f64>,
    pub end: f64,
    /// The player's slot (colours follow it): the owning client's, else the creation's
    /// owner slot, else the id's range.
    pub slot: Option<u8>,
    /// The client (index in its session) who flew it: the sender of its creation,
    /// else of its StateUpdates, else the holder of its creation's owner slot.
    pub client: Option<usize>,
    /// The direction whose updates drew the track (the one with more points).
    pub track_direction: Option<Direction>,
    pub track: Vec<ShipPoint>,
    /// The track is made of deltas whose baseline (an absolute position) was never
    /// seen: its shape is right, its origin unknown.
    pub track_relative: bool,
    /// StateUpdates for this object (both directions).
    pub updates: u64,
    pub health: Vec<HealthSeries>,
}

impl Ship {
    /// Whether this is the life `id` names in `session`.
    pub fn is(&self, session: usize, id: ShipIdentity) -> bool {
        self.key() == life_key(session, id)
    }
    /// The life's key: its session, object id and creation frame (0: not seen).
    pub fn key(&self) -> LifeKey {
        (
            self.session,
            self.object_id,
            self.created_frame.unwrap_or(0),
        )
    }
    /// Whether `t` lies within this life.
    pub fn alive_at(&self, t: f64) -> bool {
        t >= self.born && t <= self.end
    }
}

/// Per-second ACK delay figures.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct AckSecond {
    pub count: u64,
    pub sum_ns: i128,
    pub max_ns: i64,
}

/// A silence in one direction of a client's flow.
#[derive(Debug, Clone, PartialEq)]
pub struct Gap {
    pub session: usize,
    pub client: usize,
    pub direction: Direction,
    /// The datagram that ended the silence.
    pub frame: u64,
    /// Start of the silence (seconds from the first datagram) and its length.
    pub start: f64,
    pub length: f64,
}

/// Frames kept per warning code (the first ones), to point at.
pub const FRAMES_PER_PROBLEM: usize = 5;

/// One warning code's occurrences, as an expert-information row.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    pub code: Code,
    pub count: u64,
    /// The first frames that carry it.
    pub frames: Vec<u64>,
    /// The first occurrence's text.
    pub example: String,
}

/// One client's traffic in one second, both directions (index by `Direction::index`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ClientSecond {
    pub datagrams: [u32; 2],
    /// Transport messages, ACKs included.
    pub messages: [u32; 2],
    /// UDP payload bytes.
    pub bytes: [u64; 2],
    pub retransmissions: [u32; 2],
    /// ACKs with a measured delay, and the sum of those delays.
    pub acks: [u32; 2],
    pub ack_sum_ns: [i64; 2],
    /// The second's first frame, either direction (0: none), for a finding to point at.
    pub first_frame: u64,
}

/// One client's traffic over time: the lag question is asked per player, and sums over
/// all clients hide the one who suffers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClientTraffic {
    pub session: usize,
    pub client: usize,
    /// The player's name once known, else "client N".
    pub name: String,
    pub seconds: BTreeMap<i64, ClientSecond>,
}

/// Clients followed per second; a capture with more keeps the first ones (the page
/// says so), so a hostile capture cannot grow the report without bound.
pub const MAX_CLIENT_SERIES: usize = 64;

/// Retransmissions, ACK delays and gaps.
#[derive(Debug, Clone, Default)]
pub struct TransportHealth {
    pub retransmissions: [BTreeMap<i64, u64>; 2],
    /// The first retransmitted frame of each second with retransmissions.
    pub retransmission_frames: [BTreeMap<i64, u64>; 2],
    pub acks: [BTreeMap<i64, AckSecond>; 2],
    /// ACK delays by power-of-two microseconds: bucket k holds delays in [2^(k-1), 2^k) µs.
    pub ack_delay_log2_us: [[u64; 32]; 2],
    pub ack_delay_max_ns: [i64; 2],
    pub ack_delay_sum_ns: [i128; 2],
    pub ack_delays: [u64; 2],
    /// Longest gaps, longest first; `gap_count` counts all of them.
    pub gaps: Vec<Gap>,
    pub gap_count: u64,
}

impl TransportHealth {
    /// Delay below which `q` (0..1) of the ACKs fall, as the upper edge of its bucket.
    pub fn ack_delay_quantile_ns(&self, dir: Direction, q: f64) -> Option<i64> {
        let h = &self.ack_delay_log2_us[dir.index()];
        let total: u64 = h.iter().sum();
        if total == 0 {
            return None;
        }
        let want = ((total as f64 * q).ceil() as u64).max(1);
        let mut seen = 0;
        for (k, n) in h.iter().enumerate() {
            seen += n;
            if seen >= want {
                let upper_us = if k == 0 { 1 } else { 1i64 << k };
                return Some((upper_us * 1000).min(self.ack_delay_max_ns[dir.index()]));
            }
        }
        Some(self.ack_delay_max_ns[dir.index()])
    }
}

/// Everything one capture contributes to the page.
#[derive(Debug, Default)]
pub struct CaptureReport {
    /// The file name as given.
    pub name: String,
    pub summary: CaptureSummary,
    /// Exact counters (the numbers of `bcwire stats`); also the diff digest.
    pub digest: Digest,
    pub t0_ns: i64,
    /// Seconds from the first to the last datagram.
    pub duration: f64,
    /// Delivered game messages per direction, opcode and second.
    pub rates: [BTreeMap<u8, BTreeMap<i64, u64>>; 2],
    pub ships: Vec<Ship>,
    pub events: Vec<Event>,
    pub events_dropped: u64,
    pub chat: Vec<ChatLine>,
    pub chat_dropped: u64,
    /// Warnings by code, in code order.
    pub problems: Vec<Problem>,
    pub transport: TransportHealth,
    /// Counts per 100 ms (or longer) tick, for the page's zoom.
    pub fine: super::fine::FineCounts,
    /// Per-client traffic per second, in order of first datagram.
    pub clients: Vec<ClientTraffic>,
    /// Clients beyond [`MAX_CLIENT_SERIES`], not followed.
    pub clients_dropped: u64,
    /// StateUpdates whose session or object had no track left.
    pub untracked_updates: u64,
    /// StateUpdates about a ship after its death (in flight when it died): counted,
    /// not drawn.
    pub updates_after_death: u64,
    pub health_dropped: u64,
    /// Condition series thinned while reading (to share the point budget).
    pub health_thinned: u64,
    /// The game's score totals per (session, peer id).
    pub scores: Scores,
    /// Kills in time order: the game's ScoreChange (with the ships of its
    /// ObjectExploding event), else ObjectExploding events.
    pub kills: Vec<Kill>,
    pub kills_dropped: u64,
    /// Connection figures per (session, client).
    pub client_health: BTreeMap<(usize, usize), ClientHealth>,
}

impl CaptureReport {
    pub fn stats(&self) -> &Stats {
        &self.digest.stats
    }

    /// Events of each ship life, in capture order: those whose object belonged to it
    /// when sent. One pass over the events, where asking each life in turn would read
    /// every event once per life (a long capture has thousands of lives and up to
    /// [`MAX_EVENTS`] events).
    pub fn events_by_life(&self) -> HashMap<LifeKey, Vec<&Event>> {
        let mut by_life: HashMap<LifeKey, Vec<&Event>> = HashMap::default();
        for e in &self.events {
            if let Some(k) = e.ship {
                by_life.entry(life_key(e.session, k)).or_default().push(e);
            }
        }
        by_life
    }
}

/// A ship life while the capture is read.
#[derive(Debug)]
struct LifeAcc {
    created_frame: u64,
    born: f64,
    died: Option<f64>,
    label: Option<String>,
    class: Option<String>,
    owner: Option<(u8, Option<String>)>,
    /// The client that sent the creation, and the creation's owner slot.
    creator: Option<usize>,
    owner_slot: Option<u8>,
}

/// An update this many seconds before its ship's creation belongs to the life the
/// creation begins (sent on another channel, it can overtake the reliable creation).
const EARLY_UPDATE_SECONDS: f64 = 1.0;

/// Lives kept, over all objects (ids come from the input).
pub const MAX_LIVES: usize = 16_384;

/// (session, object id, creation frame or 0 when the creation was not seen).
pub type LifeKey = (usize, u32, u64);

/// The key of the life `id` names in `session`.
pub fn life_key(session: usize, id: ShipIdentity) -> LifeKey {
    (session, id.object_id, id.created_frame)
}

#[derive(Debug)]
struct HealthAcc {
    name: String,
    points: Vec<(f64, f32)>,
    last: Option<f32>,
    updates: u64,
    thinned: bool,
}

/// Accumulates a [`CaptureReport`] from records.
pub struct Collector {
    report: CaptureReport,
    catalog: ShipCatalog,
    /// Fingerprint every message for a later comparison (two-capture reports).
    fingerprints: bool,
    cmp: Comparison,
    /// Fingerprints from the one decode: typed for warning-free StateUpdates, the
    /// field tree for the rest.
    lean: LeanFingerprints,
    t0: Option<i64>,
    last_ts: i64,
    tracks: Vec<Tracks>,
    /// Lives of each object, oldest first.
    lives: HashMap<(usize, u32), Vec<LifeAcc>>,
    life_count: usize,
    updates: HashMap<LifeKey, u64>,
    /// Condition series of each life, by subsystem index: one hashed look-up per
    /// StateUpdate, its series side by side (a life has a few dozen); put in key
    /// order once, at the end.
    health: HashMap<LifeKey, Vec<(u8, HealthAcc)>>,
    /// Series in `health`, over all lives.
    health_series: usize,
    /// Objects with StateUpdates whose creation was not seen: events of ids in their
    /// slot above them are theirs, as the registry does for created ships.
    uncreated: BTreeSet<(usize, u32)>,
    problems: BTreeMap<Code, Problem>,
    /// Last datagram of each session (seconds): where lives without a death end.
    session_end: HashMap<usize, f64>,
    last_seen: HashMap<(usize, usize, Direction), f64>,
    recent: VecDeque<(f64, usize, usize, u64)>,
    /// Index into `report.clients` of each (session, client).
    client_index: HashMap<(usize, usize), usize>,
    /// The first client that sent StateUpdates of an object: who flies it.
    controllers: HashMap<(usize, u32), usize>,
    /// Delivered messages of the latest second (for `rates`) and of the latest tick
    /// (for `fine`), per direction, not yet added to their maps.
    rate_tally: [OpcodeTally; 2],
    fine_tally: [OpcodeTally; 2],
    /// The latest fine tick asked for: its start and length (ns).
    fine_tick: (i64, i64),
}

impl Collector {
    pub fn new(name: &str, catalog: ShipCatalog, fingerprints: bool) -> Collector {
        Collector {
            report: CaptureReport {
                name: name.to_string(),
                ..CaptureReport::default()
            },
            lean: LeanFingerprints::new(Comparison::standard(), catalog.clone()),
            catalog,
            fingerprints,
            cmp: Comparison::standard(),
            t0: None,
            last_ts: 0,
            tracks: Vec::new(),
            lives: HashMap::default(),
            life_count: 0,
            updates: HashMap::default(),
            health: HashMap::default(),
            health_series: 0,
            session_end: HashMap::default(),
            uncreated: BTreeSet::new(),
            problems: BTreeMap::new(),
            last_seen: HashMap::default(),
            recent: VecDeque::new(),
            client_index: HashMap::default(),
            controllers: HashMap::default(),
            rate_tally: Default::default(),
            fine_tally: Default::default(),
            fine_tick: (0, 0),
        }
    }

    /// The field trees the collector reads: those its fingerprints hash (a fan-out
    /// copy is told by the fingerprint of a message that is no StateUpdate; a
    /// comparison fingerprints every message). Everything else it reads is typed.
    pub fn field_trees(&self) -> FieldTrees {
        self.lean.trees()
    }

    pub fn add(&mut self, p: &PacketRecord, names: &dyn Names) {
        if self.fingerprints {
            let lean = &self.lean;
            self.report.digest.add_with(p, names, |_, _, g| lean.of(g));
        } else {
            self.report.digest.stats.add(p, names);
        }
        let t0 = *self.t0.get_or_insert(p.ts_ns);
        self.last_ts = self.last_ts.max(p.ts_ns);
        let rel_ns = p.ts_ns.saturating_sub(t0);
        let t = rel_ns as f64 / 1e9;
        let sec = second(t);
        let di = p.direction.index();
        let end = self.session_end.entry(p.session).or_insert(t);
        *end = end.max(t);
        self.note_gap(p, t);
        self.note_health(p);
        let client = self.note_client(p, sec);
        let PacketBody::Game(g) = &p.body else {
            return;
        };
        self.note_problems(p.frame, &g.warnings);
        // The datagram's share of its client's second, added once after its messages.
        let mut own = ClientSecond::default();
        for m in &g.messages {
            self.note_problems(p.frame, &m.warnings);
            if let Some(game) = &m.game {
                self.note_problems(p.frame, &game.warnings);
            }
            own.messages[di] += 1;
            own.retransmissions[di] += u32::from(m.retransmission);
            let tr = &mut self.report.transport;
            if m.retransmission {
                *tr.retransmissions[di].entry(sec).or_default() += 1;
                self.report.fine.retransmission(di, rel_ns);
                tr.retransmission_frames[di].entry(sec).or_insert(p.frame);
            }
            if let TransportInfo::Ack {
                delay_ns: Some(d), ..
            } = m.transport
            {
                let d = d.max(0);
                if let Some(h) = self.report.client_health.get_mut(&(p.session, p.client)) {
                    h.ack_delay(d);
                }
                own.acks[di] += 1;
                own.ack_sum_ns[di] = own.ack_sum_ns[di].saturating_add(d);
                self.report.fine.ack(di, rel_ns, d);
                let tr = &mut self.report.transport;
                at_latest(&mut tr.acks[di], sec, |a| {
                    a.count += 1;
                    a.sum_ns += d as i128;
                    a.max_ns = a.max_ns.max(d);
                });
                tr.ack_delays[di] += 1;
                tr.ack_delay_sum_ns[di] += d as i128;
                tr.ack_delay_max_ns[di] = tr.ack_delay_max_ns[di].max(d);
                let us = (d / 1000) as u64;
                let k = (64 - us.leading_zeros() as usize).min(31);
                tr.ack_delay_log2_us[di][k] += 1;
            }
            let Some(game) = m.delivered_game() else {
                continue;
            };
            let rates = &mut self.report.rates[di];
            self.rate_tally[di].add(sec, game.opcode, |sec, op, n| {
                *rates.entry(op).or_default().entry(sec).or_default() += n;
            });
            let tick = self.fine_tick(rel_ns);
            let fine = &mut self.report.fine;
            self.fine_tally[di].add(tick, game.opcode, |tick, op, n| {
                fine.messages(di, tick, op, n);
            });
            if let Some(su) = game.state_update() {
                if p.direction == Direction::C2S && self.controllers.len() < MAX_OBJECTS {
                    self.controllers
                        .entry((p.session, su.object_id))
                        .or_insert(p.client);
                }
                self.state_update(p, t, su, names);
            }
            if let Some(body) = &game.body {
                self.report.scores.note(p.session, body);
            }
            if let Some(Body::ObjCreate(c)) = &game.body {
                // A creation begins a life: the ship is drawn from here, not from its
                // first update.
                if let Some(ship) = names.ship_of(p.session, c.object_id) {
                    if ship.object_id == c.object_id {
                        self.life(p.session, ship, t, names);
                        self.note_creator(p, ship, c.owner_slot, m.relay_of.is_none());
                    }
                }
            }
            // A host copy of a client's message is the same event: count the original.
            if m.relay_of.is_none() && !self.fanout_copy(p, t, game) {
                self.event(p, t, game, names);
            }
        }
        if let Some(i) = client {
            at_latest(&mut self.report.clients[i].seconds, sec, |s| {
                s.messages[di] += own.messages[di];
                s.retransmissions[di] += own.retransmissions[di];
                s.acks[di] += own.acks[di];
                s.ack_sum_ns[di] = s.ack_sum_ns[di].saturating_add(own.ack_sum_ns[di]);
            });
        }
    }

    /// Where the fine tick of `ns` begins: the tick last asked for while `ns` lies in
    /// it and the ticks have not grown since.
    fn fine_tick(&mut self, ns: i64) -> i64 {
        let (start, len) = self.fine_tick;
        if len == self.report.fine.tick_ns && ns >= start && ns - start < len {
            return start;
        }
        let start = self.report.fine.tick_start(ns);
        self.fine_tick = (start, self.report.fine.tick_ns);
        start
    }

    /// Add the counts still held for the latest second and tick to their maps.
    fn flush_tallies(&mut self) {
        for di in 0..2 {
            let rates = &mut self.report.rates[di];
            self.rate_tally[di].drain(|sec, op, n| {
                *rates.entry(op).or_default().entry(sec).or_default() += n;
            });
            let fine = &mut self.report.fine;
            self.fine_tally[di].drain(|tick, op, n| fine.messages(di, tick, op, n));
        }
    }

    /// Who created a life: the client that sent its creation to the host (a host's copy
    /// to another client says nothing of the creator), and the owner slot the first
    /// creation message named.
    fn note_creator(&mut self, p: &PacketRecord, ship: ShipIdentity, owner_slot: u8, own: bool) {
        let life = self
            .lives
            .get_mut(&(p.session, ship.object_id))
            .and_then(|l| l.last_mut())
            .filter(|l| l.created_frame == ship.created_frame);
        if let Some(l) = life {
            if l.creator.is_none() && own && p.direction == Direction::C2S {
                l.creator = Some(p.client);
            }
            l.owner_slot.get_or_insert(owner_slot);
        }
    }

    fn note_health(&mut self, p: &PacketRecord) {
        let key = (p.session, p.client);
        let all = &mut self.report.client_health;
        if all.len() >= MAX_HEALTH_CLIENTS && !all.contains_key(&key) {
            return;
        }
        all.entry(key).or_default().datagram(p.direction, p.ts_ns);
    }

    fn note_problems(&mut self, frame: u64, warnings: &[Warning]) {
        for w in warnings {
            let e = self.problems.entry(w.code).or_insert_with(|| Problem {
                code: w.code,
                count: 0,
                frames: Vec::new(),
                example: w.to_string(),
            });
            e.count += 1;
            if e.frames.len() < FRAMES_PER_PROBLEM && e.frames.last() != Some(&frame) {
                e.frames.push(frame);
            }
        }
    }

    /// Count the datagram in its client's second; the index of the client's series
    /// (None beyond [`MAX_CLIENT_SERIES`]), for its messages to be counted there too.
    fn note_client(&mut self, p: &PacketRecord, sec: i64) -> Option<usize> {
        let key = (p.session, p.client);
        let i = match self.client_index.get(&key) {
            Some(&i) => i,
            None if self.report.clients.len() < MAX_CLIENT_SERIES => {
                let i = self.report.clients.len();
                self.report.clients.push(ClientTraffic {
                    session: p.session,
                    client: p.client,
                    name: format!("client {}", p.client),
                    seconds: BTreeMap::new(),
                });
                self.client_index.insert(key, i);
                i
            }
            None => {
                self.report.clients_dropped += 1;
                return None;
            }
        };
        let di = p.direction.index();
        at_latest(&mut self.report.clients[i].seconds, sec, |s| {
            s.datagrams[di] += 1;
            s.bytes[di] += p.udp_len as u64;
            if s.first_frame == 0 {
                s.first_frame = p.frame;
            }
        });
        Some(i)
    }

    fn note_gap(&mut self, p: &PacketRecord, t: f64) {
        let key = (p.session, p.client, p.direction);
        if !self.last_seen.contains_key(&key) {
            if self.last_seen.len() < MAX_STREAMS {
                self.last_seen.insert(key, t);
            }
            return;
        }
        let Some(last) = self.last_seen.get_mut(&key) else {
            return;
        };
        let length = t - *last;
        let start = *last;
        *last = last.max(t);
        if length > GAP_SECONDS {
            let tr = &mut self.report.transport;
            tr.gap_count += 1;
            tr.gaps.push(Gap {
                session: p.session,
                client: p.client,
                direction: p.direction,
                frame: p.frame,
                start,
                length,
            });
            if tr.gaps.len() > 2 * MAX_GAPS {
                sort_gaps(&mut tr.gaps);
            }
        }
    }

    /// The host sends one message to every client: is this a copy seen on another client?
    fn fanout_copy(&mut self, p: &PacketRecord, t: f64, game: &GameMessage) -> bool {
        if p.direction != Direction::S2C || !interesting(game.opcode) {
            return false;
        }
        while self.recent.front().is_some_and(|r| t - r.0 > FANOUT_WINDOW) {
            self.recent.pop_front();
        }
        let fp = self.cmp.fingerprint(game);
        if self
            .recent
            .iter()
            .any(|r| r.1 == p.session && r.2 != p.client && r.3 == fp)
        {
            return true;
        }
        if self.recent.len() >= FANOUT_MEMORY {
            self.recent.pop_front();
        }
        self.recent.push_back((t, p.session, p.client, fp));
        false
    }

    /// The life a ship is in at `t`, begun here if it is new (a first sighting, or a
    /// creation under an id an earlier ship had). Whether it is known and not over.
    fn life(&mut self, session: usize, ship: ShipIdentity, t: f64, names: &dyn Names) -> bool {
        let lives = self.lives.entry((session, ship.object_id)).or_default();
        if let Some(last) = lives.last() {
            if last.created_frame == ship.created_frame {
                return last.died.is_none_or(|d| t <= d);
            }
        }
        if self.life_count >= MAX_LIVES {
            return false;
        }
        self.life_count += 1;
        let known = ship.created_frame != 0;
        lives.push(LifeAcc {
            created_frame: ship.created_frame,
            born: t,
            died: None,
            // An object with updates but no creation is not described through the
            // ship below its id: it is not known to be that ship's subsystem.
            label: known
                .then(|| names.describe_object(session, ship.object_id))
                .flatten(),
            class: known
                .then(|| names.object_class(session, ship.object_id))
                .flatten(),
            owner: names.object_owner(session, ship.object_id),
            creator: None,
            owner_slot: None,
        });
        if !known {
            self.uncreated.insert((session, ship.object_id));
        }
        true
    }

    /// The life an object with StateUpdates is in: its registered ship life, else
    /// one life for all its updates (creation not seen).
    fn update_life(&mut self, session: usize, id: u32, t: f64, names: &dyn Names) -> (u64, bool) {
        // The registry forgets ships long dead: an update in flight after such a death
        // is about the id's last life seen here, not a new object.
        let last_seen = || {
            let l = self.lives.get(&(session, id))?.last()?;
            (l.created_frame != 0).then_some(ShipIdentity {
                object_id: id,
                created_frame: l.created_frame,
            })
        };
        let ship = names
            .ship_of(session, id)
            .filter(|s| s.object_id == id)
            .or_else(last_seen)
            .unwrap_or(ShipIdentity {
                object_id: id,
                created_frame: 0,
            });
        let live = self.life(session, ship, t, names);
        (ship.created_frame, live)
    }

    fn state_update(&mut self, p: &PacketRecord, t: f64, su: &StateUpdate, names: &dyn Names) {
        let (created, live) = self.update_life(p.session, su.object_id, t, names);
        let key = (p.session, su.object_id, created);
        if let Some(n) = self.updates.get_mut(&key) {
            *n += 1;
        } else if self.updates.len() < MAX_OBJECTS {
            self.updates.insert(key, 1);
        }
        if !live {
            self.report.updates_after_death += 1;
            return;
        }
        if p.session < MAX_TRACKED_SESSIONS {
            while self.tracks.len() <= p.session {
                self.tracks.push(Tracks::new());
            }
            // The host keeps one delta baseline per receiving peer: the client is the stream.
            self.tracks[p.session].observe(p.direction, p.client as u32, t, su);
        } else {
            self.report.untracked_updates += 1;
        }
        let Some(SubsystemData::Decoded(block)) = &su.subsystems else {
            return;
        };
        if block.records.is_empty() {
            return;
        }
        let life = self
            .health
            .entry((p.session, su.object_id, created))
            .or_default();
        for rec in &block.records {
            let k = match life.iter().position(|(i, _)| *i == rec.index) {
                Some(k) => k,
                None if self.health_series >= MAX_HEALTH_SERIES => {
                    self.report.health_dropped += 1;
                    continue;
                }
                None => {
                    let name = names
                        .object_class(p.session, su.object_id)
                        .and_then(|c| subsystem_name(&self.catalog, &c, rec.index))
                        .unwrap_or_else(|| format!("subsystem {}", rec.index));
                    life.push((
                        rec.index,
                        HealthAcc {
                            name,
                            points: Vec::new(),
                            last: None,
                            updates: 0,
                            thinned: false,
                        },
                    ));
                    self.health_series += 1;
                    life.len() - 1
                }
            };
            let h = &mut life[k].1;
            // The series counted with this one: the share of the point budget.
            let series = self.health_series.max(1);
            let pct = byte_pct(rec.condition) as f32;
            h.updates += 1;
            if h.last != Some(pct) {
                h.last = Some(pct);
                let cap =
                    (MAX_HEALTH_TOTAL_POINTS / series).clamp(MIN_HEALTH_POINTS, MAX_HEALTH_POINTS);
                if h.points.len() >= cap {
                    h.points = thin_steps(&h.points, cap / 2);
                    if !h.thinned {
                        h.thinned = true;
                        self.report.health_thinned += 1;
                    }
                }
                h.points.push((t, pct));
            }
        }
    }

    fn event(&mut self, p: &PacketRecord, t: f64, game: &GameMessage, names: &dyn Names) {
        if let Some(a) = game.body.as_ref().and_then(kill_of) {
            if self.report.kills.len() >= MAX_KILLS {
                self.report.kills_dropped += 1;
            } else {
                let killer_ship = a.by.and_then(|id| self.ship_of(p.session, id, names));
                let victim_ship = a.of.and_then(|id| self.ship_of(p.session, id, names));
                self.report.kills.push(Kill {
                    t,
                    frame: p.frame,
                    session: p.session,
                    killer_peer: a.killer_peer,
                    victim_peer: a.victim_peer,
                    killer_ship,
                    victim_ship,
                    scored: a.scored,
                });
            }
        }
        let Some((kind, object, target)) = event_objects(game) else {
            if let Some(Body::Chat(c)) = &game.body {
                self.chat(p, t, c, names);
            }
            return;
        };
        let value = match &game.body {
            Some(Body::Explosion(x)) => Some(x.damage_value()),
            Some(Body::Event(e)) if kind == EventKind::Collision => e.collision_force(),
            _ => None,
        }
        .map(f64::from)
        .filter(|v| v.is_finite());
        let position = match &game.body {
            Some(Body::Explosion(x)) => Some(x.position_vector()),
            _ => None,
        };
        // Attached to the ship life the object belonged to when the message was sent:
        // a launcher's id names the ship that carried it then, not the player's
        // latest ship.
        let ship = object.and_then(|id| self.ship_of(p.session, id, names));
        let target_ship = target.and_then(|id| self.ship_of(p.session, id, names));
        if let Some(s) = ship {
            self.life(p.session, s, t, names);
            let dies = matches!(kind, EventKind::Destroyed | EventKind::ShipExploding);
            if dies && object == Some(s.object_id) {
                self.end_life(p.session, s, t);
            }
        }
        if self.report.events.len() >= MAX_EVENTS {
            self.report.events_dropped += 1;
            return;
        }
        self.report.events.push(Event {
            t,
            frame: p.frame,
            session: p.session,
            kind,
            object,
            target,
            ship,
            target_ship,
            position,
            value,
        });
    }

    /// The ship life an id belongs to: the registry's answer, else an object whose
    /// creation was not seen, if the id is its own or lies above it in its slot.
    fn ship_of(&self, session: usize, id: u32, names: &dyn Names) -> Option<ShipIdentity> {
        if let Some(s) = names.ship_of(session, id) {
            return Some(s);
        }
        let slot = slot_of(id)?;
        let &(s, below) = self.uncreated.range(..=(session, id)).next_back()?;
        (s == session && slot_of(below) == Some(slot)).then_some(ShipIdentity {
            object_id: below,
            created_frame: 0,
        })
    }

    /// A client's first update of a new ship can arrive just before the ship's creation:
    /// a life of no creation, not over, followed within [`EARLY_UPDATE_SECONDS`] by a
    /// created life of the same id is that life's beginning, not an object of its own.
    fn join_early_updates(&mut self, session: usize, id: u32, ls: &mut Vec<LifeAcc>) {
        let mut i = 0;
        while i + 1 < ls.len() {
            let (a, b) = (&ls[i], &ls[i + 1]);
            let early = a.created_frame == 0
                && a.died.is_none()
                && b.created_frame != 0
                && b.born - a.born <= EARLY_UPDATE_SECONDS;
            if !early {
                i += 1;
                continue;
            }
            let a = ls.remove(i);
            let b = &mut ls[i];
            b.born = a.born;
            let created = b.created_frame;
            if let Some(n) = self.updates.remove(&(session, id, 0)) {
                *self.updates.entry((session, id, created)).or_default() += n;
            }
            let early = self.health.remove(&(session, id, 0)).unwrap_or_default();
            if !early.is_empty() {
                let life = self.health.entry((session, id, created)).or_default();
                for (index, h) in early {
                    match life.iter_mut().find(|(i, _)| *i == index) {
                        Some((_, later)) => {
                            let mut points = h.points;
                            points.append(&mut later.points);
                            later.points = points;
                            later.updates += h.updates;
                            self.health_series -= 1;
                        }
                        None => life.push((index, h)),
                    }
                }
            }
        }
    }

    /// A ship exploded or was destroyed: its life ends at the first of these.
    fn end_life(&mut self, session: usize, ship: ShipIdentity, t: f64) {
        let life = self
            .lives
            .get_mut(&(session, ship.object_id))
            .and_then(|l| l.last_mut())
            .filter(|l| l.created_frame == ship.created_frame);
        if let Some(l) = life {
            if l.died.is_none() {
                l.died = Some(t);
            }
        }
    }

    fn chat(&mut self, p: &PacketRecord, t: f64, chat: &Chat, names: &dyn Names) {
        if self.report.chat.len() >= MAX_CHAT {
            self.report.chat_dropped += 1;
            return;
        }
        let sender = match p.direction {
            Direction::C2S => names
                .client_name(p.session, p.client)
                .unwrap_or_else(|| format!("client {}", p.client)),
            _ => format!("peer {}", chat.sender_peer_id),
        };
        self.report.chat.push(ChatLine {
            t,
            session: p.session,
            sender,
            team: chat.opcode == op::TEAM_CHAT_MESSAGE,
            text: chat.text.clone(),
        });
    }

    /// Close the capture: attach the summary and build the ships.
    pub fn finish(mut self, summary: CaptureSummary) -> CaptureReport {
        self.flush_tallies();
        let mut lives = std::mem::take(&mut self.lives);
        for (&(session, id), ls) in lives.iter_mut() {
            self.join_early_updates(session, id, ls);
        }
        let mut r = self.report;
        for sess in &summary.sessions {
            for c in &sess.clients {
                for dir in [Direction::C2S, Direction::S2C] {
                    r.digest.stats.add_unacked(dir, c.dir(dir).unacked);
                }
            }
        }
        for c in &mut r.clients {
            let known = summary
                .client(c.session, c.client)
                .and_then(|k| k.name.clone());
            if let Some(name) = known {
                c.name = name;
            }
        }
        r.summary = summary;
        r.problems = std::mem::take(&mut self.problems).into_values().collect();
        r.t0_ns = self.t0.unwrap_or(0);
        r.duration = self.last_ts.saturating_sub(r.t0_ns) as f64 / 1e9;
        sort_gaps(&mut r.transport.gaps);
        // One ship per life; an object's track is cut where its next life begins and
        // where this one died.
        let mut ships: BTreeMap<LifeKey, Ship> = BTreeMap::new();
        for (&(session, id), ls) in &lives {
            let session_end = self
                .session_end
                .get(&session)
                .copied()
                .unwrap_or(r.duration);
            for l in ls {
                let key = (session, id, l.created_frame);
                let end = l.died.unwrap_or(session_end).max(l.born);
                ships.insert(
                    key,
                    Ship {
                        session,
                        object_id: id,
                        created_frame: (l.created_frame != 0).then_some(l.created_frame),
                        label: l.label.clone().unwrap_or_else(|| format!("0x{id:08X}")),
                        class: l.class.clone(),
                        player: l.owner.as_ref().and_then(|o| o.1.clone()),
                        born: l.born,
                        died: l.died,
                        end,
                        slot: l
                            .owner_slot
                            .or(l.owner.as_ref().map(|o| o.0))
                            .or(slot_of(id)),
                        client: l
                            .creator
                            .or_else(|| self.controllers.get(&(session, id)).copied()),
                        track_direction: None,
                        track: Vec::new(),
                        track_relative: false,
                        updates: self.updates.get(&key).copied().unwrap_or(0),
                        health: Vec::new(),
                    },
                );
            }
        }
        // Each track is dropped once its points are copied into its lives, so the
        // copies do not add to the peak memory of a long capture.
        for (session, tracks) in std::mem::take(&mut self.tracks).into_iter().enumerate() {
            r.untracked_updates += tracks.untracked_updates;
            for (dir, track) in tracks.into_sorted() {
                let Some(ls) = lives.get_mut(&(session, track.object_id)) else {
                    continue;
                };
                // Positions from deltas without a baseline only when nothing better.
                let (points, relative) = if track.points().is_empty() {
                    (track.relative_points(), true)
                } else {
                    (track.points(), false)
                };
                for (i, l) in ls.iter().enumerate() {
                    let next = ls.get(i + 1).map(|n| n.born).unwrap_or(f64::INFINITY);
                    let first = if i == 0 { f64::NEG_INFINITY } else { l.born };
                    let last = l.died.unwrap_or(f64::INFINITY);
                    let part: Vec<ShipPoint> = points
                        .iter()
                        .filter(|p| p.capture_time >= first && p.capture_time < next)
                        .filter(|p| p.capture_time <= last)
                        .map(|p| ShipPoint {
                            t: p.capture_time,
                            pos: p.position,
                            speed: p.speed,
                        })
                        .collect();
                    let Some(s) = ships.get_mut(&(session, track.object_id, l.created_frame))
                    else {
                        continue;
                    };
                    // A track with a known origin wins over a relative one.
                    let better = match (s.track_relative, relative) {
                        (false, true) => s.track.is_empty() && !part.is_empty(),
                        (true, false) => !part.is_empty(),
                        _ => part.len() > s.track.len(),
                    };
                    if better {
                        s.track_direction = Some(dir);
                        s.track = part;
                        s.track_relative = relative;
                    }
                }
            }
        }
        for (key, mut life) in std::mem::take(&mut self.health) {
            let Some(s) = ships.get_mut(&key) else {
                continue;
            };
            life.sort_unstable_by_key(|(index, _)| *index);
            s.health
                .extend(life.into_iter().map(|(index, h)| HealthSeries {
                    index,
                    name: h.name,
                    points: h.points,
                    updates: h.updates,
                }));
        }
        r.ships = ships.into_values().collect();
        for s in &mut r.ships {
            owned_by_client(&r.summary, r.t0_ns, s);
        }
        r.kills = merge_kills(std::mem::take(&mut r.kills));
        // Lives in time order within each session and object: the page lists them so.
        r.ships.sort_by(|a, b| {
            (a.session, a.object_id)
                .cmp(&(b.session, b.object_id))
                .then(a.born.total_cmp(&b.born))
        });
        // Destruction has no position on the wire: take the ship's last known one.
        for e in &mut r.events {
            if e.position.is_none() && e.kind.on_map() {
                e.position = e.ship.and_then(|id| {
                    r.ships
                        .iter()
                        .find(|s| s.is(e.session, id) && !s.track_relative)
                        .and_then(|s| position_at(&s.track, e.t))
                });
            }
        }
        r
    }
}

/// Name a life after the client who flew it: the creator or controller found while
/// reading, else the client holding the creation's slot in that session when the life
/// began (the latest to join before it). The client's own name and slot win over the
/// ship record's name field, which is the ship's name and only by default the player's.
fn owned_by_client(summary: &CaptureSummary, t0_ns: i64, s: &mut Ship) {
    let Some(sess) = summary.sessions.iter().find(|x| x.index == s.session) else {
        return;
    };
    if s.client.is_none() {
        let born_ns = t0_ns.saturating_add((s.born * 1e9) as i64);
        s.client = s.slot.and_then(|slot| {
            let holders = || sess.clients.iter().filter(|c| c.slot == Some(slot));
            holders()
                .filter(|c| c.first_ts_ns <= born_ns)
                .max_by_key(|c| c.first_ts_ns)
                .or_else(|| holders().min_by_key(|c| c.first_ts_ns))
                .map(|c| c.index)
        });
    }
    let Some(c) = s
        .client
        .and_then(|i| sess.clients.iter().find(|c| c.index == i))
    else {
        return;
    };
    if let Some(name) = &c.name {
        s.player = Some(name.clone());
    }
    if let Some(slot) = c.slot {
        s.slot = Some(slot);
    }
}

/// Last known position at or before `t` (the first one if `t` is earlier).
pub fn position_at(track: &[ShipPoint], t: f64) -> Option<[f32; 3]> {
    let i = track.partition_point(|p| p.t <= t);
    track.get(i.saturating_sub(1)).map(|p| p.pos)
}

fn second(t: f64) -> i64 {
    (t.floor() as i64).clamp(0, MAX_SECONDS)
}

fn sort_gaps(g: &mut Vec<Gap>) {
    g.sort_by(|a, b| b.length.total_cmp(&a.length));
    g.truncate(MAX_GAPS);
}

fn interesting(opcode: u8) -> bool {
    use op::*;
    matches!(
        opcode,
        PYTHON_EVENT
            | START_FIRING
            | STOP_FIRING
            | DESTROY_OBJECT
            | COLLISION_EFFECT
            | TORPEDO_FIRE
            | BEAM_FIRE
            | EXPLOSION
            | CHAT_MESSAGE
            | TEAM_CHAT_MESSAGE
            | SCORE_CHANGE
    )
}

/// What kind of event a message is, and the object ids it names (the actor and its
/// target), from the typed body.
fn event_objects(game: &GameMessage) -> Option<(EventKind, Option<u32>, Option<u32>)> {
    let body = game.body.as_ref()?;
    if let Some(id) = body.exploding_object() {
        return Some((EventKind::ShipExploding, Some(id), None));
    }
    Some(match body {
        Body::Explosion(x) => (EventKind::Explosion, Some(x.object_id), None),
        Body::Object(o) if o.opcode == op::DESTROY_OBJECT => {
            (EventKind::Destroyed, Some(o.object_id), None)
        }
        Body::TorpedoFire(x) => (
            EventKind::TorpedoFire,
            Some(x.launcher),
            x.target.map(|(id, _)| id),
        ),
        Body::BeamFire(x) => (EventKind::BeamFire, Some(x.emitter), x.target),
        Body::Event(e) => {
            let h = e.header()?;
            match e.opcode {
                op::START_FIRING => (EventKind::StartFiring, Some(h.destination), None),
                op::STOP_FIRING => (EventKind::StopFiring, Some(h.destination), None),
                // The reporting ship is the header's destination, the other object
                // its source.
                op::COLLISION_EFFECT => (EventKind::Collision, Some(h.destination), Some(h.source)),
                _ => return None,
            }
        }
        _ => return None,
    })
}

/// Name of a top-level subsystem of a class given by its readable or script name.
fn subsystem_name(catalog: &ShipCatalog, class: &str, index: u8) -> Option<String> {
    catalog
        .classes()
        .iter()
        .find(|c| c.display_name == class || c.name == class)
        .and_then(|c| c.entry(index as usize))
        .map(|e| e.name.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::field::{Field, Span, Value};
    use crate::game::objects::ObjectRegistry;
    use crate::game::opcodes::Body;
    use crate::game::opcodes::DecodeContext;
    use crate::pipeline::record::{GamePacket, MessageRecord};
    use crate::report::names::NoNames;

    fn message(game: GameMessage, relay_of: Option<u64>) -> MessageRecord {
        MessageRecord {
            offset: 1,
            length: game.length + 3,
            transport_type: 0x32,
            transport: TransportInfo::Unknown,
            payload_offset: Some(4),
            retransmission: false,
            original_frame: None,
            keepalive: false,
            order: None,
            game: Some(game),
            assembled: None,
            relay_of,
            warnings: Vec::new(),
        }
    }

    fn game(opcode: u8, fields: Vec<Field>) -> GameMessage {
        GameMessage {
            opcode,
            name: crate::game::opcodes::opcode_name(opcode),
            length: 10,
            fields,
            warnings: Vec::new(),
            body: None,
        }
    }

    fn packet(
        ts_ns: i64,
        dir: Direction,
        client: usize,
        messages: Vec<MessageRecord>,
    ) -> PacketRecord {
        PacketRecord {
            frame: 1,
            ts_ns,
            src: "127.0.0.1:1".parse().unwrap(),
            dst: "127.0.0.1:2".parse().unwrap(),
            direction: dir,
            session: 0,
            client,
            udp_len: 20,
            comment: None,
            fragment_frames: Vec::new(),
            body: PacketBody::Game(GamePacket {
                peer_id: 2,
                msg_count: messages.len() as u8,
                plain: Vec::new(),
                messages,
                warnings: Vec::new(),
            }),
        }
    }

    /// An Explosion at about (1, 2, 3) doing about 25 damage, decoded from its bytes
    /// with its field tree.
    fn explosion(id: u32) -> GameMessage {
        use crate::game::compressed::{cf16_encode, cv3_encode};
        let len = 14f32.sqrt();
        let x = crate::game::opcodes::weapons::Explosion {
            object_id: id,
            position: (
                cv3_encode([1.0 / len, 2.0 / len, 3.0 / len]),
                cf16_encode(len),
            ),
            damage: cf16_encode(25.0),
            radius: cf16_encode(10.0),
        };
        let (registry, catalog) = (ObjectRegistry::default(), ShipCatalog::stock());
        crate::game::opcodes::decode(&x.emit(), &DecodeContext::new(&registry, &catalog))
    }

    fn su(id: u32, pos: Option<[f32; 3]>) -> GameMessage {
        let mut g = game(0x1C, Vec::new());
        g.body = Some(Body::StateUpdate(Box::new(StateUpdate {
            object_id: id,
            flags: 0x01,
            position: pos,
            ..StateUpdate::default()
        })));
        g
    }

    /// A StateUpdate of `id` whose subsystem block holds one base record (index 2) at
    /// `condition`.
    fn su_with_condition(id: u32, condition: u8) -> GameMessage {
        use crate::game::ships::RecordFormat;
        use crate::game::subsys::{SubsystemBlock, SubsystemRecord};
        let mut g = su(id, None);
        if let Some(s) = g.state_update_mut() {
            s.subsystems = Some(SubsystemData::Decoded(SubsystemBlock {
                start: 2,
                records: vec![SubsystemRecord {
                    index: 2,
                    format: RecordFormat::Base,
                    condition,
                    children: Default::default(),
                    power_pct: None,
                    batteries: [0; 2],
                    facings: [0; 6],
                }],
            }));
        }
        g
    }

    #[test]
    fn counts_rates_per_second_and_direction() {
        let mut c = Collector::new("x", ShipCatalog::stock(), false);
        let s = 1_000_000_000;
        for (ts, dir) in [
            (0, Direction::C2S),
            (s / 2, Direction::C2S),
            (3 * s, Direction::S2C),
        ] {
            let p = packet(ts, dir, 0, vec![message(su(7, Some([0.0; 3])), None)]);
            c.add(&p, &NoNames);
        }
        let r = c.finish(CaptureSummary::default());
        assert_eq!(r.rates[0][&0x1C], BTreeMap::from([(0, 2)]));
        assert_eq!(r.rates[1][&0x1C], BTreeMap::from([(3, 1)]));
        assert_eq!(r.duration, 3.0);
        assert_eq!(r.stats().dirs[0].opcodes[&0x1C], 2);
        assert_eq!(r.ships.len(), 1);
        assert_eq!(r.ships[0].updates, 3);
        // Both directions tracked the object; the one with more points is drawn.
        assert_eq!(r.ships[0].track_direction, Some(Direction::C2S));
        assert_eq!(r.ships[0].track.len(), 2);
        // A gap of 2.5 s between the two C2S datagrams is not a gap (different streams).
        assert_eq!(r.transport.gap_count, 0);
    }

    #[test]
    fn host_copies_and_relays_count_once() {
        let mut c = Collector::new("x", ShipCatalog::stock(), false);
        // The host sends the same explosion to two clients, and relays a client's.
        c.add(
            &packet(0, Direction::S2C, 1, vec![message(explosion(5), None)]),
            &NoNames,
        );
        c.add(
            &packet(1000, Direction::S2C, 2, vec![message(explosion(5), None)]),
            &NoNames,
        );
        c.add(
            &packet(2000, Direction::C2S, 1, vec![message(explosion(6), None)]),
            &NoNames,
        );
        c.add(
            &packet(
                3000,
                Direction::S2C,
                2,
                vec![message(explosion(6), Some(3))],
            ),
            &NoNames,
        );
        // Same message to the same client again much later: a new event.
        c.add(
            &packet(
                2_000_000_000,
                Direction::S2C,
                2,
                vec![message(explosion(5), None)],
            ),
            &NoNames,
        );
        let r = c.finish(CaptureSummary::default());
        let ids: Vec<_> = r.events.iter().map(|e| e.object).collect();
        assert_eq!(ids, [Some(5), Some(6), Some(5)]);
        // What the message's own field tree shows, and about what was sent.
        let tree = explosion(5).fields;
        let shown = |name: &str| tree.iter().find(|f| f.name == name).map(|f| &f.value);
        let value = r.events[0].value.unwrap();
        assert_eq!(shown("damage"), Some(&Value::Float(value)));
        assert!((value - 25.0).abs() < 0.5, "{value}");
        let position = r.events[0].position.unwrap();
        assert_eq!(shown("position"), Some(&Value::Vec3(position)));
        for (got, want) in position.iter().zip([1.0, 2.0, 3.0]) {
            assert!((got - want).abs() < 0.1, "{position:?}");
        }
        // Rates count every delivered message (the wire), events count the happenings.
        assert_eq!(r.rates[1][&0x29].values().sum::<u64>(), 4);
    }

    #[test]
    fn destruction_takes_the_last_known_position() {
        let mut c = Collector::new("x", ShipCatalog::stock(), false);
        let names = Lives::default();
        names.set(9, 9, 1);
        let mut destroy = game(
            0x14,
            vec![Field::new(
                crate::game::registry::field!("object_id"),
                Value::ObjectId(9),
                Span::default(),
            )],
        );
        destroy.body = Some(Body::Object(crate::game::opcodes::lobby::ObjectMessage {
            opcode: 0x14,
            object_id: 9,
        }));
        c.add(
            &packet(
                0,
                Direction::C2S,
                1,
                vec![message(su(9, Some([5.0, 6.0, 7.0])), None)],
            ),
            &names,
        );
        c.add(
            &packet(
                10,
                Direction::C2S,
                1,
                vec![message(su(9, Some([8.0, 6.0, 7.0])), None)],
            ),
            &names,
        );
        c.add(
            &packet(20, Direction::S2C, 1, vec![message(destroy, None)]),
            &names,
        );
        let r = c.finish(CaptureSummary::default());
        assert_eq!(r.events[0].kind, EventKind::Destroyed);
        assert_eq!(r.events[0].position, Some([8.0, 6.0, 7.0]));
    }

    #[test]
    fn gaps_are_silences_within_one_stream() {
        let mut c = Collector::new("x", ShipCatalog::stock(), false);
        let s = 1_000_000_000i64;
        for ts in [0, s / 10, 3 * s, 3 * s + 1, 10 * s] {
            c.add(&packet(ts, Direction::C2S, 1, Vec::new()), &NoNames);
        }
        let r = c.finish(CaptureSummary::default());
        assert_eq!(r.transport.gap_count, 2);
        let g = &r.transport.gaps;
        assert!((g[0].length - 7.0).abs() < 1e-6 && (g[0].start - 3.0).abs() < 1e-6);
        assert!((g[1].length - 2.9).abs() < 1e-6);
    }

    #[test]
    fn ack_delay_quantiles_come_from_the_log_histogram() {
        let mut c = Collector::new("x", ShipCatalog::stock(), false);
        for d in [1_000_000i64, 2_000_000, 3_000_000, 100_000_000] {
            let mut m = message(game(0, Vec::new()), None);
            m.game = None;
            m.transport = TransportInfo::Ack {
                seq: 1,
                flags: 0,
                fragment_index: None,
                acked_frame: Some(1),
                delay_ns: Some(d),
                duplicate: false,
            };
            c.add(&packet(0, Direction::S2C, 1, vec![m]), &NoNames);
        }
        let r = c.finish(CaptureSummary::default());
        let t = &r.transport;
        assert_eq!(t.ack_delays[1], 4);
        assert_eq!(t.ack_delay_max_ns[1], 100_000_000);
        let p50 = t.ack_delay_quantile_ns(Direction::S2C, 0.5).unwrap();
        assert!((1_000_000..=2_100_000).contains(&p50), "{p50}");
        assert_eq!(
            t.ack_delay_quantile_ns(Direction::S2C, 1.0),
            Some(100_000_000)
        );
        assert_eq!(t.ack_delay_quantile_ns(Direction::C2S, 0.5), None);
        assert_eq!(t.acks[1][&0].count, 4);
    }

    #[test]
    fn subsystem_conditions_keep_changes_only() {
        let mut c = Collector::new("x", ShipCatalog::stock(), false);
        for (i, cond) in [255u8, 255, 128, 128, 0].into_iter().enumerate() {
            let g = su_with_condition(3, cond);
            c.add(
                &packet(
                    i as i64 * 1_000_000_000,
                    Direction::S2C,
                    1,
                    vec![message(g, None)],
                ),
                &NoNames,
            );
        }
        let r = c.finish(CaptureSummary::default());
        let h = &r.ships[0].health[0];
        assert_eq!(h.name, "subsystem 2"); // class unknown to NoNames
        assert_eq!(h.updates, 5);
        let v: Vec<f32> = h.points.iter().map(|p| p.1).collect();
        assert_eq!(v.len(), 3);
        assert_eq!(v[0], 100.0);
        assert_eq!(v[2], 0.0);
    }

    #[test]
    fn many_lives_keep_their_condition_series() {
        // Catches the old bound of 4,096 series, beyond which lives lost their data.
        let mut c = Collector::new("x", ShipCatalog::stock(), false);
        let lives = 5000u32;
        for id in 0..lives {
            let g = su_with_condition(0x1000 + id, 200);
            c.add(
                &packet(
                    id as i64 * 1_000_000,
                    Direction::S2C,
                    1,
                    vec![message(g, None)],
                ),
                &NoNames,
            );
        }
        let r = c.finish(CaptureSummary::default());
        assert_eq!(r.health_dropped, 0);
        assert_eq!(r.ships.len(), lives as usize);
        assert!(r.ships.iter().all(|s| s.health.len() == 1));
    }

    /// Names that answer which ship life an id belongs to from a table the test sets,
    /// as the pipeline's registry does at the time of each record.
    #[derive(Default)]
    struct Lives {
        owners: std::cell::RefCell<HashMap<u32, ShipIdentity>>,
    }

    impl Lives {
        fn set(&self, id: u32, owner: u32, created_frame: u64) {
            self.owners.borrow_mut().insert(
                id,
                ShipIdentity {
                    object_id: owner,
                    created_frame,
                },
            );
        }
    }

    impl Names for Lives {
        fn client_name(&self, _: usize, _: usize) -> Option<String> {
            None
        }
        fn describe_object(&self, _: usize, id: u32) -> Option<String> {
            let o = self.owners.borrow().get(&id).copied()?;
            Some(format!("ship {:x}@{}", o.object_id, o.created_frame))
        }
        fn object_class(&self, _: usize, _: u32) -> Option<String> {
            None
        }
        fn ship_class(&self, _: u16) -> Option<&crate::game::ships::ShipClass> {
            None
        }
        fn epoch(&self) -> u64 {
            0
        }
        fn ship_of(&self, _: usize, id: u32) -> Option<ShipIdentity> {
            self.owners.borrow().get(&id).copied()
        }
    }

    fn torpedo_fire(launcher: u32) -> GameMessage {
        use crate::game::opcodes::weapons::TorpedoFire;
        let mut g = game(0x19, Vec::new());
        g.body = Some(Body::TorpedoFire(TorpedoFire {
            launcher,
            torpedo_type: 2,
            flags: 0,
            direction: [0; 3],
            target: None,
        }));
        g
    }

    fn exploding(id: u32) -> GameMessage {
        use crate::game::opcodes::events::{
            Event as Ev, EventBody, EventHeader, EventMessage, EventTail, CLASS_OBJECT_EXPLODING,
            EVENT_OBJECT_EXPLODING,
        };
        let mut g = game(0x06, Vec::new());
        g.body = Some(Body::Event(EventMessage {
            opcode: 0x06,
            body: EventBody::Event(Ev {
                header: EventHeader {
                    class_id: CLASS_OBJECT_EXPLODING,
                    event_type: EVENT_OBJECT_EXPLODING,
                    source: 0,
                    destination: id,
                },
                tail: EventTail::ObjectExploding {
                    killer_peer_id: 1,
                    duration: 1.0,
                },
            }),
        }));
        g
    }

    fn at(c: &mut Collector, names: &Lives, secs: f64, g: GameMessage) {
        let p = packet(
            (secs * 1e9) as i64,
            Direction::C2S,
            1,
            vec![message(g, None)],
        );
        c.add(&p, names);
    }

    #[test]
    fn events_follow_the_ship_life_that_sent_them() {
        const HEAVY: u32 = 0x4007_FFFF;
        const NEBULA: u32 = 0x4008_0018;
        let names = Lives::default();
        let mut c = Collector::new("x", ShipCatalog::stock(), false);
        // Times count from the first datagram.
        c.add(&packet(0, Direction::C2S, 1, Vec::new()), &names);
        // The first ship flies, fires from a tube of its own and explodes.
        names.set(HEAVY, HEAVY, 10);
        names.set(HEAVY + 5, HEAVY, 10);
        at(&mut c, &names, 1.0, su(HEAVY, Some([0.0; 3])));
        at(&mut c, &names, 2.0, torpedo_fire(HEAVY + 5));
        at(&mut c, &names, 3.0, su(HEAVY, Some([1.0, 0.0, 0.0])));
        at(&mut c, &names, 5.0, exploding(HEAVY));
        // An update in flight when it died: counted, not drawn.
        at(&mut c, &names, 5.5, su(HEAVY, Some([9.0, 9.0, 0.0])));
        // The player's next ship, with its own tubes; its id lies above the first's.
        names.set(NEBULA, NEBULA, 50);
        names.set(NEBULA + 5, NEBULA, 50);
        at(&mut c, &names, 10.0, su(NEBULA, Some([5.0; 3])));
        at(&mut c, &names, 12.0, torpedo_fire(NEBULA + 5));
        // The first id created again: another life, not the dead ship.
        names.set(HEAVY, HEAVY, 80);
        at(&mut c, &names, 20.0, su(HEAVY, Some([7.0; 3])));
        at(&mut c, &names, 21.0, su(HEAVY, Some([8.0; 3])));
        let r = c.finish(CaptureSummary::default());

        let lives: Vec<(u32, Option<u64>, f64, Option<f64>)> = r
            .ships
            .iter()
            .map(|s| (s.object_id, s.created_frame, s.born, s.died))
            .collect();
        assert_eq!(
            lives,
            [
                (HEAVY, Some(10), 1.0, Some(5.0)),
                (HEAVY, Some(80), 20.0, None),
                (NEBULA, Some(50), 10.0, None),
            ]
        );
        let first = &r.ships[0];
        assert!(first.track.iter().all(|p| p.t <= 5.0), "{:?}", first.track);
        assert_eq!(first.track.len(), 2);
        assert_eq!(r.ships[1].track.len(), 2);
        assert!(r.ships[1].track.iter().all(|p| p.t >= 20.0));
        assert_eq!(r.updates_after_death, 1);
        // Each fire is on the ship that carried the tube when it fired.
        let fires: Vec<_> = r
            .events
            .iter()
            .filter(|e| e.kind == EventKind::TorpedoFire)
            .map(|e| (e.t, e.ship.map(|s| (s.object_id, s.created_frame))))
            .collect();
        assert_eq!(
            fires,
            [(2.0, Some((HEAVY, 10))), (12.0, Some((NEBULA, 50)))]
        );
        for e in &r.events {
            let s = r
                .ships
                .iter()
                .find(|s| e.ship.is_some_and(|k| s.is(e.session, k)))
                .expect("every event has its ship");
            assert!(s.alive_at(e.t), "{e:?} outside {}..{}", s.born, s.end);
        }
        // The death is where the explosion takes its position from: the last drawn one.
        let boom = r.events.iter().find(|e| e.kind == EventKind::ShipExploding);
        assert_eq!(boom.and_then(|e| e.position), Some([1.0, 0.0, 0.0]));
    }

    #[test]
    fn an_object_without_a_creation_is_not_described_as_another_ships_part() {
        let names = Lives::default();
        let mut c = Collector::new("x", ShipCatalog::stock(), false);
        at(&mut c, &names, 1.0, su(0x4010_0290, Some([0.0; 3])));
        let r = c.finish(CaptureSummary::default());
        assert_eq!(r.ships.len(), 1);
        assert_eq!(r.ships[0].created_frame, None);
        assert_eq!(r.ships[0].label, "0x40100290");
    }
}
