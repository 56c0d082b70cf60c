//! Drives the stages for one capture and hands one record per BC datagram to a sink.
//!
//! capture → net → flow → transport (decrypt, walk, reliability, reassembly) → game.
//! State that outlives a datagram is bounded by the limits of the stage that owns it.
//!
//! Why this file is long: about 1,360 lines; it wires every stage for one datagram (into
//! a record, or into a counting sink's tally) and builds the summaries at the end of each
//! session; both read the same per-stream state, kept in one place.

mod arrival;
pub mod display;
mod display_text;
pub mod facts;
pub mod field_names;
pub mod filter;
pub mod front;
pub mod hold;
mod link_count;
pub mod names;
pub mod record;
pub mod summary;
pub mod tally;
pub mod values;

use crate::capture::{CaptureFormat, CaptureReader};
use crate::diag::{Code, Direction, Warning};
use crate::flow::{PayloadKind, Session, SessionTable};
use crate::game::objects::{ObjectKind, ObjectRegistry, MAX_OBJECTS};
use crate::game::opcodes::{self, Body, DecodeContext};
use crate::game::phases::{PhaseTracker, TransportEvent};
use crate::game::relay::{RelayLinker, MAX_PENDING as RELAY_MAX_PENDING, RELAY_WINDOW_SECS};
use crate::game::ship_log::MAX_SHIPS_LISTED;
use crate::game::ships::{ShipCatalog, ShipClass};
use crate::game::GameMessage;
use crate::net::{FragmentReport, NetOutcome};
use crate::transport::facts::MAX_EVENTS_PER_CLIENT;
use crate::transport::packet::{self, Message, Packet};
use crate::transport::reassembly::{Incomplete, IncompleteReason};
use crate::transport::reliability::{MAX_ENTRIES_PER_STREAM, MAX_REPORTED_UNACKED};
use crate::transport::stream::{Arrival, Content, StayEvent, Streams};
use crate::transport::{cipher, SessionFacts};
use anyhow::Result;
use names::{Names, ShipIdentity};
use record::{Assembled, GamePacket, MessageRecord, PacketBody, PacketRecord, Spares};
// Fx: internal tables keyed by small fixed-size values; see Cargo.toml.
use front::{FrameMeta, Front, FrontEnd, Item, Returns};
use rustc_hash::FxHashMap as HashMap;
use std::sync::mpsc;
use summary::{CaptureSummary, ClientSummary, DirSummary, SessionSummary};
use tally::{MessageTally, Tally};

/// Sessions listed one by one in the summary. Later ones are only counted (in
/// [`CaptureSummary::session_count`] and the totals), so that a capture of any length is
/// summarised in bounded memory.
pub const MAX_SESSIONS_LISTED: usize = 1024;

/// A client of a session, and one direction of one client's flow.
pub use crate::transport::stream::{ClientKey, StreamKey};

/// What to do after a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    Continue,
    Stop,
}

/// How much of each record a sink reads: which game messages get a field tree
/// ([`FieldTrees`], the decoder's own setting; one name from the decoder to the sink).
/// `None` leaves out the `fields` of game messages (but Settings, which the pipeline
/// reads itself) and of connection-management messages: building field trees is most
/// of a full decode's cost, and statistics never look at them.
pub use crate::game::opcodes::FieldTrees;

/// Receives the records of a run, in capture order.
pub trait Sink {
    fn packet(&mut self, p: &PacketRecord, names: &dyn Names) -> Result<Control>;

    /// What this sink reads; asked once, before the first record.
    fn field_trees(&self) -> FieldTrees {
        FieldTrees::All
    }

    /// Whether this sink reads `relay_of` (the client message a host's copy relays).
    /// Linking relays hashes every message of every client, so a sink that counts only
    /// (`stats`) says no and saves that work; the linker's own problem (too many
    /// messages pending) is then not reported either.
    fn links_relays(&self) -> bool {
        true
    }

    /// Whether this sink reads the per-flow figures of the run's summary
    /// ([`ClientSummary::dirs`] and [`CaptureSummary::totals`]). A sink that counts the
    /// records it selects itself (`stats`) says no, and the pipeline does not count
    /// every record a second time: those figures are then zero, but for `unacked` and
    /// `fragment_sets_incomplete`, which the end of each stream gives.
    fn reads_flow_counts(&self) -> bool {
        true
    }

    /// Whether this sink counts no more of a datagram than its [`Tally`] holds. Such a
    /// sink (`stats` without a selection) is handed a tally per BC or GameSpy datagram
    /// ([`Sink::tally`]) instead of a record: no record is built for it. Honoured only
    /// when the sink does not read the per-flow figures either
    /// ([`Sink::reads_flow_counts`]), which are counted from records.
    fn tallies(&self) -> bool {
        false
    }

    /// The tally of a datagram, in place of its record (see [`Sink::tallies`]).
    fn tally(&mut self, _t: &Tally) {}

    /// Session `session` can receive no more datagrams: every record of it has been
    /// handed over. Lets a sink that keeps per-session state let go of it. Sessions
    /// still open when the capture ends are not announced: the run's end covers them.
    fn session_ended(&mut self, _session: usize) {}

    /// A frame was read, whatever it holds (called before the record of its datagram,
    /// if it has one): the delta and relative times of tshark's `-t d` and `-t r`
    /// count from the frames captured, not only from the records. `ts_digits` is the
    /// precision of its timestamp unit.
    fn frame_read(&mut self, _ts_ns: i64, _ts_digits: u8) {}

    /// The last record of the input was handed over (not called after a stop). A
    /// stage that holds records back hands them on here.
    fn end(&mut self, _names: &dyn Names) -> Result<Control> {
        Ok(Control::Continue)
    }

    /// Whether the sink's selection names players, so that on standard input the
    /// records of a client not yet named must wait for its name ([`hold`]).
    fn selects_by_player(&self) -> bool {
        false
    }
}

/// The `not_bc` reason of UDP datagrams with the game port on neither end; their ports
/// are counted in [`CaptureSummary::udp_ports`].
pub const OTHER_UDP_PORTS: &str = "other UDP ports";

/// A sink that keeps nothing (for `info` and `flows`, which only need the summary).
pub struct NullSink;

