//! What the battle and the connections come to, gathered while the capture is read:
//! the game's own score totals (0x37 Score, 0x36 ScoreChange), the kills (ScoreChange,
//! else the ObjectExploding event), and per client the figures of a health table
//! (ACK delays, arrival jitter, longest silence).
//!
//! Everything here is bounded: kills by [`MAX_KILLS`], clients by [`MAX_HEALTH_CLIENTS`],
//! the ACK delays kept per client by [`MAX_DELAYS`] (then thinned evenly).

use crate::diag::Direction;
use crate::game::opcodes::events::{EventBody, EventTail};
use crate::game::opcodes::Body;
use crate::report::names::ShipIdentity;
use std::collections::BTreeMap;

/// Kills kept.
pub const MAX_KILLS: usize = 20_000;
/// Clients with a health row.
pub const MAX_HEALTH_CLIENTS: usize = 4096;
/// ACK delays kept per client before they are thinned to every second one.
pub const MAX_DELAYS: usize = 65_536;
/// A ScoreChange and an ObjectExploding this close (seconds) are the same kill.
pub const SAME_KILL_SECONDS: f64 = 3.0;

/// One player's totals as the game last announced them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScoreTotals {
    pub kills: i32,
    pub deaths: i32,
    pub score: i32,
}

/// One kill: who killed whom, with which ships when known.
#[derive(Debug, Clone, PartialEq)]
pub struct Kill {
    pub t: f64,
    pub frame: u64,
    pub session: usize,
    /// Peer id of the killer; `None` or 0 when there was none (environment,
    /// self-destruct).
    pub killer_peer: Option<i32>,
    pub victim_peer: Option<i32>,
    pub killer_ship: Option<ShipIdentity>,
    pub victim_ship: Option<ShipIdentity>,
    /// From the game's ScoreChange (else from an ObjectExploding event alone).
    pub scored: bool,
}

/// A kill as one message announces it: peers, and the objects it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Announced {
    pub killer_peer: Option<i32>,
    pub victim_peer: Option<i32>,
    /// The killer's object and the dying one (ObjectExploding).
    pub by: Option<u32>,
    pub of: Option<u32>,
    /// A ScoreChange (the game's own count).
    pub scored: bool,
}

/// The kill a message announces, if it is a ScoreChange or an ObjectExploding event.
pub fn kill_of(body: &Body) -> Option<Announced> {
    match body {
        Body::ScoreChange(s) => Some(Announced {
            killer_peer: Some(s.killer_peer_id),
            victim_peer: Some(s.victim_peer_id),
            by: None,
            of: None,
            scored: true,
        }),
        Body::Event(e) => {
            let victim = e.exploding_object()?;
            let EventBody::Event(ev) = &e.body else {
                return None;
            };
            let killer = match ev.tail {
                EventTail::ObjectExploding { killer_peer_id, .. } => Some(killer_peer_id),
                _ => None,
            };
            Some(Announced {
                killer_peer: killer,
                victim_peer: None,
                by: Some(ev.header.source).filter(|s| *s != 0),
                of: Some(victim),
                scored: false,
            })
        }
        _ => None,
    }
}

/// Score totals of every (session, peer id) the game announced.
#[derive(Debug, Clone, Default)]
pub struct Scores {
    pub totals: BTreeMap<(usize, i32), ScoreTotals>,
}

impl Scores {
    /// Take the totals a 0x37 or 0x36 message carries (any copy: totals are the same).
    pub fn note(&mut self, session: usize, body: &Body) {
        match body {
            Body::Score(s) => {
                self.totals.insert(
                    (session, s.peer_id),
                    ScoreTotals {
                        kills: s.kills,
                        deaths: s.deaths,
                        score: s.score,
                    },
                );
            }
            Body::ScoreChange(s) => {
                if let Some((kills, score)) = s.killer_totals {
                    let k = self.totals.entry((session, s.killer_peer_id)).or_default();
                    k.kills = kills;
                    k.score = score;
                }
                self.totals
                    .entry((session, s.victim_peer_id))
                    .or_default()
                    .deaths = s.victim_deaths;
                for &(peer, score) in &s.updates {
                    self.totals.entry((session, peer)).or_default().score = score;
                }
            }
            _ => {}
        }
    }
    /// Whether the game announced any score in `session`.
    pub fn has(&self, session: usize) -> bool {
        self.totals
            .range((session, i32::MIN)..=(session, i32::MAX))
            .next()
            .is_some()
    }
}

/// One client's connection figures, both directions.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClientHealth {
    /// ACK delays (ns) of this client's flow, both directions; every `stride`-th once
    /// there were more than [`MAX_DELAYS`].
    pub delays: Vec<i64>,
    pub stride: u64,
    seen_delays: u64,
    /// Arrival time (ns) of the last datagram each way, and the gap before it.
    last_ns: [Option<i64>; 2],
    last_gap_ns: Option<i64>,
    /// Sum of |gap − previous gap| of datagrams to the host, and how many.
    pub jitter_sum_ns: i128,
    pub jitter_n: u64,
    /// Longest time between two datagrams of one direction (ns).
    pub longest_silence_ns: i64,
}

