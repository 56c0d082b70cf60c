//! Object registry: which network object id is which ship, per capture session.
//!
//! Fed with every game message of a session (relayed copies included) in capture order:
//! ObjCreate / ObjCreateTeam (0x02/0x03) register objects, DestroyObject (0x14) and the
//! object-exploding event (0x06, class 0x8129) mark their end. Subsystem ids are not
//! registered by the game; they are attributed through the object-id scheme (player
//! slot N owns 0x40000 ids from 0x3FFFFFFF + N·0x40000) to the slot's latest ship below
//! them. One registry per capture session: ids are reused across sessions.

use super::opcodes::events::{CLASS_OBJECT_EXPLODING, EVENT_OBJECT_EXPLODING};
use super::opcodes::objects::{parse_creation, ObjectPrefix, CLASS_TORPEDO};
use super::opcodes::ship_layouts::species_name;
use super::ships::ShipCatalog;
// Fx: internal tables keyed by small fixed-size values; see Cargo.toml.
use rustc_hash::FxHashMap as HashMap;

/// Most objects kept per session. A stock game has a few hundred at most (ships,
/// respawns, world objects); beyond this the oldest — destroyed ones first — are dropped.
pub const MAX_OBJECTS: usize = 4096;
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
    /// Insertion order, for eviction.
    seq: u64,
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
        if self.player_name.is_empty() {
            format!("{} (slot {})", self.class_name, self.owner_slot)
        } else {
            format!(
                "{} ({}, slot {})",
                self.class_name, self.player_name, self.owner_slot
            )
        }
    }
}

/// The objects of one capture session.
#[derive(Debug, Clone, Default)]
pub struct ObjectRegistry {
    objects: HashMap<u32, ObjectInfo>,
    next_seq: u64,
    evicted: u64,
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
    pub fn observe(&mut self, msg: &[u8], frame: u64, catalog: &ShipCatalog) -> bool {
        match msg.first() {
            Some(0x02) | Some(0x03) => self.observe_creation(msg, frame, catalog),
            Some(0x14) => match read_u32(msg, 1) {
                Some(id) => self.mark(id, frame, |o| &mut o.destroyed_frame),
                None => false,
            },
            Some(0x06) => {
                let exploding = read_u32(msg, 1) == Some(CLASS_OBJECT_EXPLODING)
                    && read_u32(msg, 5) == Some(EVENT_OBJECT_EXPLODING);
                match read_u32(msg, 13) {
                    Some(id) if exploding => self.mark(id, frame, |o| &mut o.exploded_frame),
                    _ => false,
                }
            }
            _ => false,
        }
    }

    fn mark(
        &mut self,
        id: u32,
        frame: u64,
        slot: impl Fn(&mut ObjectInfo) -> &mut Option<u64>,
    ) -> bool {
        match self.objects.get_mut(&id) {
            Some(o) => {
                let s = slot(o);
                if s.is_none() {
                    *s = Some(frame);
                    true
                } else {
                    false
                }
            }
            None => false,
        }
    }

