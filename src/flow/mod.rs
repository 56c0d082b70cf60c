//! Groups UDP datagrams into BC sessions: one server endpoint (the game port; its
//! packets start with peer id 0x01) and the client endpoints talking to it.
//!
//! A session is one period during which a server endpoint has clients. It opens with
//! the first datagram to a server endpoint, and it has *ended* once every game client
//! it had is gone (disconnected, as reported by [`SessionTable::client_left`] from the
//! decrypted transport layer, or silent for `client_timeout_ns`), or once the endpoint
//! was silent that long. After the end, a connect (peer id 0xFF) or any datagram from
//! an endpoint the session does not know opens the next session on the same server
//! endpoint; late datagrams of known clients (e.g. ACK resends after a disconnect) stay
//! in their session, even once the next one has begun (one session back is checked). On the wire a server restart and "everyone left, someone new
//! joined" look the same, so both start a new session.

mod recent;

use crate::diag::Direction;
use crate::net::Datagram;
use recent::{Known, Recent};
// Fx: internal tables keyed by small fixed-size values; see Cargo.toml.
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;

pub const DEFAULT_GAME_PORT: u16 = 22101;
/// Stock peers drop a peer after 45 s of silence (`flows.md` §3.4).
pub const DEFAULT_CLIENT_TIMEOUT_NS: i64 = 45_000_000_000;
/// Live (not retired) sessions at once; retired sessions do not count.
pub const DEFAULT_MAX_SESSIONS: usize = 65_536;
pub const DEFAULT_MAX_CLIENTS_PER_SESSION: usize = 4_096;
/// Clients over all live sessions (a retired session's clients no longer count). Every client costs per-stream state further down the
/// pipeline (reliability window, reassembly, facts), so this bounds memory however many
/// source addresses a capture invents.
pub const DEFAULT_MAX_CLIENTS_TOTAL: usize = 65_536;
/// Byte 0 of every packet the host sends.
pub const PEER_ID_HOST: u8 = 0x01;
/// Byte 0 of a client's packets before the host assigned it an id.
pub const PEER_ID_UNASSIGNED: u8 = 0xFF;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowConfig {
    pub game_port: u16,
    pub client_timeout_ns: i64,
    pub max_sessions: usize,
    pub max_clients_per_session: usize,
    pub max_clients_total: usize,
}

impl Default for FlowConfig {
    fn default() -> Self {
        FlowConfig {
            game_port: DEFAULT_GAME_PORT,
            client_timeout_ns: DEFAULT_CLIENT_TIMEOUT_NS,
            max_sessions: DEFAULT_MAX_SESSIONS,
            max_clients_per_session: DEFAULT_MAX_CLIENTS_PER_SESSION,
            max_clients_total: DEFAULT_MAX_CLIENTS_TOTAL,
        }
    }
}

/// What a datagram on the game port carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PayloadKind {
    /// GameSpy query or reply: plain text starting with `\`.
    GameSpy,
    /// A BC game packet; `peer_id` is its clear byte 0.
    Bc { peer_id: u8 },
    /// On the game port but not a BC packet.
    NotBc(NotBcReason),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotBcReason {
    Empty,
    /// A game packet has at least the peer id and the message count.
    TooShort {
        len: usize,
    },
    /// Peer id impossible for the sender's side (the host sends 0x01, clients anything
    /// else but 0x00).
    PeerId {
        peer_id: u8,
        direction: Direction,
    },
}

impl fmt::Display for NotBcReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotBcReason::Empty => f.write_str("empty UDP payload"),
            NotBcReason::TooShort { len } => {
                write!(f, "{len}-byte payload is shorter than a game packet header")
            }
            NotBcReason::PeerId { peer_id, direction } => write!(
                f,
                "peer id {peer_id:#04x} cannot start a {} packet",
                direction
            ),
        }
    }
}

/// Why a datagram belongs to no session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unrelated {
    /// Neither port is the game port.
    NotGamePort { src_port: u16, dst_port: u16 },
    /// The session or client table reached its limit.
    TableFull,
}