impl ClientHealth {
    pub fn datagram(&mut self, dir: Direction, ts_ns: i64) {
        let i = dir.index();
        if let Some(last) = self.last_ns[i] {
            let gap = ts_ns.saturating_sub(last).max(0);
            self.longest_silence_ns = self.longest_silence_ns.max(gap);
            if dir == Direction::C2S {
                if let Some(prev) = self.last_gap_ns {
                    self.jitter_sum_ns += (gap as i128 - prev as i128).abs();
                    self.jitter_n += 1;
                }
                self.last_gap_ns = Some(gap);
            }
        }
        self.last_ns[i] = Some(self.last_ns[i].map_or(ts_ns, |l| l.max(ts_ns)));
    }

    pub fn ack_delay(&mut self, d: i64) {
        let stride = self.stride.max(1);
        if self.seen_delays.is_multiple_of(stride) {
            self.delays.push(d);
            if self.delays.len() >= MAX_DELAYS {
                // Keep every second one and sample half as often from now on.
                let kept: Vec<i64> = self.delays.iter().step_by(2).copied().collect();
                self.delays = kept;
                self.stride = stride * 2;
            }
        }
        self.seen_delays += 1;
    }

    /// Nearest-rank quantile `q` (0..1] of the ACK delays, ns.
    pub fn delay_quantile_ns(&self, q: f64) -> Option<i64> {
        let mut v = self.delays.clone();
        if v.is_empty() {
            return None;
        }
        v.sort_unstable();
        let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
        Some(v[rank - 1])
    }

    /// Mean |change of the gap| between datagrams to the host, ns.
    pub fn jitter_ns(&self) -> Option<f64> {
        (self.jitter_n > 0).then(|| self.jitter_sum_ns as f64 / self.jitter_n as f64)
    }
}

/// Pair the game's ScoreChange kills with the ObjectExploding event of the same kill
/// (for the ships); sessions without any ScoreChange keep the ObjectExploding kills.
pub fn merge_kills(kills: Vec<Kill>) -> Vec<Kill> {
    let (scored, exploding): (Vec<Kill>, Vec<Kill>) = kills.into_iter().partition(|k| k.scored);
    let mut used = vec![false; exploding.len()];
    let mut out = Vec::with_capacity(scored.len() + exploding.len());
    for mut k in scored {
        let twin = exploding
            .iter()
            .enumerate()
            .filter(|(i, e)| {
                !used[*i]
                    && e.session == k.session
                    && (e.t - k.t).abs() <= SAME_KILL_SECONDS
                    && e.killer_peer.unwrap_or(0) == k.killer_peer.unwrap_or(0)
            })
            .min_by(|a, b| (a.1.t - k.t).abs().total_cmp(&(b.1.t - k.t).abs()));
        if let Some((i, e)) = twin {
            used[i] = true;
            k.killer_ship = e.killer_ship;
            k.victim_ship = e.victim_ship;
        }
        out.push(k);
    }
    let scored_sessions: Vec<usize> = out.iter().map(|k| k.session).collect();
    out.extend(
        exploding
            .into_iter()
            .filter(|e| !scored_sessions.contains(&e.session)),
    );
    out.sort_by(|a, b| a.t.total_cmp(&b.t));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_nearest_rank() {
        let mut h = ClientHealth::default();
        for d in [5, 1, 4, 2, 3] {
            h.ack_delay(d);
        }
        assert_eq!(h.delay_quantile_ns(0.5), Some(3));
        assert_eq!(h.delay_quantile_ns(0.95), Some(5));
        assert_eq!(ClientHealth::default().delay_quantile_ns(0.5), None);
    }

    #[test]
    fn jitter_is_the_mean_change_of_the_gap_to_the_host() {
        let mut h = ClientHealth::default();
        for t in [0, 100, 200, 400] {
            h.datagram(Direction::C2S, t);
        }
        h.datagram(Direction::S2C, 0);
        h.datagram(Direction::S2C, 1000);
        // Gaps 100, 100, 200: changes 0 and 100.
        assert_eq!(h.jitter_ns(), Some(50.0));
        assert_eq!(h.longest_silence_ns, 1000);
    }

    #[test]
    fn delays_stay_bounded() {
        let mut h = ClientHealth::default();
        for d in 0..(3 * MAX_DELAYS as i64) {
            h.ack_delay(d);
        }
        assert!(h.delays.len() < MAX_DELAYS);
        let p50 = h.delay_quantile_ns(0.5).unwrap();
        assert!((p50 - 3 * MAX_DELAYS as i64 / 2).abs() < 1000, "{p50}");
    }

    #[test]
    fn a_score_change_takes_the_ships_of_its_explosion() {
        let k = |t: f64, scored: bool| Kill {
            t,
            frame: 1,
            session: 0,
            killer_peer: Some(3),
            victim_peer: scored.then_some(4),
            killer_ship: None,
            victim_ship: (!scored).then_some(ShipIdentity {
                object_id: 9,
                created_frame: 2,
            }),
            scored,
        };
        let m = merge_kills(vec![k(10.0, false), k(10.1, true)]);
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].victim_peer, Some(4));
        assert_eq!(m[0].victim_ship.map(|s| s.object_id), Some(9));
        // Without a ScoreChange the explosion is the kill.
        assert_eq!(merge_kills(vec![k(1.0, false)]).len(), 1);
    }
}