impl Sink for NullSink {
    fn packet(&mut self, _: &PacketRecord, _: &dyn Names) -> Result<Control> {
        Ok(Control::Continue)
    }
    fn field_trees(&self) -> FieldTrees {
        FieldTrees::None
    }
}

#[derive(Debug, Clone)]
pub struct Config {
    pub game_port: u16,
    pub ships: ShipCatalog,
    /// Read ahead and decipher game datagrams in groups; off, every frame is handed
    /// on as soon as it is read (a live capture).
    pub read_ahead: bool,
    /// With `read_ahead`, run the reading on a thread of its own when there is a
    /// second core.
    pub front_thread: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            game_port: crate::flow::DEFAULT_GAME_PORT,
            ships: ShipCatalog::stock(),
            read_ahead: true,
            front_thread: true,
        }
    }
}

/// Game-layer state of one session.
#[derive(Debug, Default)]
struct SessionState {
    registry: ObjectRegistry,
    relay: RelayLinker<usize>,
    /// Player slot of each client, from the Settings message the host sent it.
    slots: HashMap<usize, u8>,
    /// The phase of each client, by its index in the session (none until it is seen):
    /// kept with the session, whose state every game message looks up anyway, rather
    /// than in a table of its own looked up once more per message.
    phases: Vec<Option<PhaseTracker>>,
}

impl SessionState {
    /// The phase tracker of client `client`, started when it is first asked for.
    fn phase(&mut self, client: usize) -> &mut PhaseTracker {
        // Client indices are dense and bounded by the session table's client limit.
        if self.phases.len() <= client {
            self.phases.resize_with(client + 1, || None);
        }
        self.phases[client].get_or_insert_with(PhaseTracker::default)
    }
}

/// The whole decoding state of one capture.
pub struct Pipeline {
    config: Config,
    flows: SessionTable,
    /// Game-layer state of each live session, by index; released when it retires.
    sessions: HashMap<usize, SessionState>,
    /// Reliability, reassembly and session facts of every stream.
    streams: Streams,
    /// The figures of each stream, counted from its records as they are handed out.
    counts: HashMap<StreamKey, DirSummary>,
    /// Frames by link type, named into the summary at the end.
    link_counts: link_count::LinkCounts,
    summary: CaptureSummary,
    /// Which messages get field trees, as the sink asked ([`Sink::field_trees`]).
    trees: FieldTrees,
    /// The sink reads `relay_of` ([`Sink::links_relays`]).
    link_relays: bool,
    /// The sink reads the per-flow figures ([`Sink::reads_flow_counts`]).
    count_flows: bool,
    /// The sink is handed tallies instead of records ([`Sink::tallies`]).
    tallies: bool,
    /// The tally handed to such a sink, refilled for every datagram.
    tally: Tally,
    /// Storage of the records already handed out, refilled by later ones.
    spares: Spares,
    /// The datagram record handed to the sink, refilled in place for every datagram
    /// (boxed, so that taking it out and putting it back moves a pointer): built and
    /// moved anew, the record and its game packet (some 200 bytes) were copied several
    /// times per datagram on their way to the sink and back to the spares.
    record: Option<Box<PacketRecord>>,
    /// Payload buffers and transport walks of handled datagrams, to go back to the
    /// front.
    returns: Returns,
    /// Bumped whenever an object or a player slot changes, for [`Names::epoch`].
    names_epoch: u64,
}

/// Front items handled per turn without a front thread: few, so that a stop reads
/// little ahead.
const INLINE_BATCH: usize = 16;
/// Front items per batch handed between threads: enough to make the handover cheap.
/// Larger batches wake a waiting thread less often (`stats` over a million frames:
/// 3,100–3,800 context switches at 256 items, 700–900 at 1,024), but they hold more
/// frames between the stages: at 1,024 peak RSS rose by about 5 MB (Parquet output of
/// 10 M frames to 62.7 MB, near the 64 MB bound), for a wall time gain within this
/// machine's noise.
const THREAD_BATCH: usize = 256;
/// Batches on their way between the threads: bounds the datagrams held at once.
const BATCHES_IN_FLIGHT: usize = 2;

/// Reads a little of every payload and of every transport message of a batch the front
/// thread handed over, before any of its frames is handled. The front wrote them on the
/// other core, so the first read of each is a cache miss on this one. Met one frame at
/// a time, each miss stalled the frame that needed it (`perf annotate`: the payload's
/// first byte in flow classification and the message list were the decoding thread's
/// hottest instructions). Read together here, with no read waiting on another, the
/// misses overlap (`stats` over a million stock frames, 15 interleaved runs: wall
/// time 0.82 → 0.73 s, median).
fn warm_up(batch: &[Item]) {
    let mut seen = 0usize;
    for item in batch {
        if let Item::Frame {
            outcome: NetOutcome::Datagram(d),
            parsed,
            ..
        } = item
        {
            seen ^= usize::from(d.payload.first().copied().unwrap_or(0));
            for m in parsed.iter().flat_map(|p| &p.messages) {
                seen ^= m.len ^ m.warnings.len();
            }
        }
    }
    // Otherwise unused: `black_box` keeps the reads from being optimised away.
    std::hint::black_box(seen);
}

/// Whether a front thread can run beside decoding: only with a second core.
fn front_thread_pays() -> bool {
    std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2)
}

/// Names as known right now, for reports.
struct NameView<'a> {
    facts: &'a SessionFacts<ClientKey>,
    sessions: &'a HashMap<usize, SessionState>,
    ships: &'a ShipCatalog,
    epoch: u64,
}

impl NameView<'_> {
    fn slot_player(&self, session: usize, slot: u8) -> Option<String> {
        let slots = &self.sessions.get(&session)?.slots;
        slot_player(slots, self.facts, session, slot)
    }
}

/// The player in a slot of a session, by the name the client gave (the newest client
/// in that slot when several held it in turn).
fn slot_player(
    slots: &HashMap<usize, u8>,
    facts: &SessionFacts<ClientKey>,
    session: usize,
    slot: u8,
) -> Option<String> {
    slots
        .iter()
        .filter(|(_, s)| **s == slot)
        .max_by_key(|(c, _)| **c)
        .and_then(|(c, _)| facts.client(&(session, *c)))
        .and_then(|f| f.name.clone())
}

