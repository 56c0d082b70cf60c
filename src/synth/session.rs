//! The script of a session: who joins when, the handshake, play (movement,
//! StateUpdates, weapons, damage, deaths and respawns, chat, cloaking) and one client
//! leaving — run as a discrete-event loop over the host's and the clients' frames.
//!
//! Every endpoint runs a ~33 ms frame. During the handshake a frame sends whatever is
//! pending at once (the host answers within a few ms, flows.md §1); once in the game a
//! peer sends on its ~95–100 ms turn, packing ACKs, reliable messages and StateUpdates
//! into as few datagrams as fit 512 bytes, like stock peers.
//!
//! Why this file is long: about 1,120 lines; it is the session simulator's script, one step of a stock session
//! after another (joins, checksums, play, deaths, departures).

use super::baseline::Baseline;
use super::content as c;
use super::model::Model;
use super::output::Output;
use super::peer::{Link, Msg, Note};
use super::report::Accounting;
use super::rng::Rng;
use super::world::{Ship, World};
use crate::diag::Direction;
use crate::game::stateupdate::{self, flag, StateUpdate, SubsystemData};
use crate::game::subsys::plan_host_block;
use crate::transport::cipher::encrypt;
use crate::transport::low::{
    connect_request_payload, disconnect_payload, peer_info_payload, LowKind,
};
use crate::transport::packet::{Ack, Counter};
use std::collections::VecDeque;
use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

const FRAME: f64 = 0.033;
const KEEPALIVE: f64 = 5.0;
const EXPLOSION: f64 = 9.5;

