//! Who fired at whom: per session a shooter × target table of the shots whose message
//! names a target (0x19 TorpedoFire, 0x1A BeamFire) and of the kills (0x36 ScoreChange
//! killer, else the ObjectExploding event's killer ship), each object taken to the ship
//! life it belonged to when the message was sent and that life to its player.
//!
//! The wire tells no hits: no message says that a shot struck. 0x29 Explosion names the
//! object damaged and the damage, not what caused it; the table gives that damage per
//! target on a line of its own, never shared out among the shooters.

use super::battle::{player_name, players};
use super::collect::{CaptureReport, EventKind};
use super::ship_names::ship_name;
use super::svg::esc;
use crate::pipeline::summary::SessionSummary;
use crate::report::names::ShipIdentity;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Rows and columns drawn at most per session: the most active, the rest summed.
const MAX_PARTIES: usize = 24;

/// One cell: shots with a target, by weapon, and kills.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Cell {
    beams: u64,
    torpedoes: u64,
    kills: u64,
}

impl Cell {
    fn shots(&self) -> u64 {
        self.beams + self.torpedoes
    }
    fn add(&mut self, o: &Cell) {
        self.beams += o.beams;
        self.torpedoes += o.torpedoes;
        self.kills += o.kills;
    }
}

/// A session's table: cells by (shooter, target), where each is a player or, for an
/// object of no known player, the ship or the id.
#[derive(Debug, Default)]
struct Matrix {
    cells: BTreeMap<(String, String), Cell>,
    /// Shots whose message names no target, by shooter.
    untargeted: BTreeMap<String, Cell>,
    /// 0x29 explosion damage by damaged party.
    damage: BTreeMap<String, f64>,
}

/// Who an object was: the player of the ship life it belonged to, else that ship, else
/// its id. A life whose creation was not seen is no player's here, whatever its id's
/// slot range suggests: named by its id, it is not taken for someone's own ship.
fn party(c: &CaptureReport, session: usize, ship: Option<ShipIdentity>, id: Option<u32>) -> String {
    if let Some(s) = ship.and_then(|k| c.ships.iter().find(|s| s.is(session, k))) {
        return match (&s.player, s.created_frame) {
            (Some(p), Some(_)) => p.clone(),
            _ => ship_name(s),
        };
    }
    match id {
        Some(o) => format!("object 0x{o:08X}"),
        None => "(none)".to_string(),
    }
}

fn peer_party(s: &SessionSummary, peer: Option<i32>) -> Option<String> {
    let p = peer.filter(|p| *p != 0)?;
    Some(
        players(s)
            .find(|c| c.peer_id.map(i32::from) == Some(p))
            .map(player_name)
            .unwrap_or_else(|| format!("peer {p}")),
    )
}

fn matrix(c: &CaptureReport, s: &SessionSummary) -> Matrix {
    let mut m = Matrix::default();
    for e in c.events.iter().filter(|e| e.session == s.index) {
        match e.kind {
            EventKind::TorpedoFire | EventKind::BeamFire => {
                let shooter = party(c, e.session, e.ship, e.object);
                let cell = match e.target {
                    Some(_) => m
                        .cells
                        .entry((shooter, party(c, e.session, e.target_ship, e.target)))
                        .or_default(),
                    None => m.untargeted.entry(shooter).or_default(),
                };
                if e.kind == EventKind::BeamFire {
                    cell.beams += 1;
                } else {
                    cell.torpedoes += 1;
                }
            }
            EventKind::Explosion => {
                if let Some(v) = e.value {
                    *m.damage
                        .entry(party(c, e.session, e.ship, e.object))
                        .or_default() += v;
                }
            }
            _ => {}
        }
    }
    for k in c.kills.iter().filter(|k| k.session == s.index) {
        let killer = peer_party(s, k.killer_peer).or_else(|| {
            k.killer_ship
                .map(|id| party(c, k.session, Some(id), Some(id.object_id)))
        });
        // No killer (self-destruct, a collision, the environment): no shooter's row.
        let Some(killer) = killer else { continue };
        let victim = peer_party(s, k.victim_peer).unwrap_or_else(|| {
            party(
                c,
                k.session,
                k.victim_ship,
                k.victim_ship.map(|v| v.object_id),
            )
        });
        m.cells.entry((killer, victim)).or_default().kills += 1;
    }
    m
}

/// The parties of a table in order: the session's players by name, then the other
/// objects by how much they fired and were fired at; beyond [`MAX_PARTIES`], "others".
fn parties(m: &Matrix, s: &SessionSummary) -> (Vec<String>, bool) {
    let mut weight: BTreeMap<&str, u64> = BTreeMap::new();
    for ((a, b), cell) in &m.cells {
        let w = cell.shots() + cell.kills;
        *weight.entry(a).or_default() += w;
        *weight.entry(b).or_default() += w;
    }
    for (a, cell) in &m.untargeted {
        *weight.entry(a).or_default() += cell.shots();
    }
    let named: Vec<String> = players(s).map(player_name).collect();
    // The session's players first, by name; then the others, most active first.
    let mut order: Vec<(bool, u64, &str)> = weight
        .iter()
        .map(|(p, w)| {
            let other = !named.iter().any(|n| n == p);
            (other, if other { u64::MAX - *w } else { 0 }, *p)
        })
        .collect();
    order.sort();
    let more = order.len() > MAX_PARTIES;
    let out: Vec<String> = order
        .into_iter()
        .take(MAX_PARTIES)
        .map(|(_, _, p)| p.to_string())
        .collect();
    (out, more)
}

const OTHERS: &str = "others";

