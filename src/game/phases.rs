//! Session phase labels per client flow (`flows.md` §2).
//!
//! One [`PhaseTracker`] per client (host endpoint ↔ client endpoint), fed with transport
//! events and the game messages of that flow in capture order. A capture may start
//! mid-session, so the tracker begins in `Unknown` and switches on the first message
//! that says where the client is.

use super::message::GameMessage;
use super::opcodes::{op, Body};
use crate::diag::Direction;
use std::fmt;

/// Silence after which a client counts as gone (stock peer timeout).
pub const PEER_TIMEOUT_SECS: f64 = 45.0;
/// Own-ship ids remembered per client (respawns add one each; older ones drop out).
pub const MAX_OWN_SHIPS: usize = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Nothing distinguishing seen yet.
    Unknown,
    /// GameSpy queries before any game packet.
    Discovery,
    /// Transport connect seen.
    Connecting,
    /// A checksum request of this round is outstanding or answered.
    Checksum {
        round: u8,
    },
    /// ChecksumComplete / Settings / GameInit received.
    Settings,
    /// NewPlayerInGame sent; picking a ship.
    Lobby,
    InGame,
    /// The client's ship exploded; waiting for the respawn.
    Dead,
    /// Disconnect, boot, or timeout.
    Disconnecting,
}

impl Phase {
    /// Stable machine key ("checksum" for every round).
    pub fn key(&self) -> &'static str {
        match self {
            Phase::Unknown => "unknown",
            Phase::Discovery => "discovery",
            Phase::Connecting => "connecting",
            Phase::Checksum { .. } => "checksum",
            Phase::Settings => "settings",
            Phase::Lobby => "lobby",
            Phase::InGame => "in_game",
            Phase::Dead => "dead",
            Phase::Disconnecting => "disconnecting",
        }
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Phase::Checksum { round: 0xFF } => f.write_str("checksum round 0xFF"),
            Phase::Checksum { round } => write!(f, "checksum round {round}"),
            Phase::InGame => f.write_str("in game"),
            p => f.write_str(p.key()),
        }
    }
}

/// Transport-level happenings that move the phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportEvent {
    /// A GameSpy text datagram on the flow.
    GameSpy,
    /// Transport type 0x03 from the client (peer id 0xFF).
    Connect,
    /// Transport disconnect from the client.
    Disconnect,
    /// The host booted the client.
    Boot,
    /// Any other game packet (keeps the flow alive).
    Packet,
}

/// Phase state machine of one client.
#[derive(Debug, Clone)]
pub struct PhaseTracker {
    phase: Phase,
    seen_game_packet: bool,
    last_time: Option<f64>,
    own_ships: [u32; MAX_OWN_SHIPS],
    own_count: usize,
}

impl Default for PhaseTracker {
    fn default() -> Self {
        PhaseTracker {
            phase: Phase::Unknown,
            seen_game_packet: false,
            last_time: None,
            own_ships: [0; MAX_OWN_SHIPS],
            own_count: 0,
        }
    }
}