/// Parameters of one run (from the command line).
#[derive(Debug, Clone)]
pub struct Config {
    pub players: usize,
    pub seed: u64,
    pub duration: Option<f64>,
    pub max_datagrams: Option<u64>,
    pub loss: f64,
    pub duplicate: f64,
    pub reorder: f64,
    pub port: u16,
    /// The first client sends no more ACKs from this many seconds on.
    pub stop_acking: Option<f64>,
    /// Rates and habits of the peers.
    pub model: Model,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ClientPhase {
    Waiting,
    Handshake,
    Lobby,
    Playing,
    Dead,
    Leaving,
    Gone,
}

#[derive(Debug, Clone, Copy)]
enum Action {
    Browse,
    Connect,
    ChecksumReply(u8),
    NewPlayer,
    CreateShip,
    StopFiring { weapon: u32, target: usize },
    Leave,
}

struct ClientSim {
    addr: SocketAddr,
    ip: [u8; 4],
    name: &'static str,
    link: Link,
    inbox: VecDeque<(f64, Vec<Msg>)>,
    phase: ClientPhase,
    next_frame: f64,
    next_turn: f64,
    actions: Vec<(f64, Action)>,
    next_ship_id: u32,
    own: Baseline,
    next_fire: f64,
    next_torpedo: f64,
    next_chat: f64,
    next_cloak: f64,
    next_collision: f64,
    firing: bool,
    left_at: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HostPhase {
    Idle,
    Checksums(usize),
    Joined,
    Left,
}

struct HostLink {
    link: Link,
    inbox: VecDeque<(f64, Vec<Msg>)>,
    phase: HostPhase,
    next_turn: f64,
    baselines: Vec<Baseline>,
    ship_rr: usize,
    /// The disconnect ACK the host keeps repeating: (ack, repeats left, next time).
    ack_repeat: Option<(Ack, u8, f64)>,
}

#[derive(Default, Clone, Copy)]
struct Score {
    kills: i32,
    deaths: i32,
    score: i32,
}

/// Game-level totals for the report.
#[derive(Debug, Default, Clone, Copy)]
pub struct Totals {
    pub ships_created: u64,
    pub deaths: u64,
    pub chats: u64,
    pub clients_left: u64,
}

/// A datagram held back to arrive after the next one on its link (reordering).
struct Held {
    plain: Vec<u8>,
    msgs: Vec<(Msg, bool)>,
    lost: bool,
}

pub struct Sim<W: Write> {
    cfg: Config,
    rng: Rng,
    now: f64,
    server: SocketAddr,
    clients: Vec<ClientSim>,
    host: Vec<HostLink>,
    host_next_frame: f64,
    /// Host game clock at session time 0.
    clock0: f64,
    /// The ship id each slot's latest creation announced, once the host has it.
    known: Vec<Option<u32>>,
    creations: Vec<Option<Vec<u8>>>,
    scores: Vec<Score>,
    gamespy: Vec<(f64, usize)>,
    world: World,
    out: Output<W>,
    pub acc: Accounting,
    held: Vec<[Option<Held>; 2]>,
    last_arrival: Vec<[f64; 2]>,
    latency: Vec<f64>,
    stopped: bool,
    pub totals: Totals,
}

impl<W: Write> Sim<W> {
    pub fn new(cfg: Config, out: Output<W>, record_messages: bool) -> Sim<W> {
        let mut rng = Rng::new(cfg.seed);
        let n = cfg.players;
        let server = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1)), cfg.port);
        let mut clients = Vec::with_capacity(n);
        let mut join = rng.range(0.3, 1.0);
        for i in 0..n {
            let ip = [198, 51, 100, 10 + i as u8];
            let port = 49152 + rng.below(16000) as u16;
            clients.push(ClientSim {
                addr: SocketAddr::new(IpAddr::V4(Ipv4Addr::from(ip)), port),
                ip,
                name: c::NAMES[i % c::NAMES.len()],
                link: Link::new(0xFF, true).with_habits(&cfg.model, false),
                inbox: VecDeque::new(),
                phase: ClientPhase::Waiting,
                next_frame: join,
                next_turn: 0.0,
                actions: vec![(join, Action::Browse)],
                next_ship_id: World::slot_base(i),
                own: Baseline::default(),
                next_fire: 0.0,
                next_torpedo: 0.0,
                next_chat: 0.0,
                next_cloak: 0.0,
                next_collision: f64::INFINITY,
                firing: false,
                left_at: 0.0,
            });
            join += rng.range(1.5, 4.0);
        }
        if let Some(d) = cfg.duration {
            // The last client to join leaves near the end (flows.md §1 [H]).
            if let Some(last) = clients.last_mut() {
                last.actions.push((d * 0.9, Action::Leave));
            }
        }
        let host = (0..n)
            .map(|_| HostLink {
                link: Link::new(0x01, false).with_habits(&cfg.model, true),
                inbox: VecDeque::new(),
                phase: HostPhase::Idle,
                next_turn: 0.0,
                baselines: vec![Baseline::default(); n],
                ship_rr: 0,
                ack_repeat: None,
            })
            .collect();
        let latency = (0..n).map(|i| 0.012 + 0.004 * i as f64).collect();
        let clock0 = rng.range(20.0, 300.0);
        Sim {
            server,
            clients,
            host,
            host_next_frame: 0.0,
            clock0,
            known: vec![None; n],
            creations: vec![None; n],
            scores: vec![Score::default(); n],
            gamespy: Vec::new(),
            world: World::with_repair(n, cfg.model.repair as f32),
            out,
            acc: Accounting::new(record_messages),
            held: (0..n).map(|_| [None, None]).collect(),
            last_arrival: vec![[0.0; 2]; n],
            latency,
            stopped: false,
            totals: Totals::default(),
            now: 0.0,
            rng,
            cfg,
        }
    }

    fn clock(&self) -> f32 {
        (self.clock0 + self.now) as f32
    }

    pub fn run(mut self) -> anyhow::Result<(Accounting, Output<W>, Totals)> {
        loop {
            // The next frame: the host first on ties, then clients in join order.
            let mut who = None;
            let mut t = self.host_next_frame;
            for (i, cl) in self.clients.iter().enumerate() {
                if cl.phase != ClientPhase::Gone && cl.next_frame < t {
                    t = cl.next_frame;
                    who = Some(i);
                }
            }
            if self.cfg.duration.is_some_and(|d| t >= d) {
                break;
            }
            self.now = t;
            self.world.advance(t, &mut self.rng);
            match who {
                None => self.host_frame()?,
                Some(i) => self.client_frame(i)?,
            }
            if self.stopped {
                break;
            }
        }
        if !self.stopped {
            for i in 0..self.clients.len() {
                for d in 0..2 {
                    if let Some(h) = self.held[i][d].take() {
                        let dir = if d == 0 {
                            Direction::C2S
                        } else {
                            Direction::S2C
                        };
                        self.emit(i, dir, h, false)?;
                    }
                }
            }
        }
        Ok((self.acc, self.out, self.totals))
    }

    // ---- transmission ------------------------------------------------------------

    fn endpoints(&self, client: usize, dir: Direction) -> (SocketAddr, SocketAddr) {
        let a = self.clients[client].addr;
        match dir {
            Direction::C2S => (a, self.server),
            Direction::S2C => (self.server, a),
        }
    }

    fn write_gamespy(
        &mut self,
        client: usize,
        dir: Direction,
        payload: &[u8],
    ) -> anyhow::Result<()> {
        if self
            .cfg
            .max_datagrams
            .is_some_and(|m| self.out.datagrams >= m)
        {
            self.stopped = true;
            return Ok(());
        }
        let (src, dst) = self.endpoints(client, dir);
        let ts = self.out.write(self.now, src, dst, payload)?;
        self.acc.gamespy(dir, client, ts, payload.len());
        Ok(())
    }

    /// Send one datagram of transport messages, with the network's loss, duplication
    /// and reordering applied.
    fn transmit(
        &mut self,
        client: usize,
        dir: Direction,
        msgs: Vec<(Msg, bool)>,
    ) -> anyhow::Result<()> {
        let peer_id = match dir {
            Direction::C2S => self.clients[client].link.peer_id,
            Direction::S2C => 0x01,
        };
        let mut plain = Vec::with_capacity(2 + msgs.iter().map(|m| m.0.bytes.len()).sum::<usize>());
        plain.push(peer_id);
        plain.push(msgs.len() as u8);
        for (m, _) in &msgs {
            plain.extend_from_slice(&m.bytes);
        }
        encrypt(&mut plain);
        let lost = self.rng.chance(self.cfg.loss);
        let dup = self.rng.chance(self.cfg.duplicate);
        let d = dir.index();
        let held = Held { plain, msgs, lost };
        if self.held[client][d].is_none() && self.rng.chance(self.cfg.reorder) {
            self.held[client][d] = Some(held);
            return Ok(());
        }
        let copy = dup.then(|| Held {
            plain: held.plain.clone(),
            msgs: held.msgs.iter().map(|(m, _)| (m.clone(), false)).collect(),
            lost: held.lost,
        });
        self.emit(client, dir, held, true)?;
        if let Some(copy) = copy {
            self.emit(client, dir, copy, true)?;
        }
        if let Some(h) = self.held[client][d].take() {
            self.emit(client, dir, h, true)?;
        }
        Ok(())
    }

    /// Write a datagram and hand it to the receiver unless it was lost.
    fn emit(
        &mut self,
        client: usize,
        dir: Direction,
        h: Held,
        deliver: bool,
    ) -> anyhow::Result<()> {
        if self.stopped
            || self
                .cfg
                .max_datagrams
                .is_some_and(|m| self.out.datagrams >= m)
        {
            self.stopped = true;
            return Ok(());
        }
        let (src, dst) = self.endpoints(client, dir);
        let ts = self.out.write(self.now, src, dst, &h.plain)?;
        self.acc.game(dir, client, ts, h.plain.len(), &h.msgs);
        if h.lost || !deliver {
            return Ok(());
        }
        let d = dir.index();
        let arrival = (self.now + self.latency[client] + self.rng.range(0.0, 0.003))
            .max(self.last_arrival[client][d]);
        self.last_arrival[client][d] = arrival;
        let msgs: Vec<Msg> = h.msgs.into_iter().map(|(m, _)| m).collect();
        match dir {
            Direction::C2S => self.host[client].inbox.push_back((arrival, msgs)),
            Direction::S2C => self.clients[client].inbox.push_back((arrival, msgs)),
        }
        Ok(())
    }

    fn flush_client(&mut self, i: usize, extra: Vec<Msg>) -> anyhow::Result<()> {
        if i == 0 && self.cfg.stop_acking.is_some_and(|t| self.now >= t) {
            self.clients[i].link.acks_muted = true;
            self.host[i].link.resend_forever = true;
        }
        let dgrams = self.clients[i].link.flush(self.now, extra, &mut self.rng);
        for d in dgrams {
            self.transmit(i, Direction::C2S, d)?;
        }
        Ok(())
    }

    fn flush_host(&mut self, i: usize, extra: Vec<Msg>) -> anyhow::Result<()> {
        let dgrams = self.host[i].link.flush(self.now, extra, &mut self.rng);
        for d in dgrams {
            self.transmit(i, Direction::S2C, d)?;
        }
        Ok(())
    }

    // ---- client ------------------------------------------------------------------

    fn client_frame(&mut self, i: usize) -> anyhow::Result<()> {
        let now = self.now;
        while self.clients[i]
            .inbox
            .front()
            .is_some_and(|(t, _)| *t <= now)
        {
            let Some((_, msgs)) = self.clients[i].inbox.pop_front() else {
                break;
            };
            if self.clients[i].phase == ClientPhase::Gone {
                continue;
            }
            let notes = self.clients[i].link.receive(&msgs);
            for n in notes {
                self.client_note(i, n);
            }
        }
        let mut k = 0;
        while k < self.clients[i].actions.len() {
            if self.clients[i].actions[k].0 <= now {
                let (_, a) = self.clients[i].actions.remove(k);
                self.client_action(i, a)?;
            } else {
                k += 1;
            }
        }
        if self.clients[i].phase == ClientPhase::Playing && self.world.live(i).is_none() {
            // The host destroyed the ship: back to ship selection after the explosion.
            let cl = &mut self.clients[i];
            cl.phase = ClientPhase::Dead;
            cl.firing = false;
            cl.actions
                .retain(|a| !matches!(a.1, Action::StopFiring { .. }));
            let t = now + EXPLOSION + self.rng.range(1.0, 4.0);
            self.clients[i].actions.push((t, Action::CreateShip));
        }
        if self.clients[i].phase == ClientPhase::Playing {
            self.play(i)?;
        }
        let phase = self.clients[i].phase;
        match phase {
            ClientPhase::Lobby | ClientPhase::Playing | ClientPhase::Dead => {
                if now >= self.clients[i].next_turn {
                    let extra = self.own_state_update(i);
                    if !extra.is_empty() || self.clients[i].link.has_pending(now) {
                        self.flush_client(i, extra)?;
                    }
                    if now - self.clients[i].link.last_send >= KEEPALIVE {
                        self.keepalive_client(i)?;
                    }
                    let step = self.cfg.model.client_turn + self.rng.range(-0.005, 0.005);
                    let cl = &mut self.clients[i];
                    cl.next_turn = (cl.next_turn + step).max(now);
                } else if self.cfg.model.prompt && self.clients[i].link.has_new() {
                    self.flush_client(i, Vec::new())?;
                }
            }
            ClientPhase::Handshake | ClientPhase::Leaving => {
                if self.clients[i].link.has_pending(now) {
                    self.flush_client(i, Vec::new())?;
                }
                // A leaving client waits for the ACK of its disconnect, not for ever.
                let cl = &self.clients[i];
                if phase == ClientPhase::Leaving && (cl.link.idle() || now - cl.left_at > 3.0) {
                    self.clients[i].phase = ClientPhase::Gone;
                }
            }
            ClientPhase::Waiting | ClientPhase::Gone => {}
        }
        let step = FRAME + self.rng.range(-0.002, 0.002);
        self.clients[i].next_frame = now + step;
        Ok(())
    }

    fn keepalive_client(&mut self, i: usize) -> anyhow::Result<()> {
        let cl = &mut self.clients[i];
        let p = peer_info_payload(cl.link.peer_id, cl.ip, cl.name);
        cl.link.send_low(LowKind::PeerInfo, &p, Note::PeerInfo);
        self.flush_client(i, Vec::new())
    }

    fn client_note(&mut self, i: usize, n: Note) {
        let now = self.now;
        let cl = &mut self.clients[i];
        match n {
            Note::ConnectReply(id) => {
                cl.link.peer_id = id;
                let p = peer_info_payload(id, cl.ip, cl.name);
                cl.link.send_low(LowKind::PeerInfo, &p, Note::PeerInfo);
            }
            Note::ChecksumRequest(round) => {
                // Hashing the ship scripts takes the client ~0.7 s (flows.md §1 [C]).
                let delay = if round == 2 {
                    self.rng.range(0.5, 0.9)
                } else {
                    self.rng.range(0.005, 0.04)
                };
                cl.actions.push((now + delay, Action::ChecksumReply(round)));
            }
            Note::GameInit => cl.actions.push((now + 0.026, Action::NewPlayer)),
            Note::MissionInit => {
                cl.phase = ClientPhase::Lobby;
                cl.next_turn = now;
                let t = now + self.rng.range(2.0, 6.0);
                self.clients[i].actions.push((t, Action::CreateShip));
            }
            _ => {}
        }
    }

    fn client_action(&mut self, i: usize, a: Action) -> anyhow::Result<()> {
        let now = self.now;
        match a {
            Action::Browse => {
                self.write_gamespy(i, Direction::C2S, &c::gamespy_query())?;
                let arrival = now + self.latency[i];
                self.gamespy.push((arrival, i));
                let t = now + self.rng.range(0.2, 0.6);
                self.clients[i].actions.push((t, Action::Connect));
            }
            Action::Connect => {
                let cl = &mut self.clients[i];
                let port = cl.addr.port().to_be_bytes();
                let p = connect_request_payload(cl.ip, port, [0; 4]);
                cl.link.send_low(LowKind::Connect, &p, Note::Connect);
                cl.phase = ClientPhase::Handshake;
            }
            Action::ChecksumReply(round) => {
                let g = c::checksum_reply(round);
                self.clients[i]
                    .link
                    .send_game(&g, Note::ChecksumReply(round));
            }
            Action::NewPlayer => {
                self.clients[i]
                    .link
                    .send_game(&c::new_player_in_game(), Note::NewPlayer);
            }
            Action::CreateShip => {
                if !matches!(
                    self.clients[i].phase,
                    ClientPhase::Lobby | ClientPhase::Dead
                ) {
                    return Ok(());
                }
                let class = self.world.random_class(&mut self.rng);
                let id = self.clients[i].next_ship_id;
                let ship = Ship::spawn(id, class, i, now, &mut self.rng);
                // The next ship of this slot takes the id after this one's subsystems.
                self.clients[i].next_ship_id = id.wrapping_add(ship.subsystem_count() + 1);
                let g = c::create_ship(&ship, i as u8, self.clients[i].name);
                self.world.ships[i] = Some(ship);
                let cl = &mut self.clients[i];
                cl.link.send_game(
                    &g,
                    Note::Relay {
                        game: g.as_slice().into(),
                        hit: None,
                    },
                );
                cl.phase = ClientPhase::Playing;
                let m = &self.cfg.model;
                cl.next_fire = now + m.wait(m.fire_every, &mut self.rng) + 2.0;
                cl.next_torpedo = now + m.wait(m.torpedo_every, &mut self.rng) + 2.0;
                cl.next_chat = now + self.rng.exp(90.0);
                cl.next_cloak = now + self.rng.exp(25.0);
                if let Some(mean) = self.cfg.model.collision_every {
                    let wait = self.cfg.model.wait(mean, &mut self.rng);
                    self.clients[i].next_collision = now + wait;
                }
                self.totals.ships_created += 1;
            }
            Action::StopFiring { weapon, target } => {
                self.clients[i].firing = false;
                if self.world.live(i).is_none() {
                    return Ok(());
                }
                let g = c::stop_firing(weapon);
                let hit = Some((target, self.rng.range(40.0, 90.0) as f32));
                self.clients[i].link.send_game(
                    &g,
                    Note::Relay {
                        game: g.as_slice().into(),
                        hit,
                    },
                );
            }
            Action::Leave => {
                let cl = &mut self.clients[i];
                if !matches!(
                    cl.phase,
                    ClientPhase::Lobby | ClientPhase::Playing | ClientPhase::Dead
                ) {
                    return Ok(());
                }
                let p = disconnect_payload(cl.link.peer_id, cl.ip);
                cl.link.send_low(LowKind::Disconnect, &p, Note::Disconnect);
                cl.link.force_stale();
                cl.phase = ClientPhase::Leaving;
                cl.left_at = now;
                cl.actions.clear();
                self.totals.clients_left += 1;
            }
        }
        Ok(())
    }

    /// Weapons, chat and cloaking of a client in play.
    fn play(&mut self, i: usize) -> anyhow::Result<()> {
        let now = self.now;
        let Some(ship) = self.world.live(i) else {
            return Ok(());
        };
        let cloaked = ship.cloaked;
        let targets: Vec<usize> = (0..self.world.ships.len())
            .filter(|&j| {
                j != i
                    && self
                        .world
                        .live(j)
                        .is_some_and(|s| self.known[j] == Some(s.id))
            })
            .collect();
        if ship.can_cloak() && now >= self.clients[i].next_cloak && !self.clients[i].firing {
            let next = now + self.rng.exp(if cloaked { 8.0 } else { 25.0 });
            self.clients[i].next_cloak = next;
            if let Some(s) = self.world.live_mut(i) {
                s.cloaked = !cloaked;
            }
            return Ok(());
        }
        if now >= self.clients[i].next_chat {
            self.clients[i].next_chat = now + self.rng.exp(90.0);
            let text = *self.rng.pick(&c::CHAT);
            let g = c::chat(self.clients[i].link.peer_id, text);
            self.clients[i]
                .link
                .send_game(&g, Note::Chat(g.as_slice().into()));
            self.totals.chats += 1;
        }
        if now >= self.clients[i].next_collision && !targets.is_empty() {
            let other = *self.rng.pick(&targets);
            self.collide(i, other);
        }
        if cloaked || targets.is_empty() {
            return Ok(());
        }
        let target = *self.rng.pick(&targets);
        if now >= self.clients[i].next_fire && !self.clients[i].firing {
            let m = &self.cfg.model;
            self.clients[i].next_fire = now + m.wait(m.fire_every, &mut self.rng) + 1.0;
            self.fire_phasers(i, target)?;
        }
        if now >= self.clients[i].next_torpedo {
            let m = &self.cfg.model;
            self.clients[i].next_torpedo = now + m.wait(m.torpedo_every, &mut self.rng) + 1.0;
            self.fire_torpedoes(i, target);
        }
        Ok(())
    }

    fn fire_phasers(&mut self, i: usize, target: usize) -> anyhow::Result<()> {
        let (Some(ship), Some(tgt)) = (self.world.live(i), self.world.live(target)) else {
            return Ok(());
        };
        let Some(entry) = ship.weapon_entry(&["phaser", "pulse"]) else {
            return Ok(());
        };
        let system = ship.subsystem_id(entry, None);
        let banks = ship.class.subsystems[entry].children.len();
        let beams: Vec<Vec<u8>> = if self.rng.chance(0.25) {
            let n = if banks > 1 && self.rng.chance(0.3) {
                2
            } else {
                1
            };
            (0..n)
                .map(|k| c::beam_fire(ship.subsystem_id(entry, Some((k * 3) % banks)), ship, tgt))
                .collect()
        } else {
            Vec::new()
        };
        // StartFiring always goes out twice in a row (flows.md §1 [F]).
        let g = c::start_firing(system);
        let link = &mut self.clients[i].link;
        for _ in 0..2 {
            link.send_game(
                &g,
                Note::Relay {
                    game: g.as_slice().into(),
                    hit: None,
                },
            );
        }
        for b in beams {
            link.send_game(
                &b,
                Note::Relay {
                    game: b.as_slice().into(),
                    hit: None,
                },
            );
        }
        self.clients[i].firing = true;
        let stop = self.now + self.rng.range(0.8, 3.0);
        self.clients[i].actions.push((
            stop,
            Action::StopFiring {
                weapon: system,
                target,
            },
        ));
        Ok(())
    }

    /// A brush with the ship in slot `other`: one to three 0x15 CollisionEffect reports
    /// to the host, which applies the damage and does not relay them (opcodes.md §4.5).
    fn collide(&mut self, i: usize, other: usize) {
        if let Some(mean) = self.cfg.model.collision_every {
            self.clients[i].next_collision = self.now + self.cfg.model.wait(mean, &mut self.rng);
        }
        let (Some(ship), Some(them)) = (self.world.live(i), self.world.live(other)) else {
            return;
        };
        let n = 1 + self.rng.below(3);
        let mut msgs = Vec::with_capacity(n);
        for _ in 0..n {
            let force = self.rng.range(20.0, 120.0) as f32;
            msgs.push((c::collision_effect(ship, them, &mut self.rng, force), force));
        }
        for (g, force) in msgs {
            let amount = force * 0.25;
            self.clients[i]
                .link
                .send_game(&g, Note::Collision { other, amount });
        }
    }

    fn fire_torpedoes(&mut self, i: usize, target: usize) {
        let (Some(ship), Some(tgt)) = (self.world.live(i), self.world.live(target)) else {
            return;
        };
        let Some(entry) = ship.weapon_entry(&["torpedo"]) else {
            return;
        };
        let tubes = ship.class.subsystems[entry].children.len();
        let n = if tubes > 1 && self.rng.chance(0.3) {
            2
        } else {
            1
        };
        let first = self.rng.below(tubes);
        let mut msgs = Vec::with_capacity(n);
        for k in 0..n {
            let tube = ship.subsystem_id(entry, Some((first + k) % tubes));
            msgs.push(c::torpedo_fire(tube, ship, tgt, &mut self.rng));
        }
        for g in msgs {
            let hit = Some((target, self.rng.range(50.0, 100.0) as f32));
            self.clients[i].link.send_game(
                &g,
                Note::Relay {
                    game: g.as_slice().into(),
                    hit,
                },
            );
        }
    }

    /// The client's StateUpdate about its own ship: movement, cloak, 0x80 power block.
    fn own_state_update(&mut self, i: usize) -> Vec<Msg> {
        let now = self.now;
        let clock = self.clock();
        let Some(ship) = self.world.live_mut(i) else {
            return Vec::new();
        };
        let mut su = StateUpdate {
            object_id: ship.id,
            game_time: clock,
            flags: flag::POWER,
            ..StateUpdate::default()
        };
        let hash = ship.integrity_hash();
        self.clients[i].own.movement(ship, now, &mut su, Some(hash));
        su.power = Some(ship.power_pairs());
        let g = stateupdate::encode(&su);
        vec![Msg::state(&g, su.flags, None)]
    }

    // ---- host --------------------------------------------------------------------

    fn host_frame(&mut self) -> anyhow::Result<()> {
        let now = self.now;
        for i in 0..self.host.len() {
            while self.host[i].inbox.front().is_some_and(|(t, _)| *t <= now) {
                let Some((_, msgs)) = self.host[i].inbox.pop_front() else {
                    break;
                };
                if self.host[i].phase == HostPhase::Left {
                    continue;
                }
                let notes = self.host[i].link.receive(&msgs);
                for n in notes {
                    self.host_note(i, n)?;
                }
            }
        }
        let mut k = 0;
        while k < self.gamespy.len() {
            if self.gamespy[k].0 <= now {
                let (_, i) = self.gamespy.remove(k);
                let joined = self
                    .host
                    .iter()
                    .filter(|h| h.phase == HostPhase::Joined)
                    .count();
                let reply = c::gamespy_reply(self.cfg.port, joined, i + 1);
                self.write_gamespy(i, Direction::S2C, &reply)?;
            } else {
                k += 1;
            }
        }
        for i in 0..self.host.len() {
            if let Some((ack, left, t)) = self.host[i].ack_repeat {
                if now >= t {
                    self.host[i].link.owe(ack);
                    self.host[i].ack_repeat = (left > 1).then_some((ack, left - 1, now + 0.67));
                }
            }
            match self.host[i].phase {
                HostPhase::Joined => {
                    if now >= self.host[i].next_turn {
                        let extra = self.host_state_updates(i);
                        if !extra.is_empty() || self.host[i].link.has_pending(now) {
                            self.flush_host(i, extra)?;
                        }
                        if now - self.host[i].link.last_send >= KEEPALIVE {
                            let cl = &self.clients[i];
                            let p = peer_info_payload(cl.link.peer_id, cl.ip, cl.name);
                            self.host[i]
                                .link
                                .send_low(LowKind::PeerInfo, &p, Note::None);
                            self.flush_host(i, Vec::new())?;
                        }
                        let step = self.cfg.model.host_turn + self.rng.range(-0.003, 0.003);
                        let h = &mut self.host[i];
                        h.next_turn = (h.next_turn + step).max(now);
                    } else if self.cfg.model.prompt && self.host[i].link.has_new() {
                        self.flush_host(i, Vec::new())?;
                    }
                }
                HostPhase::Idle | HostPhase::Checksums(_) | HostPhase::Left => {
                    if self.host[i].link.has_pending(now) {
                        self.flush_host(i, Vec::new())?;
                    }
                }
            }
        }
        self.host_next_frame = now + FRAME + self.rng.range(-0.002, 0.002);
        Ok(())
    }

    fn joined(&self) -> Vec<usize> {
        (0..self.host.len())
            .filter(|&j| self.host[j].phase == HostPhase::Joined)
            .collect()
    }

    fn host_note(&mut self, i: usize, n: Note) -> anyhow::Result<()> {
        match n {
            Note::Connect => {
                let id = 2 + i as u8;
                let h = &mut self.host[i];
                h.link
                    .send_low(LowKind::Connect, &[id], Note::ConnectReply(id));
                h.link
                    .send_game(&c::checksum_request(0), Note::ChecksumRequest(0));
                h.phase = HostPhase::Checksums(0);
            }
            Note::PeerInfo => {
                let cl = &self.clients[i];
                let p = peer_info_payload(cl.link.peer_id, cl.ip, cl.name);
                self.host[i]
                    .link
                    .send_low(LowKind::PeerInfo, &p, Note::None);
            }
            Note::ChecksumReply(round) => {
                let HostPhase::Checksums(k) = self.host[i].phase else {
                    return Ok(());
                };
                if c::ROUNDS.get(k) != Some(&round) {
                    return Ok(());
                }
                let h = &mut self.host[i];
                if let Some(&next) = c::ROUNDS.get(k + 1) {
                    h.link
                        .send_game(&c::checksum_request(next), Note::ChecksumRequest(next));
                    h.phase = HostPhase::Checksums(k + 1);
                } else {
                    // 0x28, Settings, GameInit: three messages in one datagram.
                    let settings = c::settings(self.clock(), i as u8);
                    let h = &mut self.host[i];
                    h.link.send_game(&c::bare(0x28), Note::None);
                    h.link.send_game(&settings, Note::None);
                    h.link.send_game(&c::bare(0x01), Note::GameInit);
                    h.phase = HostPhase::Checksums(k + 1);
                }
            }
            Note::NewPlayer => {
                let peer = 2 + i as u8;
                let others = self.joined();
                let mut msgs = vec![c::mission_init(), c::player_list(true, peer)];
                for &j in &others {
                    let s = self.scores[j];
                    msgs.push(c::score(2 + j as u8, s.kills, s.deaths, s.score));
                }
                for &j in &others {
                    if let (Some(g), Some(_)) = (&self.creations[j], self.world.live(j)) {
                        msgs.push(g.clone());
                    }
                }
                let h = &mut self.host[i];
                for (k, g) in msgs.iter().enumerate() {
                    let note = if k == 0 {
                        Note::MissionInit
                    } else {
                        Note::None
                    };
                    h.link.send_game(g, note);
                }
                h.phase = HostPhase::Joined;
                h.next_turn = self.now;
            }
            Note::Relay { game, hit } => {
                let op = game.first().copied().unwrap_or(0);
                if op == 0x03 {
                    self.creations[i] = Some(game.to_vec());
                    self.known[i] = self.world.live(i).map(|s| s.id);
                }
                for j in self.joined() {
                    if j != i {
                        self.host[j].link.send_game(&game, Note::None);
                    }
                }
                self.weapon_notice(i, op, &game);
                if let Some((target, amount)) = hit {
                    self.apply_hit(i, target, amount, op == 0x19);
                }
            }
            Note::Collision { other, amount } => self.apply_hit(other, i, amount, false),
            Note::Chat(game) => {
                for j in self.joined() {
                    self.host[j].link.send_game(&game, Note::None);
                }
            }
            Note::Disconnect => {
                let peer = 2 + i as u8;
                let ack = Ack::new(self.host[i].link_last_low_seq(), Counter::Low, None);
                let h = &mut self.host[i];
                h.ack_repeat = Some((ack, 6, self.now + 0.67));
                h.link.abandon();
                h.phase = HostPhase::Left;
                let ship = self.world.ships[i].take().filter(|s| s.alive).map(|s| s.id);
                self.known[i] = None;
                for j in self.joined() {
                    let l = &mut self.host[j].link;
                    if let Some(id) = ship {
                        l.send_game(&c::destroy_object(id), Note::None);
                    }
                    l.send_game(&c::player_list(false, peer), Note::None);
                    l.send_game(&c::delete_player_anim(self.clients[i].name), Note::None);
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The host's 0x06 notifications of weapon fire to every client (flows.md §1 [F]).
    fn weapon_notice(&mut self, i: usize, op: u8, game: &[u8]) {
        let code = match op {
            0x07 => 0x0080_0081,
            0x19 => 0x0080_007C,
            _ => return,
        };
        let Some(ship) = self.world.live(i) else {
            return;
        };
        // StartFiring comes in pairs: one notice per pair.
        if op == 0x07 && self.rng.chance(self.cfg.model.notice_skip) {
            return;
        }
        let weapon = u32::from_le_bytes([game[13], game[14], game[15], game[16]]);
        let weapon = if op == 0x19 {
            u32::from_le_bytes([game[1], game[2], game[3], game[4]])
        } else {
            weapon
        };
        let g = c::weapon_event(code, ship.id, 0, weapon);
        for j in self.joined() {
            self.host[j].link.send_game(&g, Note::None);
        }
    }

    /// Damage from client `shooter` to the ship in slot `target`: repair events for
    /// newly damaged subsystems, and on a kill the object-exploding event, the
    /// explosion and the score change (flows.md §1 [G]).
    fn apply_hit(&mut self, shooter: usize, target: usize, amount: f32, torpedo: bool) {
        let Some(killer_ship) = self.world.live(shooter).map(|s| s.id) else {
            return;
        };
        let Some(ship) = self.world.live_mut(target) else {
            return;
        };
        let amount = if torpedo { amount * 1.2 } else { amount } * self.cfg.model.damage as f32;
        let (newly, dead) = ship.hit(amount, &mut self.rng);
        let repair = ship
            .entry_of_kind("repair")
            .map(|e| ship.subsystem_id(e, None))
            .unwrap_or(0);
        let mut msgs: Vec<Vec<u8>> = newly
            .iter()
            .map(|&id| c::repair_event(id, repair))
            .collect();
        if dead {
            let victim = self.world.ships[target]
                .as_ref()
                .map(|s| (s.id, c::explosion(s)));
            if let Some((victim_id, boom)) = victim {
                let (kp, vp) = (2 + shooter as u8, 2 + target as u8);
                let k = &mut self.scores[shooter];
                k.kills += 1;
                k.score += 100;
                let (kills, score) = (k.kills, k.score);
                self.scores[target].deaths += 1;
                let deaths = self.scores[target].deaths;
                msgs.push(c::object_exploding(killer_ship, victim_id, kp));
                msgs.push(boom);
                msgs.push(c::score_change(kp, kills, score, vp, deaths));
                self.totals.deaths += 1;
            }
        }
        for j in self.joined() {
            for g in &msgs {
                self.host[j].link.send_game(g, Note::None);
            }
        }
    }

    /// Up to `host_ships_per_turn` StateUpdates for client `i`, rotating over the live
    /// ships the host knows: movement fields against this receiver's baseline, the 0x20 block within
    /// the host budget (stateupdate.md §5.3), no power data for the owner's own ship.
    fn host_state_updates(&mut self, i: usize) -> Vec<Msg> {
        let n = self.world.ships.len();
        let now = self.now;
        let clock = self.clock();
        let mut out = Vec::new();
        let per_turn = self.cfg.model.host_ships_per_turn;
        let whole = per_turn.floor();
        let limit = whole as usize + usize::from(self.rng.chance(per_turn - whole));
        let start = self.host[i].ship_rr;
        for k in 0..n {
            if out.len() == limit {
                break;
            }
            let slot = (start + k) % n;
            let Some(ship) = self.world.live(slot) else {
                continue;
            };
            if self.known[slot] != Some(ship.id) {
                continue;
            }
            self.host[i].ship_rr = (slot + 1) % n;
            let mut su = StateUpdate {
                object_id: ship.id,
                game_time: clock,
                flags: flag::SUBSYSTEMS,
                ..StateUpdate::default()
            };
            let b = &mut self.host[i].baselines[slot];
            b.movement(ship, now, &mut su, None);
            let owner = slot == i;
            let (block, next) = plan_host_block(
                &ship.class,
                b.cursor,
                su.bits_before_subsystems(),
                |idx, _| ship.record(idx, owner),
            );
            b.cursor = next;
            su.subsystem_start = Some(block.start);
            let start_index = block.start;
            su.subsystems = Some(SubsystemData::Decoded(block));
            let g = stateupdate::encode(&su);
            out.push(Msg::state(&g, su.flags, Some(start_index)));
        }
        out
    }
}

impl HostLink {
    /// Sequence number of the last low-type message received (the disconnect).
    fn link_last_low_seq(&self) -> u16 {
        self.link.last_received_low().unwrap_or(0)
    }
}