impl Names for NameView<'_> {
    fn client_name(&self, session: usize, client: usize) -> Option<String> {
        self.facts
            .client(&(session, client))
            .and_then(|f| f.name.clone())
    }
    fn client_peer_id(&self, session: usize, client: usize) -> Option<u8> {
        let f = self.facts.client(&(session, client))?;
        f.assigned_peer_id.or(f.info_peer_id)
    }
    fn describe_object(&self, session: usize, object_id: u32) -> Option<String> {
        let st = self.sessions.get(&session)?;
        st.registry
            .describe_with(object_id, &|slot| self.slot_player(session, slot))
    }
    fn object_owner(&self, session: usize, object_id: u32) -> Option<(u8, Option<String>)> {
        let o = self
            .sessions
            .get(&session)?
            .registry
            .owner_ship(object_id)?;
        let name = self
            .slot_player(session, o.owner_slot)
            .or_else(|| (!o.player_name.is_empty()).then(|| o.player_name.clone()));
        Some((o.owner_slot, name))
    }
    fn object_class(&self, session: usize, object_id: u32) -> Option<String> {
        let reg = &self.sessions.get(&session)?.registry;
        reg.get(object_id)
            .or_else(|| reg.owner_ship(object_id))
            .map(|o| o.class_name.clone())
    }
    fn ship_class(&self, species: u16) -> Option<&ShipClass> {
        self.ships.class(species)
    }
    fn epoch(&self) -> u64 {
        self.epoch
    }
    fn ship_of(&self, session: usize, object_id: u32) -> Option<ShipIdentity> {
        let o = self
            .sessions
            .get(&session)?
            .registry
            .owner_ship(object_id)?;
        (o.kind == ObjectKind::Ship).then_some(ShipIdentity {
            object_id: o.object_id,
            created_frame: o.created_frame,
        })
    }
}

fn format_name(f: CaptureFormat) -> String {
    match f {
        CaptureFormat::Pcap {
            resolution, endian, ..
        } => format!("pcap ({}, {})", resolution.describe(), endian.as_str()),
        CaptureFormat::PcapNg => "pcapng".to_string(),
    }
}

impl Pipeline {
    pub fn new(config: Config) -> Pipeline {
        Pipeline {
            flows: SessionTable::new(config.game_port),
            config,
            sessions: HashMap::default(),
            streams: Streams::new(),
            counts: HashMap::default(),
            link_counts: Default::default(),
            summary: CaptureSummary::default(),
            trees: FieldTrees::All,
            spares: Spares::new(),
            record: None,
            returns: Returns::default(),
            names_epoch: 0,
            link_relays: true,
            count_flows: true,
            tallies: false,
            tally: Tally::new(),
        }
    }

    /// Read a whole capture, handing each BC datagram's record to `sink`.
    ///
    /// The front (reading, network layers, deciphering) runs on a thread of its own
    /// when the machine has a second core and `read_ahead` allows it; the records and
    /// the summary are the same either way.
    pub fn run(mut self, reader: CaptureReader, sink: &mut dyn Sink) -> Result<CaptureSummary> {
        self.summary.format = format_name(reader.format());
        self.trees = sink.field_trees();
        self.link_relays = sink.links_relays();
        self.count_flows = sink.reads_flow_counts();
        self.tallies = sink.tallies() && !self.count_flows;
        let read_ahead = self.config.read_ahead;
        let front = Front::new(reader, self.config.game_port, read_ahead);
        let end = if read_ahead && self.config.front_thread && front_thread_pays() {
            self.run_with_front_thread(front, sink)?
        } else {
            self.run_inline(front, sink)?
        };
        // After a stop, what lies beyond it (a cut at the end of the file, fragment
        // sets that later frames might complete) is not reported.
        if end.is_some() {
            let names = NameView {
                facts: self.streams.facts(),
                sessions: &self.sessions,
                ships: &self.config.ships,
                epoch: self.names_epoch + self.streams.facts().names_version(),
            };
            sink.end(&names)?;
        }
        if let Some(end) = end {
            self.summary.compression = end.compression.clone();
            for w in &end.notes {
                self.summary.add_problem(w.code, w.to_string());
            }
            if let Some(t) = &end.truncation {
                let w = t.to_warning();
                self.summary.add_problem(w.code, w.to_string());
            }
            self.add_fragment_problems(&end.fragments);
        }
        Ok(self.finish())
    }

    /// Front and decoding in turn on this thread, a few frames at a time.
    fn run_inline(&mut self, mut front: Front, sink: &mut dyn Sink) -> Result<Option<FrontEnd>> {
        let max = if self.config.read_ahead {
            INLINE_BATCH
        } else {
            1
        };
        let mut batch = Vec::with_capacity(INLINE_BATCH + cipher::LANES);
        loop {
            let more = front.fill(&mut batch, max);
            let control = self.handle_items(&mut batch, sink)?;
            front.take_back(&mut self.returns);
            if control == Control::Stop {
                return Ok(None);
            }
            if !more {
                return Ok(Some(front.finish()));
            }
        }
    }

    /// The front on a thread of its own, handing over batches through a bounded
    /// channel; emptied batches and payload buffers go back for reuse.
    fn run_with_front_thread(
        &mut self,
        mut front: Front,
        sink: &mut dyn Sink,
    ) -> Result<Option<FrontEnd>> {
        // Each batch travels with an emptied return list for the buffers of its items:
        // the lists go round between the threads with their capacity, where a fresh one
        // per batch was allocated and, for a batch of more game datagrams than it had
        // room for, grown by copying (a batch holds up to a cipher group more items than
        // `THREAD_BATCH`).
        let (batches, received) = mpsc::sync_channel::<(Vec<Item>, Returns)>(BATCHES_IN_FLIGHT);
        let (returns, returned) = mpsc::channel::<(Vec<Item>, Returns)>();
        let reading = std::thread::Builder::new()
            .name("bcwire-front".into())
            .spawn(move || {
                loop {
                    let (mut batch, mut spare) = returned.try_recv().unwrap_or_else(|_| {
                        (
                            Vec::with_capacity(THREAD_BATCH + cipher::LANES),
                            Returns::with_capacity(THREAD_BATCH + cipher::LANES),
                        )
                    });
                    front.take_back(&mut spare);
                    batch.clear();
                    let more = front.fill(&mut batch, THREAD_BATCH);
                    // A closed channel means decoding stopped: nothing more to read.
                    if batches.send((batch, spare)).is_err() {
                        return None;
                    }
                    if !more {
                        return Some(front.finish());
                    }
                }
            })?;
        for (mut batch, empty) in received.iter() {
            warm_up(&batch);
            self.returns = empty;
            let control = self.handle_items(&mut batch, sink)?;
            let spare = std::mem::take(&mut self.returns);
            // The front may have finished already; then nothing is reused.
            let _ = returns.send((batch, spare));
            if control == Control::Stop {
                // Dropping the receiver ends the front at its next batch.
                return Ok(None);
            }
        }
        reading
            .join()
            .map_err(|_| anyhow::anyhow!("the capture reading thread failed"))
    }

