//! Object registry: which network object id is which ship, per capture session.
//!
//! Fed with every game message of a session (relayed copies included) in capture order:
//! ObjCreate / ObjCreateTeam (0x02/0x03) register objects, DestroyObject (0x14) and the
//! object-exploding event (0x06, class 0x8129) mark their end; only the most recent
//! ended objects are kept ([`MAX_ENDED`]), so a long session stays small. Subsystem ids
//! are not registered by the game; they are attributed through the object-id scheme
//! (player slot N owns 0x40000 ids from 0x3FFFFFFF + N·0x40000) to the slot's latest
//! ship below them. One registry per capture session: ids are reused across sessions.

use super::message::GameMessage;
use super::opcodes::objects::{ObjCreate, ObjectPrefix, CLASS_TORPEDO};
use super::opcodes::ship_layouts::species_name;
use super::opcodes::{op, Body};
use super::ship_log::ShipLog;
use super::ships::ShipCatalog;
use crate::diag::{Code, Warning};
// Fx: internal tables keyed by small fixed-size values; see Cargo.toml.
use rustc_hash::FxHashMap as HashMap;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// Most objects kept per session. A stock game has a few hundred at most in play at
/// once (ships, world objects); beyond this the oldest — ended ones first — are dropped.
pub const MAX_OBJECTS: usize = 4096;
/// Ended objects kept per session: the most recent ones to explode (0x06
/// object-exploding: how every stock ship dies, the wreck is never sent a 0x14) or be
/// destroyed (0x14). Their names are still needed afterwards: the explosion, score and
/// relayed or retransmitted messages about them, and StateUpdates already in flight
/// arrive seconds later, and subsystem ids of a dead ship resolve through it. A
/// 16-player game loses a ship every few seconds at most, so 256 covers minutes of
/// play even if every torpedo were a registered object, in about 100 kB. Keeping every
/// dead ship made a long session's registry grow with its length.
pub const MAX_ENDED: usize = 256;
/// First object id of player slot 0.
pub const SLOT_BASE: u32 = 0x3FFF_FFFF;
/// Ids owned by one player slot.
pub const SLOT_SPAN: u32 = 0x40000;
/// Player slots the engine supports (a multiplayer game has at most 16 players).
pub const MAX_PLAYER_SLOTS: u32 = 16;

/// Player slot owning an object id, if the id lies in a player range.
pub fn slot_of(id: u32) -> Option<u8> {
    let slot = id.checked_sub(SLOT_BASE)? / SLOT_SPAN;
    (slot < MAX_PLAYER_SLOTS).then_some(slot as u8)
}

/// What kind of object a creation message described.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectKind {
    Ship,
    Torpedo,
    Other,
}

/// Everything known about one object.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectInfo {
    pub object_id: u32,
    pub kind: ObjectKind,
    pub species: Option<u8>,
    /// Ship class ("Galaxy"), torpedo or "object".
    pub class_name: String,
    pub owner_slot: u8,
    pub team: Option<u8>,
    pub player_name: String,
    pub set_name: String,
    /// Serialized-object layout; anything but a class-id prefix is non-stock.
    pub prefix: ObjectPrefix,
    /// Frame of the first creation message.
    pub created_frame: u64,
    /// Creation messages seen for this object (the original plus relayed copies).
    pub creations_seen: u32,
    pub exploded_frame: Option<u64>,
    pub destroyed_frame: Option<u64>,
    /// Insertion order: the key of the live queue.
    seq: u64,
    /// Exploded or destroyed: in the ended queue rather than the live one.
    ended: bool,
}

impl ObjectInfo {
    pub fn non_stock(&self) -> bool {
        !self.prefix.is_stock()
    }
    /// The owner byte names another slot than the id's range (non-stock senders).
    pub fn slot_mismatch(&self) -> bool {
        slot_of(self.object_id).is_some_and(|s| s != self.owner_slot)
    }
    pub fn is_alive(&self) -> bool {
        self.destroyed_frame.is_none()
    }
    /// "Galaxy (Bot1, slot 1)".
    pub fn describe(&self) -> String {
        self.describe_as(None)
    }

    /// As [`ObjectInfo::describe`], naming the owner `player` when the session knows
    /// the player of the owning slot: the name field of a ship record is the ship's
    /// name ("XFS01 Dauntless"), which stock clients fill with the player's name only
    /// by default.
    pub fn describe_as(&self, player: Option<&str>) -> String {
        match player.or((!self.player_name.is_empty()).then_some(self.player_name.as_str())) {
            Some(name) => format!("{} ({name}, slot {})", self.class_name, self.owner_slot),
            None => format!("{} (slot {})", self.class_name, self.owner_slot),
        }
    }
}