impl fmt::Display for Unrelated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unrelated::NotGamePort { src_port, dst_port } => {
                write!(
                    f,
                    "not BC: neither port {src_port} nor {dst_port} is the game port"
                )
            }
            Unrelated::TableFull => f.write_str("not tracked: session table full"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Classified {
    /// Index into [`SessionTable::sessions`].
    pub session: usize,
    /// Index into that session's `clients`.
    pub client: usize,
    pub direction: Direction,
    pub kind: PayloadKind,
    pub new_session: bool,
    pub new_client: bool,
    /// Set when the payload's byte 0 cannot start a game packet in its direction: byte 0
    /// is damaged (or, on a flow that has carried no game packet yet, the datagram may
    /// be no game packet at all). `kind` is then [`PayloadKind::Bc`] with the byte
    /// found, so that the frame keeps its record and is decoded as far as it goes.
    pub damaged: Option<Damaged>,
}

/// Why a datagram on the game port was taken as a damaged game packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Damaged {
    /// What byte 0 got wrong.
    pub why: NotBcReason,
    /// The client had already sent or received game packets (not only GameSpy text).
    pub game_flow: bool,
}

/// Packet and byte counts, indexed by [`Direction::index`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    pub packets: [u64; 2],
    /// UDP payload bytes.
    pub bytes: [u64; 2],
    pub gamespy: [u64; 2],
    pub bc: [u64; 2],
    pub not_bc: [u64; 2],
}

impl Counters {
    fn add(&mut self, dir: Direction, kind: PayloadKind, len: usize) {
        let i = dir.index();
        self.packets[i] += 1;
        self.bytes[i] += len as u64;
        match kind {
            PayloadKind::GameSpy => self.gamespy[i] += 1,
            PayloadKind::Bc { .. } => self.bc[i] += 1,
            PayloadKind::NotBc(_) => self.not_bc[i] += 1,
        }
    }
    pub fn total_packets(&self) -> u64 {
        self.packets[0] + self.packets[1]
    }
    pub fn total_bc(&self) -> u64 {
        self.bc[0] + self.bc[1]
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Activity {
    pub first_frame: u64,
    pub last_frame: u64,
    pub first_ts_ns: i64,
    pub last_ts_ns: i64,
}

impl Activity {
    fn start(d: &Datagram) -> Activity {
        Activity {
            first_frame: d.frame,
            last_frame: d.frame,
            first_ts_ns: d.ts_ns,
            last_ts_ns: d.ts_ns,
        }
    }
    fn touch(&mut self, d: &Datagram) {
        self.last_frame = d.frame;
        self.last_ts_ns = d.ts_ns;
    }
}

/// One client endpoint's connection within a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Client {
    pub addr: SocketAddr,
    pub activity: Activity,
    pub counters: Counters,
    /// Last assigned peer id the client used (not 0xFF).
    pub peer_id: Option<u8>,
    /// Frame of its first connect packet (peer id 0xFF), if seen.
    pub connect_frame: Option<u64>,
    /// Frame of its disconnect, as reported by [`SessionTable::client_left`].
    pub left_frame: Option<u64>,
}

impl Client {
    /// Sent or received at least one game packet (not only GameSpy queries).
    pub fn is_game_client(&self) -> bool {
        self.counters.total_bc() > 0
    }
    fn gone(&self, now: i64, timeout: i64) -> bool {
        self.left_frame.is_some() || now.saturating_sub(self.activity.last_ts_ns) > timeout
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    pub server: SocketAddr,
    pub activity: Activity,
    pub counters: Counters,
    pub clients: Vec<Client>,
    /// Index of the current connection of each client endpoint.
    by_addr: HashMap<SocketAddr, usize>,
    /// The session this one followed on the same server endpoint.
    previous: Option<usize>,
}

impl Session {
    pub fn client(&self, addr: SocketAddr) -> Option<&Client> {
        self.by_addr.get(&addr).and_then(|&i| self.clients.get(i))
    }
    pub fn game_clients(&self) -> impl Iterator<Item = &Client> {
        self.clients.iter().filter(|c| c.is_game_client())
    }
    /// Counts datagram `d` of client `client` (`new_client`: added for it) into the
    /// session and the client; hands back its kind and damage (see below).
    fn count(
        &mut self,
        d: &Datagram,
        client: usize,
        new_client: bool,
        direction: Direction,
        kind: PayloadKind,
    ) -> (PayloadKind, Option<Damaged>) {
        // A datagram of two bytes or more on the game port is decoded as a game packet
        // whatever its first byte says: one flipped bit there must not make a frame
        // vanish from the records (a damaged host packet, a connect or a GameSpy query
        // whose byte 0 changed). Empty and 1-byte payloads hold nothing to decode and
        // keep their reason.
        let mut kind = kind;
        let mut damaged = None;
        let Some(c) = self.clients.get_mut(client) else {
            // Unreachable: the client index comes from this session's own table.
            return (kind, damaged);
        };
        if let PayloadKind::NotBc(why @ NotBcReason::PeerId { .. }) = kind {
            damaged = Some(Damaged {
                why,
                game_flow: !new_client && c.is_game_client(),
            });
            kind = PayloadKind::Bc {
                peer_id: d.payload.first().copied().unwrap_or(0),
            };
        }
        let len = d.payload.len();
        c.activity.touch(d);
        c.counters.add(direction, kind, len);
        if direction == Direction::C2S {
            match kind {
                PayloadKind::Bc { peer_id } if peer_id == PEER_ID_UNASSIGNED => {
                    c.connect_frame.get_or_insert(d.frame);
                }
                PayloadKind::Bc { peer_id } if damaged.is_none() => c.peer_id = Some(peer_id),
                _ => {}
            }
        }
        self.activity.touch(d);
        self.counters.add(direction, kind, len);
        (kind, damaged)
    }