    /// Handles a batch of front items in order; after a stop the rest are dropped.
    fn handle_items(&mut self, batch: &mut Vec<Item>, sink: &mut dyn Sink) -> Result<Control> {
        let mut control = Control::Continue;
        // Items are handled in place: moving each (a few hundred bytes) out of the
        // batch and into `frame` was a measurable share of the decoding thread; so were
        // the moves of its parts (the frame's facts, the transport walk), now lent.
        for item in batch.iter_mut() {
            if control == Control::Stop {
                break;
            }
            match item {
                Item::Frame {
                    meta,
                    outcome,
                    parsed,
                } => control = self.frame(meta, outcome, parsed, sink)?,
                Item::Problem(code, p) | Item::Fatal(code, p) => {
                    self.summary.add_problem(*code, std::mem::take(p));
                }
            }
        }
        batch.clear();
        Ok(control)
    }

    /// Handles one frame's network outcome; `parsed` is the transport walk the front
    /// did when it deciphered the payload (none: the payload is still enciphered).
    fn frame(
        &mut self,
        frame: &mut FrameMeta,
        outcome: &mut NetOutcome,
        parsed: &mut Option<Packet>,
        sink: &mut dyn Sink,
    ) -> Result<Control> {
        sink.frame_read(frame.ts_ns, frame.ts_digits);
        let s = &mut self.summary;
        s.ts_digits = s.ts_digits.max(frame.ts_digits);
        s.frames += 1;
        s.bytes += frame.len as u64;
        s.first_ts_ns.get_or_insert(frame.ts_ns);
        s.last_ts_ns = Some(frame.ts_ns);
        self.link_counts.count(frame.link_type);
        let d = match outcome {
            NetOutcome::Datagram(d) => d,
            NetOutcome::FragmentHeld => {
                s.ip_fragment_frames += 1;
                return Ok(Control::Continue);
            }
            NetOutcome::Skipped(why) => {
                *s.not_bc.entry(why.to_string()).or_default() += 1;
                return Ok(Control::Continue);
            }
        };
        let classified = self.flows.classify(d);
        // Asked first: walking the empty list of nearly every datagram cost more.
        if self.flows.has_retired() {
            for (index, session) in self.flows.take_retired() {
                self.retire(index, &session, d.ts_ns);
                sink.session_ended(index);
            }
        }
        let s = &mut self.summary;
        let c = match classified {
            Ok(c) => c,
            Err(crate::flow::Unrelated::NotGamePort { src_port, dst_port }) => {
                // One reason for all of them, and the ports counted apart: a reason per
                // port pair would make a line per DNS query.
                *s.not_bc.entry(OTHER_UDP_PORTS.to_string()).or_default() += 1;
                *s.udp_ports.entry(src_port).or_default() += 1;
                if dst_port != src_port {
                    *s.udp_ports.entry(dst_port).or_default() += 1;
                }
                return Ok(Control::Continue);
            }
            Err(why) => {
                *s.not_bc.entry(why.to_string()).or_default() += 1;
                return Ok(Control::Continue);
            }
        };
        // The session's game state starts with its first datagram: here for one that
        // makes no record, and with the client's phase for the others (one lookup).
        let time = d.ts_ns as f64 / 1e9;
        let ckey = (c.session, c.client);
        let udp_len = d.payload.len();
        let stream = (c.session, c.client, c.direction);
        if self.tallies && !matches!(c.kind, PayloadKind::NotBc(_)) {
            self.tally.start(d.ts_ns, c.direction, udp_len);
            match c.kind {
                PayloadKind::Bc { peer_id } => {
                    s.game_frames += 1;
                    let mut plain = std::mem::take(&mut d.payload);
                    if parsed.is_none() {
                        cipher::decrypt(&mut plain);
                    }
                    self.streams
                        .on_datagram(&ckey, c.direction, peer_id, d.ts_ns, d.frame);
                    self.game_tally(plain, parsed, stream, d.ts_ns, d.frame);
                    if let Some(damage) = c.damaged {
                        self.summary.damaged_frames += 1;
                        let w = damage_warning(damage, c.direction);
                        self.tally.warn(std::slice::from_ref(&w));
                        self.tally.damaged = true;
                    }
                }
                // Not a datagram of a record: left out by the test above.
                PayloadKind::NotBc(_) => {}
                PayloadKind::GameSpy => {
                    s.gamespy_frames += 1;
                    self.sessions
                        .entry(c.session)
                        .or_default()
                        .phase(c.client)
                        .on_transport(TransportEvent::GameSpy, time);
                    self.tally.gamespy = true;
                }
            }
            sink.tally(&self.tally);
            return Ok(Control::Continue);
        }
        // Taken out of the pipeline while it is filled, and put back once the sink has
        // read it (a datagram that makes no record leaves it where it is).
        let mut rec = match c.kind {
            PayloadKind::NotBc(_) => None,
            _ => self.record.take(),
        }
        .unwrap_or_else(|| Box::new(PacketRecord::empty()));
        match c.kind {
            PayloadKind::NotBc(why) => {
                self.sessions.entry(c.session).or_default();
                *s.not_bc.entry(why.to_string()).or_default() += 1;
                // Too short to decode, so no record: counted here.
                if self.count_flows {
                    self.counts
                        .entry(stream)
                        .or_default()
                        .count_unrecorded(udp_len);
                }
                self.record = Some(rec);
                return Ok(Control::Continue);
            }
            PayloadKind::GameSpy => {
                s.gamespy_frames += 1;
                self.sessions
                    .entry(c.session)
                    .or_default()
                    .phase(c.client)
                    .on_transport(TransportEvent::GameSpy, time);
                rec.body = PacketBody::GameSpy {
                    text: String::from_utf8_lossy(&d.payload).into_owned(),
                };
            }
            PayloadKind::Bc { peer_id } => {
                s.game_frames += 1;
                // Decrypt in place: the encrypted bytes are not needed any more.
                let mut plain = std::mem::take(&mut d.payload);
                // The front deciphers and walks every game-port datagram that is not
                // GameSpy text, so a BC payload normally arrives parsed; this covers
                // one that did not.
                if parsed.is_none() {
                    cipher::decrypt(&mut plain);
                }
                self.streams
                    .on_datagram(&ckey, c.direction, peer_id, d.ts_ns, d.frame);
                let g = rec.game_mut();
                self.game_packet(g, plain, parsed, stream, d.ts_ns, d.frame);
                if let Some(damage) = c.damaged {
                    self.summary.damaged_frames += 1;
                    g.warnings.insert(0, damage_warning(damage, c.direction));
                }
            }
        }
        rec.frame = d.frame;
        rec.ts_ns = d.ts_ns;
        rec.src = d.src;
        rec.dst = d.dst;
        rec.direction = c.direction;
        rec.session = c.session;
        rec.client = c.client;
        rec.udp_len = udp_len;
        rec.comment = frame.comment.take().map(String::from);
        rec.fragment_frames = std::mem::take(&mut d.fragment_frames);
        if self.count_flows {
            self.counts.entry(stream).or_default().count_record(&rec);
        }
        let names = NameView {
            facts: self.streams.facts(),
            sessions: &self.sessions,
            ships: &self.config.ships,
            epoch: self.names_epoch + self.streams.facts().names_version(),
        };
        let control = sink.packet(&rec, &names);
        if let PacketBody::Game(g) = &mut rec.body {
            let plain = self.spares.recycle(g);
            self.returns.payload(plain);
        }
        self.record = Some(rec);
        control
    }