/// A creation of an id that a live object of another owner or class holds: the
/// newest incarnation takes the id (later messages are about it), the previous one is
/// kept among [`ObjectRegistry::superseded`].
#[derive(Debug, Clone, PartialEq)]
pub struct IdConflict {
    pub object_id: u32,
    /// The object that held the id, and the frame it was created in.
    pub previous: ObjectInfo,
}

/// Superseded objects kept per session (see [`IdConflict`]); older ones are forgotten.
pub const MAX_SUPERSEDED: usize = 256;

/// The objects of one capture session.
///
/// Every object in `objects` is in exactly one of `live` or `ended`; `ships` holds
/// the ids of the ships among them.
#[derive(Debug, Clone, Default)]
pub struct ObjectRegistry {
    objects: HashMap<u32, ObjectInfo>,
    /// Objects not ended, by insertion order (seq → id): the oldest is evicted when full.
    live: BTreeMap<u64, u32>,
    /// Ended objects, earliest first, at most [`MAX_ENDED`].
    ended: VecDeque<u32>,
    /// Ship ids, for the range query of [`ObjectRegistry::owner_ship`].
    ships: BTreeSet<u32>,
    next_seq: u64,
    evicted: u64,
    forgotten: u64,
    forgotten_ships: u64,
    /// Objects whose id a conflicting creation took, earliest first.
    superseded: VecDeque<ObjectInfo>,
    conflicts: u64,
    last_conflict: Option<IdConflict>,
    /// Every ship created, kept after the table forgets it.
    ship_log: ShipLog,
}

impl ObjectRegistry {
    pub fn new() -> ObjectRegistry {
        ObjectRegistry::default()
    }