    fn ended(&self, now: i64, timeout: i64) -> bool {
        if now.saturating_sub(self.activity.last_ts_ns) > timeout {
            return true;
        }
        let mut game = self.game_clients().peekable();
        game.peek().is_some() && game.all(|c| c.gone(now, timeout))
    }
}

/// All sessions of a capture, in order of their first datagram.
///
/// A session can no longer receive datagrams once it is neither the current session of
/// its server nor the one just before it: it is *retired* and moved out of the live
/// table, to [`SessionTable::take_retired`]. A caller that takes retired sessions keeps
/// the table small however long the capture; one that does not still sees every
/// session in [`SessionTable::sessions`].
#[derive(Debug, Clone)]
pub struct SessionTable {
    config: FlowConfig,
    /// Live sessions by index.
    sessions: BTreeMap<usize, Session>,
    /// Retired sessions not taken yet, by index.
    retired: BTreeMap<usize, Session>,
    /// Index of the next new session.
    next_index: usize,
    /// Current session of each server endpoint.
    current: HashMap<SocketAddr, usize>,
    unrelated: u64,
    table_full: u64,
    /// Clients of live sessions (for [`FlowConfig::max_clients_total`]); a retired
    /// session's clients no longer count.
    clients_total: usize,
    /// Where the latest datagrams of a few endpoint pairs went (see [`recent`]).
    recent: Recent,
}

impl SessionTable {
    pub fn new(game_port: u16) -> SessionTable {
        SessionTable::with_config(FlowConfig {
            game_port,
            ..FlowConfig::default()
        })
    }

    pub fn with_config(config: FlowConfig) -> SessionTable {
        SessionTable {
            config,
            sessions: BTreeMap::new(),
            retired: BTreeMap::new(),
            next_index: 0,
            current: HashMap::default(),
            unrelated: 0,
            table_full: 0,
            clients_total: 0,
            recent: Recent::default(),
        }
    }

    pub fn config(&self) -> &FlowConfig {
        &self.config
    }
    /// Live sessions and retired ones not taken yet, in index order (for a table whose
    /// retired sessions are never taken: every session, position = index).
    pub fn sessions(&self) -> Vec<&Session> {
        let mut all: Vec<(usize, &Session)> = self
            .sessions
            .iter()
            .chain(&self.retired)
            .map(|(i, s)| (*i, s))
            .collect();
        all.sort_unstable_by_key(|(i, _)| *i);
        all.into_iter().map(|(_, s)| s).collect()
    }
    /// Live sessions by index.
    pub fn live_sessions(&self) -> impl Iterator<Item = (usize, &Session)> {
        self.sessions.iter().map(|(i, s)| (*i, s))
    }
    pub fn session(&self, index: usize) -> Option<&Session> {
        self.sessions
            .get(&index)
            .or_else(|| self.retired.get(&index))
    }
    /// Whether sessions retired since the last [`SessionTable::take_retired`]: asked
    /// once per datagram, and nearly always no.
    pub fn has_retired(&self) -> bool {
        !self.retired.is_empty()
    }
    /// Sessions retired since the last call, by index: no datagram will be classified
    /// into them any more.
    pub fn take_retired(&mut self) -> Vec<(usize, Session)> {
        // Asked once per datagram and nearly always empty: no list is built then.
        if self.retired.is_empty() {
            return Vec::new();
        }
        std::mem::take(&mut self.retired).into_iter().collect()
    }
    /// Datagrams on no game port.
    pub fn unrelated_count(&self) -> u64 {
        self.unrelated
    }
    /// Datagrams dropped because a table limit was reached.
    pub fn dropped_count(&self) -> u64 {
        self.table_full
    }

