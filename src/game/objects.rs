//! Object registry: which network object id is which ship, per capture session.
//!
//! Fed with every game message of a session (relayed copies included) in capture order:
//! ObjCreate / ObjCreateTeam (0x02/0x03) register objects, DestroyObject (0x14) and the
//! object-exploding event (0x06, class 0x8129) mark their end; only the most recent
//! ended objects are kept ([`MAX_ENDED`]), so a long session stays small. Subsystem ids
//! are not registered by the game; they are attributed through the object-id scheme
//! (player slot N owns 0x40000 ids from 0x3FFFFFFF + N·0x40000) to the slot's latest
//! ship below them. One registry per capture session: ids are reused across sessions.
//!
//! Why this file is long: the registry ends at about 430 lines; the rest is tests of its
//! lifetimes, conflicts and bounds.

use super::message::GameMessage;
use super::opcodes::objects::{ObjCreate, ObjectPrefix, CLASS_TORPEDO};
use super::opcodes::ship_layouts::species_name;
use super::opcodes::{op, Body};
use super::ship_log::ShipLog;
use super::ships::ShipCatalog;
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
    pub fn observe(&mut self, msg: &GameMessage, frame: u64, catalog: &ShipCatalog) -> bool {
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
            self.ship_log.note(o);
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
mod tests {
    use super::*;
    use crate::game::opcodes::objects::{ObjectBody, ShipBody, SubsystemBlob, CLASS_SHIP};
    use crate::game::opcodes::test_util::hex;
    use crate::game::opcodes::{decode, DecodeContext};

    /// Decode a message against the registry's current objects, then feed it in.
    fn feed(r: &mut ObjectRegistry, msg: &[u8], frame: u64, cat: &ShipCatalog) -> bool {
        let m = decode(msg, &DecodeContext::new(r, cat));
        r.observe(&m, frame, cat)
    }

    const AKIRA: &str = "03000208800000ffffff3f010000b042000084c2000092c2f54a6f3ffe8c963e84e34b3e38784e3c00000000000000054361647932064d756c746931ffff64ffffffffffffff64ffffffffffff64ffffffffffffffffff646001ffffff64ffffffffffffff6400ff64ffffff6401ff";

    fn ship(id: u32, slot: u8, species: u8, name: &str) -> Vec<u8> {
        ObjCreate {
            opcode: 0x03,
            owner_slot: slot,
            team: Some(2),
            prefix: ObjectPrefix::ClassId(CLASS_SHIP),
            object_id: id,
            body: ObjectBody::Ship(ShipBody {
                species,
                position: [0.0; 3],
                orientation: [1.0, 0.0, 0.0, 0.0],
                velocity: ([0; 3], 0.0),
                player_name: name.into(),
                set_name: "Multi1".into(),
                subsystems: SubsystemBlob::Raw(vec![]),
            }),
        }
        .emit()
    }

    fn torpedo(id: u32, slot: u8) -> Vec<u8> {
        ObjCreate {
            opcode: 0x02,
            owner_slot: slot,
            team: None,
            prefix: ObjectPrefix::ClassId(CLASS_TORPEDO),
            object_id: id,
            body: ObjectBody::Torpedo {
                torpedo_type: 2,
                rest: vec![1, 2, 3],
            },
        }
        .emit()
    }

    /// 0x06 object-exploding for `id`, as in `create_relay_destroy_and_respawn`.
    fn exploding(id: u32) -> Vec<u8> {
        let mut m = hex("06298100004e00800000000000");
        m.extend_from_slice(&id.to_le_bytes());
        m.extend_from_slice(&hex("0000000000001841"));
        m
    }

    fn destroy(id: u32) -> Vec<u8> {
        let mut m = vec![0x14];
        m.extend_from_slice(&id.to_le_bytes());
        m
    }

    #[test]
    fn a_live_id_created_by_another_owner_is_a_conflict_and_the_newest_wins() {
        let cat = ShipCatalog::stock();
        let mut r = ObjectRegistry::new();
        let id = slot_base(0);
        assert!(feed(&mut r, &ship(id, 0, 1, "Cady2"), 99, &cat));
        assert!(r.take_conflict().is_none());
        // Another player's Akira claims the same id (a non-stock server that did not
        // hand out ranges): flagged, and the id now names the new ship.
        assert!(feed(&mut r, &ship(id, 1, 1, "Kirk"), 100, &cat));
        let c = r.take_conflict().expect("conflict");
        assert_eq!(
            (c.object_id, c.previous.owner_slot, c.previous.created_frame),
            (id, 0, 99)
        );
        assert_eq!(r.get(id).unwrap().owner_slot, 1);
        assert_eq!(r.describe(id).as_deref(), Some("Akira (Kirk, slot 1)"));
        // Relayed copies of either creation change nothing and are no new conflict.
        assert!(!feed(&mut r, &ship(id, 0, 1, "Cady2"), 103, &cat));
        assert!(!feed(&mut r, &ship(id, 1, 1, "Kirk"), 104, &cat));
        assert!(r.take_conflict().is_none());
        assert_eq!(r.conflicts(), 1);
        assert_eq!(r.get(id).unwrap().owner_slot, 1);
        assert_eq!(
            r.superseded().map(|o| o.owner_slot).collect::<Vec<_>>(),
            [0]
        );
        // Another class under the same owner is a conflict too.
        assert!(feed(&mut r, &ship(id, 1, 3, "Kirk"), 200, &cat));
        assert!(r.take_conflict().is_some());
        // Players' names from the session replace the ship record's name field.
        let named = r.describe_with(id, &|slot| (slot == 1).then(|| "James".to_string()));
        assert_eq!(named.as_deref(), Some("Galaxy (James, slot 1)"));
        check_invariants(&r);
    }

    /// First id of a player slot.
    fn slot_base(slot: u8) -> u32 {
        SLOT_BASE + u32::from(slot) * SLOT_SPAN
    }

    /// The queues and the ship index agree with the table, and the bounds hold.
    fn check_invariants(r: &ObjectRegistry) {
        assert!(r.len() <= MAX_OBJECTS);
        assert!(r.ended.len() <= MAX_ENDED);
        assert_eq!(r.live.len() + r.ended.len(), r.len());
        for (&seq, id) in &r.live {
            let o = r.get(*id).expect("live entry in the table");
            assert!(!o.ended && o.is_alive() && o.exploded_frame.is_none());
            assert_eq!(o.seq, seq);
        }
        for id in &r.ended {
            let o = r.get(*id).expect("ended entry in the table");
            assert!(o.ended && (o.exploded_frame.is_some() || o.destroyed_frame.is_some()));
        }
        let ships: BTreeSet<u32> = r
            .iter()
            .filter(|o| o.kind == ObjectKind::Ship)
            .map(|o| o.object_id)
            .collect();
        assert_eq!(ships, r.ships);
    }

    /// `owner_ship` by its definition: a scan of the whole table.
    fn owner_by_scan(r: &ObjectRegistry, id: u32) -> Option<u32> {
        if r.get(id).is_some() {
            return Some(id);
        }
        let slot = slot_of(id)?;
        r.iter()
            .filter(|o| o.kind == ObjectKind::Ship && o.object_id < id)
            .filter(|o| slot_of(o.object_id) == Some(slot))
            .map(|o| o.object_id)
            .max()
    }

    #[test]
    fn slots_follow_the_id_scheme() {
        assert_eq!(slot_of(0x3FFF_FFFF), Some(0));
        assert_eq!(slot_of(0x4003_FFFE), Some(0));
        assert_eq!(slot_of(0x4003_FFFF), Some(1));
        assert_eq!(slot_of(0x400B_FFFE), Some(2));
        assert_eq!(slot_of(0x3FFF_FFFE), None);
        assert_eq!(slot_of(0xFFFF_FFFF), None);
        assert_eq!(slot_of(0), None);
    }

    #[test]
    fn create_relay_destroy_and_respawn() {
        let cat = ShipCatalog::stock();
        let mut r = ObjectRegistry::new();
        let akira = hex(AKIRA);
        assert!(feed(&mut r, &akira, 30, &cat));
        // The host relays the same bytes to other clients: not a new object.
        assert!(!feed(&mut r, &akira, 31, &cat));
        let o = r.get(0x3FFF_FFFF).unwrap();
        assert_eq!(o.class_name, "Akira");
        assert_eq!((o.created_frame, o.creations_seen), (30, 2));
        assert_eq!((o.owner_slot, o.team), (0, Some(2)));
        assert!(!o.non_stock());
        assert_eq!(r.species(0x3FFF_FFFF), Some(1));
        assert_eq!(
            r.describe(0x3FFF_FFFF).as_deref(),
            Some("Akira (Cady2, slot 0)")
        );
        assert_eq!(
            r.describe(0x4000_0005).as_deref(),
            Some("subsystem of Akira (Cady2, slot 0)")
        );
        assert_eq!(r.describe(0x4003_FFFF).as_deref(), Some("slot 1 object"));
        assert_eq!(r.describe(5), None);

        // Exploding event, then DestroyObject.
        let boom = hex("06298100004e00800000000000ffffff3f0000000000001841");
        assert_eq!(exploding(0x3FFF_FFFF), boom);
        assert!(feed(&mut r, &boom, 40, &cat));
        assert!(feed(&mut r, &hex("14ffffff3f"), 41, &cat));
        let o = r.get(0x3FFF_FFFF).unwrap();
        assert_eq!((o.exploded_frame, o.destroyed_frame), (Some(40), Some(41)));

        // A respawn takes a later id of the same slot; subsystem ids above it follow it.
        let galaxy = ship(0x4000_0021, 0, 3, "Cady2");
        assert!(feed(&mut r, &galaxy, 50, &cat));
        assert_eq!(
            r.describe(0x4000_0030).as_deref(),
            Some("subsystem of Galaxy (Cady2, slot 0)")
        );
        assert_eq!(
            r.describe(0x4000_0005).as_deref(),
            Some("subsystem of Akira (Cady2, slot 0)")
        );
        // Other slot.
        feed(&mut r, &ship(0x4003_FFFF, 1, 5, "Bot1"), 60, &cat);
        assert_eq!(
            r.describe(0x4004_0001).as_deref(),
            Some("subsystem of Sovereign (Bot1, slot 1)")
        );
        // A destroyed id created again is a new object.
        assert!(feed(&mut r, &akira, 70, &cat));
        assert_eq!(r.get(0x3FFF_FFFF).unwrap().created_frame, 70);
    }

    #[test]
    fn non_stock_layouts_are_registered_and_flagged() {
        let cat = ShipCatalog::stock();
        let mut r = ObjectRegistry::new();
        let stock = hex(AKIRA);
        let mut absent = stock[..3].to_vec();
        absent.extend_from_slice(&stock[7..]);
        assert!(feed(&mut r, &absent, 1, &cat));
        let o = r.get(0x3FFF_FFFF).unwrap();
        assert!(o.non_stock());
        assert_eq!(o.class_name, "Akira");
    }

    #[test]
    fn registry_is_bounded() {
        let cat = ShipCatalog::stock();
        let mut r = ObjectRegistry::new();
        for i in 0..(MAX_OBJECTS as u32 + 10) {
            feed(&mut r, &ship(0x1000 + i, 0, 1, "x"), i as u64, &cat);
        }
        assert_eq!(r.len(), MAX_OBJECTS);
        assert_eq!(r.evicted(), 10);
        assert!(r.get(0x1000).is_none());
        assert!(r.get(0x1000 + MAX_OBJECTS as u32 + 9).is_some());
        // Garbage never registers anything.
        assert!(!feed(&mut r, &[0x03, 0x00], 1, &cat));
        assert!(!feed(&mut r, &[0x14, 0x00], 1, &cat));
    }

    #[test]
    fn only_the_most_recently_ended_objects_are_kept() {
        let cat = ShipCatalog::stock();
        let mut r = ObjectRegistry::new();
        let extra = 40;
        let n = (MAX_ENDED + extra) as u32;
        // Ship after ship dies and respawns at a later id of its slot; most die as in
        // stock play (exploding, no 0x14), some are destroyed.
        let id = |k: u32| slot_base((k % 3) as u8) + (k / 3) * 34;
        for k in 0..n {
            assert!(feed(
                &mut r,
                &ship(id(k), (k % 3) as u8, 3, "P"),
                2 * k as u64,
                &cat
            ));
            let end = if k % 4 == 0 {
                destroy(id(k))
            } else {
                exploding(id(k))
            };
            assert!(feed(&mut r, &end, 2 * k as u64 + 1, &cat));
        }
        check_invariants(&r);
        assert_eq!(r.len(), MAX_ENDED);
        assert_eq!(
            (r.forgotten(), r.forgotten_ships()),
            (extra as u64, extra as u64)
        );
        assert_eq!(r.evicted(), 0);
        for k in 0..extra as u32 {
            assert!(r.get(id(k)).is_none(), "ship {k} forgotten");
        }
        let oldest_kept = r.get(id(extra as u32)).expect("ship ended 256th-last kept");
        assert_eq!(
            oldest_kept.destroyed_frame.or(oldest_kept.exploded_frame),
            Some(2 * extra as u64 + 1)
        );
        // A late message about the last ship still names it and its subsystems.
        let last = id(n - 1);
        let slot = (n - 1) % 3;
        let name = format!("Galaxy (P, slot {slot})");
        assert_eq!(r.describe(last), Some(name.clone()));
        assert_eq!(r.describe(last + 5), Some(format!("subsystem of {name}")));
        // A second ending (a DestroyObject after the explosion, or a repeat) records
        // its frame but forgets nothing.
        assert!(feed(&mut r, &destroy(last), 10_000, &cat));
        assert!(!feed(&mut r, &destroy(last), 10_001, &cat));
        assert!(!feed(&mut r, &exploding(last), 10_002, &cat));
        check_invariants(&r);
        assert_eq!(r.forgotten(), extra as u64);
        // Live objects are not limited by the ended bound.
        for k in 0..(MAX_ENDED as u32 + 10) {
            feed(&mut r, &torpedo(slot_base(5) + k, 5), 20_000, &cat);
        }
        check_invariants(&r);
        assert_eq!(r.len(), 2 * MAX_ENDED + 10);
        assert_eq!(r.forgotten(), extra as u64);
    }

    #[test]
    fn an_id_created_again_leaves_the_ended_queue() {
        let cat = ShipCatalog::stock();
        let mut r = ObjectRegistry::new();
        let a = slot_base(1);
        feed(&mut r, &ship(a, 1, 1, "A"), 1, &cat);
        feed(&mut r, &destroy(a), 2, &cat);
        assert!(feed(&mut r, &ship(a, 1, 3, "A"), 3, &cat));
        // Enough other deaths to fill the queue: the new, live `a` must not be the
        // entry pushed out.
        for k in 0..MAX_ENDED as u32 {
            let id = slot_base(2) + k * 34;
            feed(&mut r, &ship(id, 2, 1, "B"), 10 + k as u64, &cat);
            feed(&mut r, &exploding(id), 10 + k as u64, &cat);
        }
        check_invariants(&r);
        let o = r.get(a).expect("recreated ship kept");
        assert!(o.is_alive());
        assert_eq!((o.class_name.as_str(), o.created_frame), ("Galaxy", 3));
        assert_eq!(r.forgotten(), 0);
        // An exploded wreck is not created again by a replayed creation.
        feed(&mut r, &exploding(a), 4999, &cat);
        assert!(!feed(&mut r, &ship(a, 1, 3, "A"), 5000, &cat));
        assert_eq!(r.get(a).map(|o| o.creations_seen), Some(2));
        // A destroyed ship's id reused by a torpedo leaves the ship index.
        feed(&mut r, &destroy(a), 5000, &cat);
        feed(&mut r, &torpedo(a, 1), 5001, &cat);
        check_invariants(&r);
        assert_eq!(r.describe(a + 1).as_deref(), Some("slot 1 object"));
    }

    #[test]
    fn a_full_table_evicts_the_earliest_ended_then_the_oldest_live() {
        let cat = ShipCatalog::stock();
        let mut r = ObjectRegistry::new();
        let id = |i: usize| 0x1000 + i as u32;
        for i in 0..MAX_OBJECTS {
            feed(&mut r, &ship(id(i), 0, 1, "x"), i as u64, &cat);
        }
        assert!(feed(&mut r, &destroy(id(10)), 9000, &cat));
        assert!(feed(&mut r, &exploding(id(5)), 9000, &cat));
        assert!(feed(&mut r, &destroy(id(20)), 9000, &cat));
        let mut next = MAX_OBJECTS;
        let mut create = |r: &mut ObjectRegistry| {
            feed(r, &ship(id(next), 0, 1, "x"), 9001, &cat);
            next += 1;
        };
        create(&mut r);
        assert_eq!(r.evicted(), 1);
        assert!(r.get(id(10)).is_none());
        assert!(r.get(id(5)).is_some() && r.get(id(20)).is_some());
        assert!(r.get(id(0)).is_some());
        create(&mut r);
        create(&mut r);
        assert!(r.get(id(5)).is_none() && r.get(id(20)).is_none());
        assert!(r.get(id(0)).is_some());
        // No ended object left: the oldest live one goes.
        create(&mut r);
        assert!(r.get(id(0)).is_none());
        assert!(r.get(id(1)).is_some());
        assert_eq!((r.evicted(), r.forgotten()), (4, 0));
        assert_eq!(r.len(), MAX_OBJECTS);
        check_invariants(&r);
    }

    #[test]
    fn owner_ship_index_agrees_with_a_scan() {
        let cat = ShipCatalog::stock();
        let mut r = ObjectRegistry::new();
        // A fixed linear congruential sequence: deterministic, no dependency.
        let mut state: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = move |m: u32| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((state >> 33) % u64::from(m)) as u32
        };
        let mut created = Vec::new();
        let mut checked = 0;
        for step in 0..4000u64 {
            let slot = next(4) as u8;
            // Offsets overlap, so ids are reused across kinds and lives.
            let id = slot_base(slot) + next(600);
            match next(10) {
                0..=3 => {
                    feed(&mut r, &ship(id, slot, 1 + next(8) as u8, "p"), step, &cat);
                    created.push(id);
                }
                4 => {
                    feed(&mut r, &torpedo(id, slot), step, &cat);
                    created.push(id);
                }
                k => {
                    if !created.is_empty() {
                        let victim = created[next(created.len() as u32) as usize];
                        let end = if k < 8 {
                            exploding(victim)
                        } else {
                            destroy(victim)
                        };
                        feed(&mut r, &end, step, &cat);
                    }
                }
            }
            if step % 100 == 99 {
                check_invariants(&r);
                let ids: Vec<u32> = r.iter().map(|o| o.object_id).collect();
                let probes = ids
                    .iter()
                    .flat_map(|&i| [i.wrapping_sub(1), i.wrapping_add(1)])
                    .chain((0..200).map(|_| slot_base(next(5) as u8) + next(700)))
                    .chain([0, SLOT_BASE - 1, SLOT_BASE, u32::MAX]);
                for q in probes {
                    assert_eq!(
                        r.owner_ship(q).map(|o| o.object_id),
                        owner_by_scan(&r, q),
                        "owner of 0x{q:08X} at step {step}"
                    );
                    checked += 1;
                }
            }
        }
        // The run did reach the ended bound.
        assert!(r.forgotten() > 0);
        assert!(checked > 10_000);
    }
}