    pub fn len(&self) -> usize {
        self.objects.len()
    }
    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }
    /// Objects dropped because the registry was full.
    pub fn evicted(&self) -> u64 {
        self.evicted
    }
    /// Ended objects dropped beyond the [`MAX_ENDED`] most recent ones.
    pub fn forgotten(&self) -> u64 {
        self.forgotten
    }
    /// The ships among [`ObjectRegistry::forgotten`].
    pub fn forgotten_ships(&self) -> u64 {
        self.forgotten_ships
    }
    /// Creations that took the id of a live object of another owner or class.
    pub fn conflicts(&self) -> u64 {
        self.conflicts
    }
    /// The conflict the last [`ObjectRegistry::observe`] found, if any.
    pub fn take_conflict(&mut self) -> Option<IdConflict> {
        // Asked after every delivered message: answer the usual "none" without
        // moving the whole (empty) value out.
        self.last_conflict.as_ref()?;
        self.last_conflict.take()
    }
    /// The conflict the last [`ObjectRegistry::observe`] found, as the warning its
    /// creation carries: located at the object id in `msg` (the creation, opcode
    /// first), naming the new incarnation and the one that held the id, each owner by
    /// the player of its slot where `player` knows one.
    ///
    /// Inlined for its usual answer, "none", asked after every delivered message: the
    /// call to the text-building part cost some 18 instructions a message.
    #[inline]
    pub fn take_conflict_warning(
        &mut self,
        msg: &[u8],
        player: &dyn Fn(u8) -> Option<String>,
    ) -> Option<Warning> {
        let c = self.take_conflict()?;
        Some(self.conflict_warning(c, msg, player))
    }

    #[cold]
    #[inline(never)]
    fn conflict_warning(
        &self,
        c: IdConflict,
        msg: &[u8],
        player: &dyn Fn(u8) -> Option<String>,
    ) -> Warning {
        let id = c.object_id;
        let at = msg
            .windows(4)
            .skip(1)
            .position(|w| w == id.to_le_bytes())
            .map(|p| p + 1);
        let now = self.describe_with(id, player).unwrap_or_default();
        let before = c
            .previous
            .describe_as(player(c.previous.owner_slot).as_deref());
        let text = format!(
            "object id 0x{id:08X} created as {now} while {before} (created in frame {}) still \
             holds it; later messages are attributed to the new one",
            c.previous.created_frame
        );
        Warning::new(Code::ObjectIdConflict, at, text)
    }
    /// Objects whose id was taken by a conflicting creation (at most
    /// [`MAX_SUPERSEDED`], the most recent).
    pub fn superseded(&self) -> impl Iterator<Item = &ObjectInfo> {
        self.superseded.iter()
    }
    /// Every ship created in the session, ended or not.
    pub fn ship_log(&self) -> &ShipLog {
        &self.ship_log
    }
    pub fn get(&self, id: u32) -> Option<&ObjectInfo> {
        self.objects.get(&id)
    }
    pub fn iter(&self) -> impl Iterator<Item = &ObjectInfo> {
        self.objects.values()
    }

    /// Species of a registered ship (for StateUpdate layouts).
    pub fn species(&self, id: u32) -> Option<u8> {
        self.objects.get(&id).and_then(|o| o.species)
    }

    /// Feed one game message (opcode byte first). Returns true if the registry changed.
    ///
    /// Inlined for the message most frequent by far, a StateUpdate, which changes
    /// nothing here: the call cost it some 25 instructions.
    #[inline]
    pub fn observe(&mut self, msg: &GameMessage, frame: u64, catalog: &ShipCatalog) -> bool {
        match &msg.body {
            Some(Body::StateUpdate(_)) | None => false,
            Some(_) => self.observe_body(msg, frame, catalog),
        }
    }

    fn observe_body(&mut self, msg: &GameMessage, frame: u64, catalog: &ShipCatalog) -> bool {
        match &msg.body {
            Some(Body::ObjCreate(c)) => self.observe_creation(c, frame, catalog),
            Some(Body::Object(o)) if o.opcode == op::DESTROY_OBJECT => {
                self.mark_ended(o.object_id, frame, |o| &mut o.destroyed_frame)
            }
            Some(body) => match body.exploding_object() {
                Some(id) => self.mark_ended(id, frame, |o| &mut o.exploded_frame),
                None => false,
            },
            None => false,
        }
    }

    /// Records the frame an object exploded or was destroyed in (`when` picks which),
    /// the first time only, and ends the object; whether anything changed.
    fn mark_ended(
        &mut self,
        id: u32,
        frame: u64,
        when: fn(&mut ObjectInfo) -> &mut Option<u64>,
    ) -> bool {
        let changed = match self.objects.get_mut(&id).map(when) {
            Some(slot) if slot.is_none() => {
                *slot = Some(frame);
                true
            }
            _ => false,
        };
        self.end(id);
        changed
    }

    /// An object exploded or was destroyed: it moves from the live queue to the ended
    /// one, whose earliest entry is forgotten once the queue is over its bound.
    fn end(&mut self, id: u32) {
        let seq = match self.objects.get_mut(&id) {
            Some(o) if !o.ended => {
                o.ended = true;
                o.seq
            }
            _ => return,
        };
        self.live.remove(&seq);
        self.ended.push_back(id);
        if self.ended.len() > MAX_ENDED {
            if let Some(old) = self.ended.pop_front() {
                if let Some(o) = self.remove(old) {
                    self.forgotten += 1;
                    self.forgotten_ships += u64::from(o.kind == ObjectKind::Ship);
                }
            }
        }
    }

    fn observe_creation(&mut self, c: &ObjCreate, frame: u64, catalog: &ShipCatalog) -> bool {
        let id = c.object_id;
        let species = c.species();
        let mut conflict = None;
        if let Some(existing) = self.objects.get_mut(&id) {
            // A live object with this id and the same owner and class: a relayed copy
            // or a replay to a late joiner (the host ignores creations of existing ids
            // too). Another owner or class: two objects claim the id; the newest is
            // the one later messages are about.
            if existing.is_alive() {
                if existing.owner_slot == c.owner_slot && existing.species == species {
                    existing.creations_seen = existing.creations_seen.saturating_add(1);
                    return false;
                }
                conflict = Some(existing.clone());
            }
        }
        // A copy of a superseded incarnation's creation (relayed to another client,
        // or replayed) does not take the id back.
        if conflict.is_some() {
            if let Some(old) =
                self.superseded.iter_mut().rev().find(|o| {
                    o.object_id == id && o.owner_slot == c.owner_slot && o.species == species
                })
            {
                old.creations_seen = old.creations_seen.saturating_add(1);
                return false;
            }
        }
        let (kind, species, class_name, player_name, set_name) = match c.ship() {
            Some(ship) => {
                let sp = ship.species;
                let name = catalog
                    .class_name(sp as u16)
                    .map(str::to_string)
                    .or_else(|| species_name(sp).map(str::to_string))
                    .unwrap_or_else(|| format!("species {sp}"));
                (
                    ObjectKind::Ship,
                    Some(sp),
                    name,
                    ship.player_name.clone(),
                    ship.set_name.clone(),
                )
            }
            None => {
                let (kind, name) = match c.class() {
                    Some(CLASS_TORPEDO) => (ObjectKind::Torpedo, "torpedo"),
                    _ => (ObjectKind::Other, "object"),
                };
                (kind, None, name.to_string(), String::new(), String::new())
            }
        };
        // A destroyed object whose id is created again is replaced.
        if let Some(old) = self.remove(id) {
            if old.ended {
                if let Some(at) = self.ended.iter().position(|&d| d == id) {
                    self.ended.remove(at);
                }
            } else {
                self.live.remove(&old.seq);
            }
        }
        if let Some(previous) = conflict {
            self.conflicts += 1;
            if self.superseded.len() >= MAX_SUPERSEDED {
                self.superseded.pop_front();
            }
            self.superseded.push_back(previous.clone());
            self.last_conflict = Some(IdConflict {
                object_id: id,
                previous,
            });
        }
        if self.objects.len() >= MAX_OBJECTS {
            self.evict_one();
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        self.live.insert(seq, id);
        if kind == ObjectKind::Ship {
            self.ships.insert(id);
        }
        self.objects.insert(
            id,
            ObjectInfo {
                object_id: id,
                kind,
                species,
                class_name,
                owner_slot: c.owner_slot,
                team: c.team,
                player_name,
                set_name,
                prefix: c.prefix,
                created_frame: frame,
                creations_seen: 1,
                exploded_frame: None,
                destroyed_frame: None,
                seq,
                ended: false,
            },
        );
        if let Some(o) = self.objects.get(&id).filter(|o| o.kind == ObjectKind::Ship) {
            self.ship_log.note(super::ship_log::ShipEntry {
                object_id: o.object_id,
                class_name: o.class_name.clone(),
                owner_slot: o.owner_slot,
                team: o.team,
                created_frame: o.created_frame,
            });
        }
        true
    }

    /// Drop an object from the table and the ship index (not from the order queues).
    fn remove(&mut self, id: u32) -> Option<ObjectInfo> {
        let o = self.objects.remove(&id)?;
        if o.kind == ObjectKind::Ship {
            self.ships.remove(&id);
        }
        Some(o)
    }

    /// Drop the earliest ended object, or else the oldest live one.
    fn evict_one(&mut self) {
        let victim = match self.ended.pop_front() {
            Some(id) => Some(id),
            None => self.live.pop_first().map(|(_, id)| id),
        };
        if let Some(id) = victim {
            if self.remove(id).is_some() {
                self.evicted += 1;
            }
        }
    }

    /// The ship an id belongs to: the object itself, or for a subsystem id the latest
    /// ship in the same player slot whose id lies below it. Slot ranges are contiguous,
    /// so that is the nearest ship id below, if it lies in the same slot.
    pub fn owner_ship(&self, id: u32) -> Option<&ObjectInfo> {
        if let Some(o) = self.objects.get(&id) {
            return Some(o);
        }
        let slot = slot_of(id)?;
        let below = *self.ships.range(..id).next_back()?;
        if slot_of(below) != Some(slot) {
            return None;
        }
        self.objects.get(&below)
    }

    /// Readable description: "Galaxy (Bot1, slot 1)", "subsystem of Galaxy (Bot1,
    /// slot 1)", "slot 2 object" for an unattributed id in a player range.
    pub fn describe(&self, id: u32) -> Option<String> {
        self.describe_with(id, &|_| None)
    }

    /// As [`ObjectRegistry::describe`], with the player of each slot from `player`.
    pub fn describe_with(&self, id: u32, player: &dyn Fn(u8) -> Option<String>) -> Option<String> {
        if let Some(o) = self.objects.get(&id) {
            return Some(o.describe_as(player(o.owner_slot).as_deref()));
        }
        if let Some(ship) = self.owner_ship(id) {
            let name = player(ship.owner_slot);
            return Some(format!(
                "subsystem of {}",
                ship.describe_as(name.as_deref())
            ));
        }
        slot_of(id).map(|s| format!("slot {s} object"))
    }
}

#[cfg(test)]
mod tests;