fn cell_html(shooter: &str, target: &str, cell: &Cell) -> String {
    if *cell == Cell::default() {
        return "<td class=\"n fire\" data-beams=\"0\" data-torpedoes=\"0\" data-kills=\"0\"></td>"
            .into();
    }
    let tip = format!(
        "{shooter} → {target}\n{} beam shot(s), {} torpedo shot(s)\n{} kill(s)",
        cell.beams, cell.torpedoes, cell.kills
    );
    let kills = if cell.kills > 0 {
        format!(" <b class=\"kill\">✕{}</b>", cell.kills)
    } else {
        String::new()
    };
    format!(
        "<td class=\"n fire\" data-beams=\"{}\" data-torpedoes=\"{}\" data-kills=\"{}\" data-tip=\"{}\">{}{kills}</td>",
        cell.beams,
        cell.torpedoes,
        cell.kills,
        esc(&tip),
        if cell.shots() > 0 {
            cell.shots().to_string()
        } else {
            String::new()
        }
    )
}

fn table(m: &Matrix, s: &SessionSummary) -> String {
    let (cols, more) = parties(m, s);
    let slot = |p: &str| -> String {
        if cols.iter().any(|c| c == p) {
            p.to_string()
        } else {
            OTHERS.to_string()
        }
    };
    let mut labels = cols.clone();
    if more {
        labels.push(OTHERS.to_string());
    }
    let mut grid: BTreeMap<(String, String), Cell> = BTreeMap::new();
    for ((a, b), cell) in &m.cells {
        grid.entry((slot(a), slot(b))).or_default().add(cell);
    }
    let mut untargeted: BTreeMap<String, Cell> = BTreeMap::new();
    for (a, cell) in &m.untargeted {
        untargeted.entry(slot(a)).or_default().add(cell);
    }
    let mut damage: BTreeMap<String, f64> = BTreeMap::new();
    for (a, v) in &m.damage {
        *damage.entry(slot(a)).or_default() += v;
    }
    let mut h = format!(
        "<div class=\"scroll wide\"><table class=\"fire-matrix\" data-session=\"{}\"><tr><th>shooter ↓ target →</th>",
        s.index
    );
    for l in &labels {
        let _ = write!(h, "<th class=\"n\" data-target=\"{0}\">{0}</th>", esc(l));
    }
    h.push_str("<th class=\"n\">no target</th><th class=\"n\">shots</th></tr>");
    // A player's row follows the page's Player choice, as the scoreboard's rows do.
    let named: Vec<String> = players(s).map(player_name).collect();
    for a in &labels {
        let player = if named.contains(a) {
            format!(" data-player=\"{}\"", esc(a))
        } else {
            String::new()
        };
        let _ = write!(h, "<tr data-shooter=\"{0}\"{player}><th>{0}</th>", esc(a));
        let mut total = Cell::default();
        for b in &labels {
            let cell = grid
                .get(&(a.clone(), b.clone()))
                .copied()
                .unwrap_or_default();
            total.add(&cell);
            h.push_str(&cell_html(a, b, &cell));
        }
        let none = untargeted.get(a).copied().unwrap_or_default();
        total.add(&none);
        let _ = write!(
            h,
            "<td class=\"n\" data-untargeted=\"{}\">{}</td><td class=\"n\">{}</td></tr>",
            none.shots(),
            none.shots(),
            total.shots()
        );
    }
    h.push_str("<tr class=\"damage\"><th>0x29 damage taken</th>");
    for b in &labels {
        match damage.get(b) {
            Some(v) => {
                let _ = write!(h, "<td class=\"n\" data-damage=\"{v:.1}\">{v:.0}</td>");
            }
            None => h.push_str("<td class=\"n\"></td>"),
        }
    }
    h.push_str("<td></td><td></td></tr></table></div>");
    if more {
        let _ = write!(
            h,
            "<p class=\"note\">The {MAX_PARTIES} most active are shown; the rest are summed \
             as “{OTHERS}”.</p>"
        );
    }
    h
}

pub(super) fn section(c: &CaptureReport) -> String {
    let sessions: Vec<(&SessionSummary, Matrix)> = c
        .summary
        .sessions
        .iter()
        .map(|s| (s, matrix(c, s)))
        .filter(|(_, m)| !m.cells.is_empty() || !m.untargeted.is_empty())
        .collect();
    let mut h = String::new();
    if sessions.is_empty() {
        h.push_str(
            "<p class=\"note\">No weapon fire (0x19 TorpedoFire, 0x1A BeamFire) and no kill \
             with a killer in this capture.</p>",
        );
    }
    let many = c.summary.sessions.len() > 1;
    for (s, m) in &sessions {
        if many {
            let _ = write!(h, "<h4>Session {}</h4>", s.index);
        }
        h.push_str(&table(m, s));
    }
    h.push_str(
        "<p class=\"note\">A cell is the shots of a row at a column: each 0x19 TorpedoFire \
         and 0x1A BeamFire whose message names a target, counted once (the host's relays \
         of a client's shot are not new shots); ✕ marks kills (the killer of 0x36 \
         ScoreChange, else of the 0x06 ObjectExploding event). A launcher or emitter is \
         taken to the ship life that carried it when it fired, and the life to its \
         player. <b>What the wire does not tell:</b> whether a shot hit (no message says \
         so), and who caused the damage of an 0x29 Explosion (it names only the object \
         damaged), so the damage line counts what each one took from any source. Shots \
         with no target are counted under “no target”.</p>",
    );
    if c.events_dropped > 0 {
        let _ = write!(
            h,
            "<p class=\"note warn\">{} events beyond the collector's limit are not counted.</p>",
            c.events_dropped
        );
    }
    h
}