impl PhaseTracker {
    pub fn new() -> PhaseTracker {
        PhaseTracker::default()
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Switch, returning the new phase if it changed.
    fn set(&mut self, p: Phase) -> Option<Phase> {
        (self.phase != p).then(|| {
            self.phase = p;
            p
        })
    }

    /// Advance the clock; a silence longer than the peer timeout ends the session.
    pub fn on_time(&mut self, time: f64) -> Option<Phase> {
        let idle = self.last_time.is_some_and(|t| time - t > PEER_TIMEOUT_SECS);
        self.last_time = Some(self.last_time.map_or(time, |t| t.max(time)));
        if idle && !matches!(self.phase, Phase::Unknown | Phase::Disconnecting) {
            return self.set(Phase::Disconnecting);
        }
        None
    }

    pub fn on_transport(&mut self, ev: TransportEvent, time: f64) -> Option<Phase> {
        let timed_out = self.on_time(time);
        let changed = match ev {
            TransportEvent::GameSpy => {
                if !self.seen_game_packet && self.phase == Phase::Unknown {
                    self.set(Phase::Discovery)
                } else {
                    None
                }
            }
            TransportEvent::Connect => {
                self.seen_game_packet = true;
                self.own_count = 0;
                self.set(Phase::Connecting)
            }
            TransportEvent::Disconnect | TransportEvent::Boot => {
                self.seen_game_packet = true;
                self.set(Phase::Disconnecting)
            }
            TransportEvent::Packet => {
                self.seen_game_packet = true;
                None
            }
        };
        changed.or(timed_out)
    }

    /// A game message of this client's flow.
    ///
    /// Inlined for the message most frequent by far, a StateUpdate of a client in play
    /// (or any StateUpdate from the host), which only advances the clock: the full
    /// match and the call cost it some 40 instructions a message.
    #[inline]
    pub fn on_message(&mut self, dir: Direction, msg: &GameMessage, time: f64) -> Option<Phase> {
        if msg.opcode == op::STATE_UPDATE
            && (dir == Direction::S2C || matches!(self.phase, Phase::InGame | Phase::Dead))
        {
            // The host's StateUpdates never move the phase; the client's keep it in
            // game (or dead, waiting for the respawn). Only a silence may end it.
            let timed_out = self.on_time(time);
            self.seen_game_packet = true;
            return timed_out;
        }
        self.on_other_message(dir, msg, time)
    }

    fn on_other_message(&mut self, dir: Direction, msg: &GameMessage, time: f64) -> Option<Phase> {
        let timed_out = self.on_time(time);
        self.seen_game_packet = true;
        if msg.length == 0 {
            return timed_out;
        }
        if self.phase == Phase::Disconnecting {
            // Only a new connect (transport) starts the client over.
            return timed_out;
        }
        let changed = match (dir, msg.opcode) {
            (Direction::S2C, op::CHECKSUM_REQUEST) => {
                // A request too damaged to read gives no round.
                let round = match &msg.body {
                    Some(Body::ChecksumRequest(r)) => r.round,
                    _ => 0,
                };
                self.set(Phase::Checksum { round })
            }
            (Direction::S2C, op::CHECKSUM_COMPLETE | op::SETTINGS | op::GAME_INIT) => {
                self.set(Phase::Settings)
            }
            (Direction::S2C, op::BOOT_PLAYER) => self.set(Phase::Disconnecting),
            (Direction::C2S, op::NEW_PLAYER_IN_GAME) => self.set(Phase::Lobby),
            (Direction::C2S, op::OBJ_CREATE_TEAM) => {
                if let Some(Body::ObjCreate(c)) = &msg.body {
                    self.remember_ship(c.object_id);
                }
                self.set(Phase::InGame)
            }
            (Direction::C2S, op::STATE_UPDATE) if self.phase != Phase::Dead => {
                self.set(Phase::InGame)
            }
            (Direction::S2C, op::PYTHON_EVENT) => {
                match msg.body.as_ref().and_then(Body::exploding_object) {
                    Some(victim) if self.is_own_ship(victim) => self.set(Phase::Dead),
                    _ => None,
                }
            }
            _ => None,
        };
        changed.or(timed_out)
    }

    fn remember_ship(&mut self, id: u32) {
        if self.own_count == MAX_OWN_SHIPS {
            self.own_ships.copy_within(1.., 0);
            self.own_count -= 1;
        }
        self.own_ships[self.own_count] = id;
        self.own_count += 1;
    }

    fn is_own_ship(&self, id: u32) -> bool {
        self.own_ships[..self.own_count].contains(&id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::opcodes::checksum::ChecksumRequest;
    use crate::game::opcodes::test_util::{decode_plain as msg, hex};
    use Direction::{C2S, S2C};

    // The a_single_client sequence (flows.md §1): connect → checksums → settings →
    // lobby → in game → dead → disconnect.
    #[test]
    fn full_session_sequence() {
        let mut t = PhaseTracker::new();
        assert_eq!(
            t.on_transport(TransportEvent::GameSpy, 0.0),
            Some(Phase::Discovery)
        );
        assert_eq!(
            t.on_transport(TransportEvent::Connect, 0.1),
            Some(Phase::Connecting)
        );
        assert_eq!(
            t.on_message(
                S2C,
                &msg(&hex("20000800736372697074732f07004170702e70796320")),
                0.2
            ),
            Some(Phase::Checksum { round: 0 })
        );
        assert_eq!(
            t.on_message(C2S, &msg(&hex("21ff00000000000000")), 0.3),
            None
        );
        let last_round = ChecksumRequest {
            round: 0xFF,
            directory: "Scripts/Multiplayer".into(),
            filter: "*.pyc".into(),
            recursive: true,
        };
        let p = t.on_message(S2C, &msg(&last_round.emit()), 0.4).unwrap();
        assert_eq!(p.to_string(), "checksum round 0xFF");
        assert_eq!(t.on_message(S2C, &msg(&[0x28]), 0.5), Some(Phase::Settings));
        assert_eq!(t.on_message(S2C, &msg(&[0x01]), 0.5), None);
        assert_eq!(
            t.on_message(C2S, &msg(&hex("2a20")), 0.6),
            Some(Phase::Lobby)
        );
        // The host's StateUpdates about other ships do not mean the client plays.
        assert_eq!(t.on_message(S2C, &msg(&hex("1cffff0340")), 0.7), None);
        let create = hex("03000208800000ffffff3f01");
        assert_eq!(t.on_message(C2S, &msg(&create), 1.0), Some(Phase::InGame));
        assert_eq!(t.phase().to_string(), "in game");
        // Exploding event about another ship: nothing; about ours: dead.
        let other = hex("06298100004e00800000000000ffff03400000000000001841");
        assert_eq!(t.on_message(S2C, &msg(&other), 2.0), None);
        let ours = hex("06298100004e00800000000000ffffff3f0000000000001841");
        assert_eq!(t.on_message(S2C, &msg(&ours), 2.0), Some(Phase::Dead));
        assert_eq!(t.on_message(C2S, &msg(&hex("1cffffff3f")), 2.1), None);
        assert_eq!(t.on_message(C2S, &msg(&create), 12.0), Some(Phase::InGame));
        assert_eq!(
            t.on_transport(TransportEvent::Disconnect, 13.0),
            Some(Phase::Disconnecting)
        );
        assert_eq!(t.on_message(C2S, &msg(&hex("2a20")), 13.5), None);
        assert_eq!(
            t.on_transport(TransportEvent::Connect, 20.0),
            Some(Phase::Connecting)
        );
    }

    // The inlined StateUpdate path answers as the full match does, in every phase,
    // from either side, with and without a silence before it.
    #[test]
    fn state_update_shortcut_agrees_with_full_match() {
        let phases = [
            Phase::Unknown,
            Phase::Discovery,
            Phase::Connecting,
            Phase::Checksum { round: 2 },
            Phase::Settings,
            Phase::Lobby,
            Phase::InGame,
            Phase::Dead,
            Phase::Disconnecting,
        ];
        let updates = [msg(&hex("1cffffff3f")), msg(&hex("1cffff0340"))];
        for phase in phases {
            for dir in [C2S, S2C] {
                for time in [10.5, 60.0] {
                    for m in &updates {
                        let mut fast = PhaseTracker::new();
                        fast.phase = phase;
                        fast.last_time = Some(10.0);
                        let mut full = fast.clone();
                        let got = fast.on_message(dir, m, time);
                        let want = full.on_other_message(dir, m, time);
                        let at = format!("{phase:?} {dir:?} at {time}");
                        assert_eq!(got, want, "{at}");
                        assert_eq!(fast.phase, full.phase, "{at}");
                        assert_eq!(fast.last_time, full.last_time, "{at}");
                        assert!(fast.seen_game_packet && full.seen_game_packet, "{at}");
                    }
                }
            }
        }
    }

    #[test]
    fn mid_session_start_and_timeout() {
        let mut t = PhaseTracker::new();
        assert_eq!(t.phase().to_string(), "unknown");
        assert_eq!(
            t.on_message(C2S, &msg(&hex("1cffffff3f")), 100.0),
            Some(Phase::InGame)
        );
        assert_eq!(t.on_time(130.0), None);
        assert_eq!(t.on_time(176.0), Some(Phase::Disconnecting));
        assert_eq!(t.phase().key(), "disconnecting");
        // GameSpy after game packets does not go back to discovery.
        assert_eq!(t.on_transport(TransportEvent::GameSpy, 177.0), None);
    }
}