    fn observe_creation(&mut self, msg: &[u8], frame: u64, catalog: &ShipCatalog) -> bool {
        let Some(c) = parse_creation(msg) else {
            return false;
        };
        let id = c.head.object_id;
        if let Some(existing) = self.objects.get_mut(&id) {
            // A live object with this id: a relayed copy or a replay to a late joiner
            // (the host ignores creations of existing ids too).
            if existing.is_alive() {
                existing.creations_seen = existing.creations_seen.saturating_add(1);
                return false;
            }
        }
        let (kind, species, class_name, player_name, set_name) = match c.ship {
            Some((sp, fixed)) => {
                let name = catalog
                    .class_name(sp as u16)
                    .map(str::to_string)
                    .or_else(|| species_name(sp).map(str::to_string))
                    .unwrap_or_else(|| format!("species {sp}"));
                (
                    ObjectKind::Ship,
                    Some(sp),
                    name,
                    fixed.player_name,
                    fixed.set_name,
                )
            }
            None => {
                let (kind, name) = match c.head.class {
                    CLASS_TORPEDO => (ObjectKind::Torpedo, "torpedo"),
                    _ => (ObjectKind::Other, "object"),
                };
                (kind, None, name.to_string(), String::new(), String::new())
            }
        };
        if !self.objects.contains_key(&id) && self.objects.len() >= MAX_OBJECTS {
            self.evict_one();
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        self.objects.insert(
            id,
            ObjectInfo {
                object_id: id,
                kind,
                species,
                class_name,
                owner_slot: c.head.owner_slot,
                team: c.head.team,
                player_name,
                set_name,
                prefix: c.head.prefix,
                created_frame: frame,
                creations_seen: 1,
                exploded_frame: None,
                destroyed_frame: None,
                seq,
            },
        );
        true
    }

    /// Drop the oldest destroyed object, or else the oldest one.
    fn evict_one(&mut self) {
        let victim = self
            .objects
            .values()
            .min_by_key(|o| (o.is_alive(), o.seq))
            .map(|o| o.object_id);
        if let Some(id) = victim {
            self.objects.remove(&id);
            self.evicted += 1;
        }
    }

    /// The ship an id belongs to: the object itself, or for a subsystem id the latest
    /// ship in the same player slot whose id lies below it.
    pub fn owner_ship(&self, id: u32) -> Option<&ObjectInfo> {
        if let Some(o) = self.objects.get(&id) {
            return Some(o);
        }
        let slot = slot_of(id)?;
        self.objects
            .values()
            .filter(|o| o.kind == ObjectKind::Ship && o.object_id < id)
            .filter(|o| slot_of(o.object_id) == Some(slot))
            .max_by_key(|o| o.object_id)
    }

    /// Readable description: "Galaxy (Bot1, slot 1)", "subsystem of Galaxy (Bot1,
    /// slot 1)", "slot 2 object" for an unattributed id in a player range.
    pub fn describe(&self, id: u32) -> Option<String> {
        if let Some(o) = self.objects.get(&id) {
            return Some(o.describe());
        }
        if let Some(ship) = self.owner_ship(id) {
            return Some(format!("subsystem of {}", ship.describe()));
        }
        slot_of(id).map(|s| format!("slot {s} object"))
    }
}

fn read_u32(msg: &[u8], at: usize) -> Option<u32> {
    let b = msg.get(at..at + 4)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::opcodes::objects::{
        ObjCreate, ObjectBody, ShipBody, SubsystemBlob, CLASS_SHIP,
    };
    use crate::game::opcodes::test_util::hex;

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
        assert!(r.observe(&akira, 30, &cat));
        // The host relays the same bytes to other clients: not a new object.
        assert!(!r.observe(&akira, 31, &cat));
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
        assert!(r.observe(&boom, 40, &cat));
        assert!(r.observe(&hex("14ffffff3f"), 41, &cat));
        let o = r.get(0x3FFF_FFFF).unwrap();
        assert_eq!((o.exploded_frame, o.destroyed_frame), (Some(40), Some(41)));

        // A respawn takes a later id of the same slot; subsystem ids above it follow it.
        let galaxy = ship(0x4000_0021, 0, 3, "Cady2");
        assert!(r.observe(&galaxy, 50, &cat));
        assert_eq!(
            r.describe(0x4000_0030).as_deref(),
            Some("subsystem of Galaxy (Cady2, slot 0)")
        );
        assert_eq!(
            r.describe(0x4000_0005).as_deref(),
            Some("subsystem of Akira (Cady2, slot 0)")
        );
        // Other slot.
        r.observe(&ship(0x4003_FFFF, 1, 5, "Bot1"), 60, &cat);
        assert_eq!(
            r.describe(0x4004_0001).as_deref(),
            Some("subsystem of Sovereign (Bot1, slot 1)")
        );
        // A destroyed id created again is a new object.
        assert!(r.observe(&akira, 70, &cat));
        assert_eq!(r.get(0x3FFF_FFFF).unwrap().created_frame, 70);
    }

    #[test]
    fn non_stock_layouts_are_registered_and_flagged() {
        let cat = ShipCatalog::stock();
        let mut r = ObjectRegistry::new();
        let stock = hex(AKIRA);
        let mut absent = stock[..3].to_vec();
        absent.extend_from_slice(&stock[7..]);
        assert!(r.observe(&absent, 1, &cat));
        let o = r.get(0x3FFF_FFFF).unwrap();
        assert!(o.non_stock());
        assert_eq!(o.class_name, "Akira");
    }

    #[test]
    fn registry_is_bounded() {
        let cat = ShipCatalog::stock();
        let mut r = ObjectRegistry::new();
        for i in 0..(MAX_OBJECTS as u32 + 10) {
            r.observe(&ship(0x1000 + i, 0, 1, "x"), i as u64, &cat);
        }
        assert_eq!(r.len(), MAX_OBJECTS);
        assert_eq!(r.evicted(), 10);
        assert!(r.get(0x1000).is_none());
        assert!(r.get(0x1000 + MAX_OBJECTS as u32 + 9).is_some());
        // Garbage never registers anything.
        assert!(!r.observe(&[0x03, 0x00], 1, &cat));
        assert!(!r.observe(&[0x14, 0x00], 1, &cat));
    }
}