    /// Records that a client disconnected (the transport layer decoded its disconnect
    /// message, or the host booted it). Ends the session once no client is left.
    pub fn client_left(&mut self, session: usize, client: usize, frame: u64) {
        if let Some(c) = self
            .sessions
            .get_mut(&session)
            .and_then(|s| s.clients.get_mut(client))
        {
            c.left_frame.get_or_insert(frame);
        }
    }

    pub fn classify(&mut self, d: &Datagram) -> Result<Classified, Unrelated> {
        let recent = self.recent.get(d.src, d.dst);
        if let Some(k) = recent {
            let kind = payload_kind(&d.payload, k.direction);
            if !is_connect(k.direction, kind) {
                return self.classify_known(d, k, kind);
            }
        }
        self.classify_searching(d, recent)
    }

    /// A datagram that is no connect, between two endpoints whose last datagram went
    /// to `k` with nothing added or retired since: the lookups of
    /// [`SessionTable::classify_searching`] would find the same session and client, and
    /// remember the same answer for the pair, so only the counting is left.
    fn classify_known(
        &mut self,
        d: &Datagram,
        k: Known,
        kind: PayloadKind,
    ) -> Result<Classified, Unrelated> {
        let Some(s) = self.sessions.get_mut(&k.session) else {
            // Unreachable: the pair's answer is forgotten when a session retires.
            self.table_full += 1;
            return Err(Unrelated::TableFull);
        };
        let (kind, damaged) = s.count(d, k.client, false, k.direction, kind);
        Ok(Classified {
            session: k.session,
            client: k.client,
            direction: k.direction,
            kind,
            new_session: false,
            new_client: false,
            damaged,
        })
    }

    /// [`SessionTable::classify`] by the session table's lookups (`recent`: the
    /// pair's remembered answer, used unless the datagram is a connect).
    fn classify_searching(
        &mut self,
        d: &Datagram,
        recent: Option<Known>,
    ) -> Result<Classified, Unrelated> {
        let sides = match recent {
            // Only pairs with the game port on one end are remembered, whose sides
            // follow from the ports alone.
            Some(k) => Some(match k.direction {
                Direction::C2S => (d.dst, d.src, Direction::C2S),
                Direction::S2C => (d.src, d.dst, Direction::S2C),
            }),
            None => self.sides(d),
        };
        let Some((server, client_addr, direction)) = sides else {
            self.unrelated += 1;
            return Err(Unrelated::NotGamePort {
                src_port: d.src.port(),
                dst_port: d.dst.port(),
            });
        };
        let kind = payload_kind(&d.payload, direction);
        let is_connect = is_connect(direction, kind);
        let now = d.ts_ns;
        let timeout = self.config.client_timeout_ns;

        // Which session: the current one, the one before it (late packets of a client
        // it knew), or a new one.
        let mut target = None;
        // The client's index in the current session, found once: looked up again
        // below only when the datagram goes to another session.
        let mut known_in_target = None;
        if let Some(k) = recent.filter(|_| !is_connect) {
            // Nothing was added or retired since the pair's last datagram, which was
            // no connect either: the lookups below would find the same session and
            // client (only a connect depends on whether the session has ended).
            target = Some(k.session);
            known_in_target = Some(k.client);
        } else if let Some(&cur) = self.current.get(&server) {
            let s = &self.sessions[&cur];
            let ended = s.ended(now, timeout);
            let in_previous = |prev: usize| {
                self.sessions
                    .get(&prev)
                    .is_some_and(|p| p.by_addr.contains_key(&client_addr))
            };
            if let Some(&i) = s.by_addr.get(&client_addr) {
                if !(ended && is_connect) {
                    target = Some(cur);
                    known_in_target = Some(i);
                }
            } else if let Some(prev) = s.previous.filter(|&p| !is_connect && in_previous(p)) {
                // A connection of the previous session that speaks again (no new
                // connect) still belongs to it.
                target = Some(prev);
            } else if !ended {
                target = Some(cur);
            }
        }
        let new_session = target.is_none();
        let session = match target {
            Some(t) => t,
            None => {
                if self.sessions.len() >= self.config.max_sessions {
                    self.table_full += 1;
                    return Err(Unrelated::TableFull);
                }
                let previous = self.current.get(&server).copied();
                // The session before the previous one is out of reach from now on.
                let unreachable = previous
                    .and_then(|p| self.sessions.get(&p))
                    .and_then(|p| p.previous);
                if let Some(old) = unreachable.and_then(|u| self.sessions.remove_entry(&u)) {
                    self.clients_total = self.clients_total.saturating_sub(old.1.clients.len());
                    self.retired.insert(old.0, old.1);
                }
                let index = self.next_index;
                self.next_index += 1;
                self.recent.forget_all();
                self.sessions.insert(
                    index,
                    Session {
                        server,
                        activity: Activity::start(d),
                        counters: Counters::default(),
                        clients: Vec::new(),
                        by_addr: HashMap::default(),
                        previous,
                    },
                );
                self.current.insert(server, index);
                index
            }
        };

        let max_clients = self.config.max_clients_per_session;
        let max_total = self.config.max_clients_total;
        let Some(s) = self.sessions.get_mut(&session) else {
            // Unreachable: the target is the current session or the one before it.
            self.table_full += 1;
            return Err(Unrelated::TableFull);
        };
        let existing = known_in_target.or_else(|| s.by_addr.get(&client_addr).copied());
        // A connect from an endpoint that already had an id (or left) is a new
        // connection: the client restarted on the same port.
        let reconnect = existing.is_some_and(|i| {
            let c = &s.clients[i];
            is_connect && (c.peer_id.is_some() || c.left_frame.is_some())
        });
        let (client, new_client) = match existing {
            Some(i) if !reconnect => (i, false),
            _ => {
                if s.clients.len() >= max_clients || self.clients_total >= max_total {
                    self.table_full += 1;
                    return Err(Unrelated::TableFull);
                }
                self.clients_total += 1;
                self.recent.forget_all();
                s.clients.push(Client {
                    addr: client_addr,
                    activity: Activity::start(d),
                    counters: Counters::default(),
                    peer_id: None,
                    connect_frame: None,
                    left_frame: None,
                });
                let i = s.clients.len() - 1;
                s.by_addr.insert(client_addr, i);
                (i, true)
            }
        };
        let (kind, damaged) = s.count(d, client, new_client, direction, kind);
        // With two different ports exactly one is the game port, and the sides follow
        // from the ports (with both on it they can depend on the payload).
        if !is_connect && d.src.port() != d.dst.port() {
            let known = Known {
                direction,
                session,
                client,
            };
            self.recent.put(d.src, d.dst, known);
        }
        Ok(Classified {
            session,
            client,
            direction,
            kind,
            new_session,
            new_client,
            damaged,
        })
    }

