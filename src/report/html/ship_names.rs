//! How a ship life is named, coloured and grouped under its player, wherever it shows.

use super::collect::{CaptureReport, Ship};
use super::svg::{colour, esc};
use crate::report::names::ShipIdentity;

/// Colour of a ship: its player slot's (see [`slot_colour`]).
pub(super) fn ship_colour(c: &CaptureReport, s: &Ship, i: usize) -> &'static str {
    slot_colour(c, s.session, s.slot, i)
}

/// The colour of a player slot in a session, the same on the map, the ship charts and
/// the per-player charts. With one session a slot is one player and keeps its own
/// colour (slot 0 the palette's first). With several, the same slot is someone else in
/// each session and they meet in one legend: each (session, slot) seen takes the next
/// colour instead. Without a slot, `fallback` (a rank among those without one) picks
/// one of the colours after the slots'.
pub(super) fn slot_colour(
    c: &CaptureReport,
    session: usize,
    slot: Option<u8>,
    fallback: usize,
) -> &'static str {
    let several = c.summary.sessions.len() > 1;
    if let (Some(slot), false) = (slot, several) {
        return colour(usize::from(slot));
    }
    let seen: std::collections::BTreeSet<(usize, u8)> = c
        .summary
        .sessions
        .iter()
        .flat_map(|s| {
            s.clients
                .iter()
                .filter_map(|k| k.slot.map(|x| (s.index, x)))
        })
        .chain(
            c.ships
                .iter()
                .filter_map(|s| s.slot.map(|x| (s.session, x))),
        )
        .collect();
    match slot {
        Some(slot) => colour(seen.range(..(session, slot)).count()),
        None if several => colour(seen.len() + fallback),
        None => colour(16 + fallback),
    }
}

pub(super) fn ship_name(s: &Ship) -> String {
    // Named after its class and the player who flew it, as collected (the creation's
    // sender), not after the registry's label, which follows the id's slot.
    if let (Some(class), Some(_)) = (&s.class, s.created_frame) {
        let who = match (&s.player, s.slot) {
            (Some(p), Some(slot)) => format!(" ({p}, slot {slot})"),
            (Some(p), None) => format!(" ({p})"),
            (None, Some(slot)) => format!(" (slot {slot})"),
            (None, None) => String::new(),
        };
        return format!("{class}{who} 0x{:08X}", s.object_id);
    }
    if s.created_frame.is_some() && !s.label.starts_with("0x") {
        return format!("{} 0x{:08X}", s.label, s.object_id);
    }
    // No creation seen: the id and what its range says (slot, and that slot's player).
    let mut who: Vec<String> = Vec::new();
    if let Some(slot) = s.slot {
        who.push(format!("slot {slot}"));
    }
    who.extend(s.player.clone());
    if who.is_empty() {
        format!("object 0x{:08X}", s.object_id)
    } else {
        format!("object 0x{:08X} ({})", s.object_id, who.join(", "))
    }
}

/// The name of the ship life an event's object or target belonged to, else its id.
pub(super) fn object_name(
    c: &CaptureReport,
    session: usize,
    ship: Option<ShipIdentity>,
    id: Option<u32>,
) -> Option<String> {
    if let Some(s) = ship.and_then(|k| c.ships.iter().find(|s| s.is(session, k))) {
        return Some(ship_name(s));
    }
    id.map(|o| format!("0x{o:08X}"))
}

/// Who a ship belongs to, for grouping: its player, else its slot.
pub(super) fn owner_label(s: &Ship) -> String {
    match (&s.player, s.slot) {
        (Some(p), Some(slot)) => format!("{p} (slot {slot})"),
        (Some(p), None) => p.clone(),
        (None, Some(slot)) => format!("slot {slot}"),
        (None, None) => "no player".to_string(),
    }
}

/// The key that groups a player's lives: session, slot (the legend's order), the
/// client who flew them (else none), and the label.
pub(super) fn owner_key(s: &Ship) -> (usize, u8, usize, String) {
    (
        s.session,
        s.slot.unwrap_or(u8::MAX),
        s.client.unwrap_or(usize::MAX),
        owner_label(s),
    )
}

/// A player group's heading: the owner, and the session when the capture has several.
pub(super) fn owner_heading(s: &Ship, sessions: usize) -> String {
    if sessions > 1 {
        format!("{} · session {}", owner_label(s), s.session)
    } else {
        owner_label(s)
    }
}

/// ` data-player="…"` of a life: its player, or empty (shown only with all players).
pub(super) fn life_player(s: &Ship) -> String {
    format!(
        " data-player=\"{}\"",
        esc(s.player.as_deref().unwrap_or(""))
    )
}
