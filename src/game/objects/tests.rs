//! Tests of the object registry: lifetimes, conflicts and bounds, fed with messages
//! decoded through the dispatcher (`opcodes::decode`). They sit in a file of their own
//! because the dispatcher's context holds the registry: inline, they would make the
//! registry's file import the dispatcher.

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

/// The conflict's warning points at the object id of the creation (ObjCreateTeam:
/// opcode, owner, team, class id, then the id at byte 7) and names both incarnations,
/// each owner by its player where the session knows one.
#[test]
fn a_conflict_is_warned_at_the_object_id_of_its_creation() {
    let cat = ShipCatalog::stock();
    let mut r = ObjectRegistry::new();
    let id = slot_base(0);
    let first = ship(id, 0, 1, "Cady2");
    feed(&mut r, &first, 99, &cat);
    assert!(r.take_conflict_warning(&first, &|_| None).is_none());
    let second = ship(id, 1, 1, "Kirk");
    feed(&mut r, &second, 100, &cat);
    let player = |slot: u8| (slot == 1).then(|| "James".to_string());
    let w = r.take_conflict_warning(&second, &player).expect("conflict");
    assert_eq!((w.code, w.offset), (Code::ObjectIdConflict, Some(7)));
    assert_eq!(
        w.message,
        "object id 0x3FFFFFFF created as Akira (James, slot 1) while Akira (Cady2, slot 0) \
         (created in frame 99) still holds it; later messages are attributed to the new one"
    );
    assert!(r.take_conflict_warning(&second, &player).is_none());
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