    /// (server endpoint, client endpoint, direction), or `None` off the game port.
    fn sides(&self, d: &Datagram) -> Option<(SocketAddr, SocketAddr, Direction)> {
        let port = self.config.game_port;
        let c2s = Some((d.dst, d.src, Direction::C2S));
        let s2c = Some((d.src, d.dst, Direction::S2C));
        match (d.src.port() == port, d.dst.port() == port) {
            (false, true) => c2s,
            (true, false) => s2c,
            (false, false) => None,
            (true, true) => {
                // Stock clients also bind the game port: tell the sides apart by which
                // endpoint is already a server, then by the payload.
                match (
                    self.current.contains_key(&d.src),
                    self.current.contains_key(&d.dst),
                ) {
                    (true, false) => return s2c,
                    (false, true) => return c2s,
                    _ => {}
                }
                match d.payload.first() {
                    Some(&PEER_ID_HOST) => s2c,
                    Some(b'\\') if is_gamespy_reply(&d.payload) => s2c,
                    _ => c2s,
                }
            }
        }
    }
}

/// A client's connect request: the only datagram whose session depends on more than
/// the endpoints (on whether the session it would join has ended).
fn is_connect(direction: Direction, kind: PayloadKind) -> bool {
    direction == Direction::C2S
        && kind
            == PayloadKind::Bc {
                peer_id: PEER_ID_UNASSIGNED,
            }
}

/// A GameSpy reply ends with `\final\` (and carries `\gamename\`); queries do not.
fn is_gamespy_reply(payload: &[u8]) -> bool {
    payload.windows(7).any(|w| w == b"\\final\\")
}

/// Classifies a game-port payload by its clear first byte.
pub fn payload_kind(payload: &[u8], direction: Direction) -> PayloadKind {
    match payload {
        [] => PayloadKind::NotBc(NotBcReason::Empty),
        [b'\\', ..] => PayloadKind::GameSpy,
        [_] => PayloadKind::NotBc(NotBcReason::TooShort { len: 1 }),
        [peer_id, ..] => {
            let ok = match direction {
                Direction::S2C => *peer_id == PEER_ID_HOST,
                Direction::C2S => *peer_id != 0,
            };
            if ok {
                PayloadKind::Bc { peer_id: *peer_id }
            } else {
                PayloadKind::NotBc(NotBcReason::PeerId {
                    peer_id: *peer_id,
                    direction,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests;