    /// The transport walk of a deciphered datagram (walked here unless the front did)
    /// and its messages' handling state, the session's state looked up once for the
    /// datagram, not once more for each of its game messages: what
    /// [`Pipeline::game_packet`] and [`Pipeline::game_tally`] both start with. The
    /// walk borrows `parsed` alone, so that it can be taken back once it is read.
    fn open_datagram<'s, 'k>(
        &'s mut self,
        plain: &[u8],
        parsed: &'k mut Option<Packet>,
        stream: StreamKey,
        ts_ns: i64,
    ) -> (&'k mut Packet, Datagram<'s>, &'s mut Returns, &'s mut Tally) {
        let (session, client, _) = stream;
        // Used where it lies, and moved once, back to the front, at the end.
        let pkt = match parsed {
            Some(p) => p,
            None => {
                let p = parsed.insert(self.returns.take_packet());
                packet::parse_into(plain, p);
                p
            }
        };
        let time = ts_ns as f64 / 1e9;
        let Pipeline {
            config,
            flows,
            sessions,
            streams,
            summary,
            trees,
            link_relays,
            spares,
            returns,
            names_epoch,
            tally,
            ..
        } = self;
        let st = sessions.entry(session).or_default();
        st.phase(client).on_transport(TransportEvent::Packet, time);
        let dg = Datagram {
            config,
            flows,
            st,
            streams,
            summary,
            trees: *trees,
            link_relays: *link_relays,
            spares,
            names_epoch,
        };
        (pkt, dg, returns, tally)
    }

    /// Fill `g` (emptied by [`Spares::recycle`]) with the records of a deciphered
    /// datagram's messages.
    fn game_packet(
        &mut self,
        g: &mut GamePacket,
        plain: Vec<u8>,
        parsed: &mut Option<Packet>,
        stream: StreamKey,
        ts_ns: i64,
        frame: u64,
    ) {
        let (pkt, mut dg, returns, _) = self.open_datagram(&plain, parsed, stream, ts_ns);
        // Records of an earlier datagram, refilled in place (see MessageRecord::reset).
        let mut messages = dg.spares.messages(pkt.messages.len());
        messages.truncate(pkt.messages.len());
        for (i, m) in pkt.messages.iter().enumerate() {
            match messages.get_mut(i) {
                Some(rec) => rec.reset(m.offset, m.len),
                None => messages.push(MessageRecord::blank(m.offset, m.len)),
            }
            if let Some(rec) = messages.get_mut(i) {
                dg.message(rec, m, &plain, stream, ts_ns, frame);
            }
        }
        g.peer_id = pkt.peer_id;
        g.msg_count = pkt.msg_count;
        g.plain = plain;
        g.messages = messages;
        // Swapped, not taken: the walk goes back to the front with the record's emptied
        // list, and neither list is freed nor grown again.
        g.warnings.clear();
        std::mem::swap(&mut g.warnings, &mut pkt.warnings);
        if let Some(pkt) = parsed.take() {
            returns.packet(pkt);
        }
    }
}

impl Pipeline {
    /// [`Pipeline::game_packet`] for a sink that is handed tallies: the same stages
    /// run on every message, and [`Pipeline::tally`] takes what they say of it.
    fn game_tally(
        &mut self,
        plain: Vec<u8>,
        parsed: &mut Option<Packet>,
        stream: StreamKey,
        ts_ns: i64,
        frame: u64,
    ) {
        let (pkt, mut dg, returns, tally) = self.open_datagram(&plain, parsed, stream, ts_ns);
        if !pkt.warnings.is_empty() {
            tally.warn(&pkt.warnings);
            pkt.warnings.clear();
        }
        // One slot for every message's game message, emptied after each.
        let mut game = None;
        for m in &pkt.messages {
            let t = dg.message_tally(&mut game, m, &plain, stream, ts_ns, frame);
            tally.messages.push(t);
        }
        returns.payload(plain);
        if let Some(pkt) = parsed.take() {
            returns.packet(pkt);
        }
    }
}

/// One game datagram's messages being handled: the pipeline's fields they touch,
/// borrowed apart, with the state of the datagram's session looked up once.
struct Datagram<'p> {
    config: &'p Config,
    flows: &'p mut SessionTable,
    st: &'p mut SessionState,
    streams: &'p mut Streams,
    summary: &'p mut CaptureSummary,
    trees: FieldTrees,
    link_relays: bool,
    spares: &'p mut Spares,
    names_epoch: &'p mut u64,
}

impl Datagram<'_> {
    /// Has the stream say what message `m` is into `arrival` (made in the caller's
    /// frame and lent, not returned: moving it cost a copy per message), and acts on a
    /// start or end of the client's stay it marks: the first step of
    /// [`Datagram::message`] and [`Datagram::message_tally`].
    #[inline(always)]
    fn arrive<'a>(
        &mut self,
        arrival: &mut Arrival<'a>,
        m: &'a Message,
        plain: &'a [u8],
        stream: StreamKey,
        ts_ns: i64,
        frame: u64,
    ) {
        let (session, client, _) = stream;
        self.streams
            .on_message(arrival, stream, m, plain, ts_ns, frame);
        if let Some(stay) = arrival.stay {
            self.on_stay(stay, session, client, ts_ns, frame);
        }
    }

    /// Fill `rec` (blank, already in the record's list: filling it in place saves
    /// moving a 300-byte value per message) for transport message `m`: the stream says
    /// what the message is, the record takes its transport facts, the game layer
    /// decodes what it carries.
    fn message(
        &mut self,
        rec: &mut MessageRecord,
        m: &Message,
        plain: &[u8],
        stream: StreamKey,
        ts_ns: i64,
        frame: u64,
    ) {
        let (session, client, dir) = stream;
        let mut arrival = Arrival::of(m, plain);
        self.arrive(&mut arrival, m, plain, stream, ts_ns, frame);
        let deliver = arrival.copy.is_new();
        let content = rec.take_arrival(&mut arrival, self.trees);
        // Owns nothing any more (`take_arrival` released it all): no drop to run.
        std::mem::forget(arrival);
        match content {
            Content::Game { bytes, .. } => {
                self.decode_game(
                    &mut rec.game,
                    bytes,
                    session,
                    client,
                    dir,
                    frame,
                    ts_ns,
                    deliver,
                    &mut rec.relay_of,
                );
            }
            Content::Reassembled(done) => {
                let game =
                    self.decode_reassembled(&done.payload, stream, frame, ts_ns, &mut rec.relay_of);
                if let Some(game) = game {
                    rec.assembled = Some(Box::new(Assembled {
                        game,
                        bytes: done.payload,
                        frames: done.frames,
                    }));
                }
            }
            Content::FragmentHeld | Content::Nothing => {}
        }
    }

    /// [`Datagram::message`] for a sink that is handed tallies: what its record would
    /// count, with no record filled. The game message is decoded into `slot` (empty),
    /// and emptied again once counted, its StateUpdate's box back in the pool.
    fn message_tally(
        &mut self,
        slot: &mut Option<GameMessage>,
        m: &Message,
        plain: &[u8],
        stream: StreamKey,
        ts_ns: i64,
        frame: u64,
    ) -> MessageTally {
        let (session, client, dir) = stream;
        let mut arrival = Arrival::of(m, plain);
        self.arrive(&mut arrival, m, plain, stream, ts_ns, frame);
        let deliver = arrival.copy.is_new();
        let (mut t, content) = MessageTally::take(&mut arrival);
        // Owns nothing any more (`MessageTally::take` released it all): no drop to run.
        std::mem::forget(arrival);
        // Not read by a counting sink, but written by the linker when it runs.
        let mut relay_of = None;
        match content {
            Content::Game { bytes, .. } => {
                self.decode_game(
                    slot,
                    bytes,
                    session,
                    client,
                    dir,
                    frame,
                    ts_ns,
                    deliver,
                    &mut relay_of,
                );
                if let Some(game) = slot.as_mut() {
                    t.add_game(game, false);
                    if let Some(su) = game.take_state_update() {
                        self.spares.updates().recycle(su);
                    }
                    if game.owns_nothing() {
                        // Nothing to free: forgotten, which writes `None` and no more.
                        std::mem::forget(slot.take());
                    } else {
                        *slot = None;
                    }
                }
            }
            Content::Reassembled(done) => {
                let game =
                    self.decode_reassembled(&done.payload, stream, frame, ts_ns, &mut relay_of);
                if let Some(game) = &game {
                    t.add_game(game, true);
                }
            }
            Content::FragmentHeld | Content::Nothing => {}
        }
        t
    }

    /// A message that starts or ends the client's stay: its phase, and the flow layer,
    /// which cannot see disconnects (they are encrypted).
    fn on_stay(&mut self, stay: StayEvent, session: usize, client: usize, ts_ns: i64, frame: u64) {
        let ev = match stay {
            StayEvent::Connect => TransportEvent::Connect,
            StayEvent::Disconnect => TransportEvent::Disconnect,
            StayEvent::Boot => TransportEvent::Boot,
        };
        self.st.phase(client).on_transport(ev, ts_ns as f64 / 1e9);
        if stay.ends_stay() {
            self.flows.client_left(session, client, frame);
        }
    }

    /// The game message a completed fragment set carries: decoded as delivered (a
    /// set completes once), for records and tallies alike.
    fn decode_reassembled(
        &mut self,
        payload: &[u8],
        (session, client, dir): StreamKey,
        frame: u64,
        ts_ns: i64,
        relay_of: &mut Option<u64>,
    ) -> Option<GameMessage> {
        let mut game = None;
        self.decode_game(
            &mut game, payload, session, client, dir, frame, ts_ns, true, relay_of,
        );
        game
    }

    /// Decode one complete game message into `slot` (written there rather than
    /// returned: the value is some 150 bytes, moved once less per message); delivered
    /// ones also feed the registry, phases and relay linking.
    #[allow(clippy::too_many_arguments)]
    fn decode_game(
        &mut self,
        slot: &mut Option<GameMessage>,
        payload: &[u8],
        session: usize,
        client: usize,
        dir: Direction,
        frame: u64,
        ts_ns: i64,
        delivered: bool,
        relay_of: &mut Option<u64>,
    ) {
        let st = &mut *self.st;
        let ctx = DecodeContext::new(&st.registry, &self.config.ships).with_trees(self.trees);
        opcodes::decode_into(payload, &ctx, self.spares.updates(), slot);
        // Always filled by the decode; nothing to feed on otherwise.
        let Some(game) = slot.as_mut() else {
            return;
        };
        if delivered {
            let time = ts_ns as f64 / 1e9;
            if st.registry.observe(game, frame, &self.config.ships) {
                *self.names_epoch += 1;
            }
            let (slots, facts) = (&st.slots, self.streams.facts());
            let player = |slot: u8| slot_player(slots, facts, session, slot);
            if let Some(w) = st.registry.take_conflict_warning(payload, &player) {
                self.summary.object_id_conflicts += 1;
                self.summary.add_problem(
                    w.code,
                    format!("session {session} frame {frame}: {}", w.message),
                );
                game.warnings.push(w);
            }
            if self.link_relays {
                if let Some(link) = st.relay.observe(dir, client, payload, frame, time) {
                    *relay_of = Some(link.original_frame);
                }
            }
            if let (Direction::S2C, Some(Body::Settings(settings))) = (dir, &game.body) {
                if st.slots.insert(client, settings.player_slot) != Some(settings.player_slot) {
                    *self.names_epoch += 1;
                }
            }
            st.phase(client).on_message(dir, game, time);
        }
    }
}

impl Pipeline {
    /// A session no datagram can reach any more: compact it into its summary and
    /// release its state, as the end of the capture would (at `now_ns`).
    fn retire(&mut self, index: usize, session: &Session, now_ns: i64) {
        let ss = self.session_summary(index, session, now_ns);
        self.add_session_summary(ss);
    }

    fn add_session_summary(&mut self, ss: SessionSummary) {
        let s = &mut self.summary;
        s.session_count += 1;
        for c in &ss.clients {
            if let Some(how) = c.departure() {
                *s.departures.entry(how).or_default() += 1;
            }
            for (total, d) in s.totals.iter_mut().zip(&c.dirs) {
                total.add(d);
            }
        }
        if s.sessions.len() < MAX_SESSIONS_LISTED {
            s.sessions.push(ss);
        }
    }

    /// The summary of session `si`; takes and releases every piece of its state, and
    /// reports the limits its tables hit.
    fn session_summary(&mut self, si: usize, s: &Session, end_ns: i64) -> SessionSummary {
        let st = self.sessions.remove(&si);
        if let Some(st) = &st {
            if st.registry.evicted() > 0 {
                self.summary.add_problem(
                    Code::ObjectRegistryFull,
                    format!(
                        "session {si}: object registry full ({MAX_OBJECTS} objects): {} object(s) \
                     not registered; later messages about them lack ship layouts and names",
                        st.registry.evicted()
                    ),
                );
            }
            if st.registry.ship_log().unlisted() > 0 {
                self.summary.add_problem(
                    Code::ShipListLimit,
                    format!(
                        "session {si}: the client ship lists keep {MAX_SHIPS_LISTED} ships: {} \
                         later ship(s) are missing from them",
                        st.registry.ship_log().unlisted()
                    ),
                );
            }
            if st.relay.evicted() > 0 {
                self.summary.add_problem(Code::RelayLinkerFull, format!(
                    "session {si}: relay linker full ({RELAY_MAX_PENDING} messages in {RELAY_WINDOW_SECS} s): \
                     {} client message(s) forgotten before their relayed copies could be linked",
                    st.relay.evicted()
                ));
            }
        }
        let mut ss = SessionSummary {
            index: si,
            server: Some(s.server),
            first_frame: s.activity.first_frame,
            last_frame: s.activity.last_frame,
            first_ts_ns: s.activity.first_ts_ns,
            last_ts_ns: s.activity.last_ts_ns,
            clients: Vec::new(),
        };
        // Beyond the sessions listed, the summary only counts its clients' departures
        // and figures ([`Pipeline::add_session_summary`]): the texts only a listed
        // session shows (ships, phase, name) are not built. A server's capture opens
        // thousands of sessions.
        let listed = self.summary.sessions.len() < MAX_SESSIONS_LISTED;
        for (ci, c) in s.clients.iter().enumerate() {
            let f = self.streams.finish_client(&(si, ci), end_ns);
            if let Some(f) = &f {
                if f.events_not_listed > 0 {
                    self.summary.add_problem(
                        Code::EventsNotListed,
                        format!(
                            "session {si} client {ci}: {} boot/silence event(s) beyond \
                         {MAX_EVENTS_PER_CLIENT} not listed",
                            f.events_not_listed
                        ),
                    );
                }
            }
            let slot = st.as_ref().and_then(|st| st.slots.get(&ci).copied());
            let ships = match (&st, slot) {
                (Some(st), Some(slot)) if listed => {
                    let mut own: Vec<_> = st
                        .registry
                        .ship_log()
                        .entries()
                        .iter()
                        .filter(|o| o.owner_slot == slot)
                        .collect();
                    // In order of creation, not of the registry's table.
                    own.sort_by_key(|o| (o.created_frame, o.object_id));
                    own.into_iter()
                        .map(|o| {
                            let team = o.team.map(|t| format!(", team {t}")).unwrap_or_default();
                            format!("{} 0x{:08X}{team}", o.class_name, o.object_id)
                        })
                        .collect()
                }
                _ => Vec::new(),
            };
            let boot_reason = f.as_ref().and_then(|f| f.boot_reason);
            let left = f.as_ref().and_then(|f| {
                if !f.boots.is_empty() {
                    Some("boot".to_string())
                } else if f.disconnect.is_some() {
                    Some("disconnect".to_string())
                } else if f.timed_out {
                    Some("timeout".to_string())
                } else {
                    None
                }
            });
            let mut cs = ClientSummary {
                index: ci,
                addr: Some(c.addr),
                name: f.as_ref().filter(|_| listed).and_then(|f| f.name.clone()),
                peer_id: f.as_ref().and_then(|f| f.assigned_peer_id).or(c.peer_id),
                slot,
                ships,
                first_frame: c.activity.first_frame,
                last_frame: c.activity.last_frame,
                first_ts_ns: c.activity.first_ts_ns,
                last_ts_ns: c.activity.last_ts_ns,
                left,
                boot_reason,
                phase: st
                    .as_ref()
                    .filter(|_| listed)
                    .and_then(|st| st.phases.get(ci)?.as_ref())
                    .map(|p| p.phase().to_string()),
                dirs: Default::default(),
            };
            for dir in [Direction::C2S, Direction::S2C] {
                let i = dir.index();
                let k = (si, ci, dir);
                let mut d = self.counts.remove(&k).unwrap_or_default();
                let end = self.streams.finish_stream(&k);
                for inc in &end.incomplete {
                    self.fragment_set_problem(inc);
                }
                // What only the end of the stream knows joins what was counted on the way.
                d.unacked = end.unacked as u64;
                d.fragment_sets_incomplete = end.incomplete.len() as u64;
                cs.dirs[i] = d;
            }
            ss.clients.push(cs);
        }
        ss
    }

    fn fragment_set_problem(&mut self, i: &Incomplete<StreamKey>) {
        let why = match i.reason {
            IncompleteReason::EndOfCapture => "never completed",
            IncompleteReason::Expired => "expired (no fragment for 60 s)",
            IncompleteReason::TooManySets => "dropped: too many open fragment sets",
            IncompleteReason::TotalBytes => "dropped: reassembly byte limit reached",
            IncompleteReason::SetTooLarge => "dropped: set larger than the per-set limit",
        };
        let code = match i.reason {
            IncompleteReason::EndOfCapture | IncompleteReason::Expired => {
                Code::FragmentSetIncomplete
            }
            IncompleteReason::TooManySets | IncompleteReason::TotalBytes => Code::FragmentLimit,
            IncompleteReason::SetTooLarge => Code::FragmentSetTooLarge,
        };
        self.summary.add_problem(code, format!(
            "fragment set seq {} of session {} client {} {} {why} ({} of {} fragments, {} bytes, frames {}–{})",
            i.seq,
            i.stream.0,
            i.stream.1,
            i.stream.2,
            i.have.len(),
            i.total.map(|t| t.to_string()).unwrap_or_else(|| "?".into()),
            i.bytes,
            i.first.frame,
            i.last.frame
        ));
    }

    fn add_fragment_problems(&mut self, frag: &FragmentReport) {
        for l in &frag.leftovers {
            self.summary.add_problem(
                Code::IpFragmentsIncomplete,
                format!("IP fragments never completed: {l}"),
            );
        }
        if frag.not_listed > 0 {
            self.summary.add_limit_problem(
                Code::NotListed,
                format!(
                    "{} more incomplete IP fragment sets not listed",
                    frag.not_listed
                ),
            );
        }
    }

    fn finish(mut self) -> CaptureSummary {
        self.link_counts.add_to(&mut self.summary.link_types);
        let table_full = self.flows.dropped_count();
        if table_full > 0 {
            let c = self.flows.config();
            self.summary.add_limit_problem(
                Code::SessionTableFull,
                format!(
                "session table full: {table_full} datagram(s) not decoded (limits: {} sessions, \
                 {} clients per session, {} clients in all)",
                c.max_sessions, c.max_clients_per_session, c.max_clients_total
            ),
            );
        }
        let end = self.summary.last_ts_ns.unwrap_or(0);
        for (index, session) in self.flows.take_retired() {
            self.retire(index, &session, end);
        }
        let live: Vec<(usize, Session)> = self
            .flows
            .live_sessions()
            .map(|(i, s)| (i, s.clone()))
            .collect();
        for (index, session) in &live {
            let ss = self.session_summary(*index, session, end);
            self.add_session_summary(ss);
        }
        self.summary.sessions.sort_by_key(|s| s.index);
        // Every stream was ended with its session; what is left are the counts only
        // the whole run knows.
        let (reliability, leftover, not_listed) = std::mem::take(&mut self.streams).finish();
        if reliability.unacked_not_listed > 0 {
            self.summary.add_limit_problem(
                Code::ReliabilityWindowLimit,
                format!(
                    "reliability tracker: {} unacknowledged reliable message(s) pushed out of \
                 the {MAX_ENTRIES_PER_STREAM}-message window beyond the {MAX_REPORTED_UNACKED} \
                 remembered; the per-client unacked counts miss them",
                    reliability.unacked_not_listed
                ),
            );
        }
        for i in &leftover {
            self.fragment_set_problem(i);
        }
        if not_listed > 0 {
            self.summary.add_limit_problem(
                Code::NotListed,
                format!("{not_listed} more incomplete fragment sets dropped and not listed"),
            );
        }
        let listed = self.summary.sessions.len() as u64;
        if self.summary.session_count > listed {
            let more = self.summary.session_count - listed;
            self.summary.add_limit_problem(
                Code::NotListed,
                format!("{more} more sessions not listed (limit {MAX_SESSIONS_LISTED})"),
            );
        }
        if self.summary.problems_not_listed > 0 {
            let n = self.summary.problems_not_listed;
            self.summary
                .add_limit_problem(Code::NotListed, format!("{n} more problems not listed"));
        }
        self.summary
    }
}

/// The warning of a frame whose byte 0 cannot start a game packet: kept in its flow,
/// decoded as far as it goes, and said so.
fn damage_warning(damage: crate::flow::Damaged, direction: Direction) -> Warning {
    let why = damage.why;
    let expected = match direction {
        Direction::S2C => "the host's packets start with 0x01",
        Direction::C2S => "a client's packets never start with 0x00",
    };
    let message = if damage.game_flow {
        format!(
            "{why} ({expected}), yet the datagram belongs to a known game \
             flow: byte 0 is damaged; decoded as far as it goes"
        )
    } else {
        format!(
            "{why} ({expected}), and the flow has carried no game packet \
             before: byte 0 is damaged, or this is no game packet at all; \
             decoded as a game packet as far as it goes"
        )
    };
    Warning::new(Code::DamagedFrame, Some(0), message)
}

/// Open a capture by path (`-` = standard input) with a readable error.
pub fn open(path: &str) -> Result<CaptureReader> {
    CaptureReader::open(path).map_err(|e| anyhow::anyhow!("{path}: {e}"))
}
