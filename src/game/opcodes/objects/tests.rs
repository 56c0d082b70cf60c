//! Tests of object creation (0x02, 0x03): typed round trips, and whole messages decoded
//! through the dispatcher (`opcodes::decode`) as the pipeline decodes them. They sit in
//! a file of their own because the dispatcher imports this family: inline, they would
//! make the family's file import its dispatcher.

use super::*;
use crate::game::field::Value;
use crate::game::opcodes::test_util::*;
use crate::game::walk::TreeBuilder;

/// a_single_client frame 30: the client's Akira, stock prefix.
pub const AKIRA: &str = "03000208800000ffffff3f010000b042000084c2000092c2f54a6f3ffe8c963e84e34b3e38784e3c00000000000000054361647932064d756c746931ffff64ffffffffffffff64ffffffffffff64ffffffffffffffffff646001ffffff64ffffffffffffff6400ff64ffffff6401ff";
/// b2_valentines_replay frame 101: a Galaxy (54-byte blob).
const GALAXY: &str = "03020408800000ffff034003000060410000d8c100009041b5ce0f3f39dce3b343c215bf43c215bf000000000000000f5846533031204461756e746c657373064d756c746931ffffffffff64ffffffffffffff64ffffffffffffff646000ffffffffffffffffff6401ffffffff64ffffff64ffffffffff6401ffff64";

fn parse(bytes: &[u8]) -> (ObjCreate, Vec<Warning>) {
    let mut tree = TreeBuilder::new();
    let mut f = FieldReader::after_opcode(bytes, &mut tree);
    let mut w = Vec::new();
    let c = ObjCreate::parse(bytes[0], &mut f, &mut w, &ShipCatalog::stock()).expect("parse");
    assert!(f.r.is_empty(), "left: {}", f.r.remaining());
    (c, w)
}

#[test]
fn akira_capture_decodes_to_the_last_byte() {
    let bytes = hex(AKIRA);
    let m = decode_plain(&bytes);
    assert_clean(&m);
    assert_eq!(field(&m, "object_id"), &Value::ObjectId(0x3FFF_FFFF));
    assert_eq!(field(&m, "species_name"), &Value::Text("Akira".into()));
    assert_eq!(field(&m, "player_name"), &Value::Text("Cady2".into()));
    assert_eq!(field(&m, "set_name"), &Value::Text("Multi1".into()));
    assert_eq!(field(&m, "position"), &Value::Vec3([88.0, -66.0, -73.0]));
    let (c, w) = parse(&bytes);
    assert!(w.is_empty());
    assert_eq!((c.owner_slot, c.team), (0, Some(2)));
    assert_eq!(c.prefix, ObjectPrefix::ClassId(CLASS_SHIP));
    let ship = c.ship().unwrap();
    match &ship.subsystems {
        SubsystemBlob::Decoded(r) => {
            assert_eq!(r.len(), 11);
            assert_eq!(
                r[5],
                SubsystemState::Powered {
                    condition: 0xFF,
                    children: Children::from_elem(0xFF, 8),
                    power: 100,
                    weapon: Some((false, 1)),
                }
            );
        }
        b => panic!("{b:?}"),
    }
    assert_eq!(c.emit(), bytes);
}

#[test]
fn galaxy_capture_round_trips() {
    let bytes = hex(GALAXY);
    assert_clean(&decode_plain(&bytes));
    let (c, _) = parse(&bytes);
    assert_eq!(c.species(), Some(3));
    assert_eq!(c.ship().unwrap().player_name, "XFS01 Dauntless");
    assert_eq!(c.emit(), bytes);
}

// Constructed from the Akira capture: the two non-stock layouts of variants.md.
#[test]
fn non_stock_prefixes_are_recognised_and_flagged() {
    let stock = hex(AKIRA);
    let mut synthetic = stock.clone();
    synthetic[3..7].copy_from_slice(&[1, 0, 0, 0]);
    let mut absent = stock[..3].to_vec();
    absent.extend_from_slice(&stock[7..]);
    for (bytes, prefix) in [
        (synthetic, ObjectPrefix::Synthetic),
        (absent, ObjectPrefix::Absent),
    ] {
        let m = decode_plain(&bytes);
        assert!(has_warning(&m, Code::NonStock), "{prefix:?}");
        assert!(!has_warning(&m, Code::DecodeError));
        assert_eq!(field(&m, "object_id"), &Value::ObjectId(0x3FFF_FFFF));
        assert_eq!(field(&m, "player_name"), &Value::Text("Cady2".into()));
        let (c, _) = parse(&bytes);
        assert_eq!(c.prefix, prefix);
        assert_eq!(c.emit(), bytes);
    }
}

// Constructed: 0x02 for a world object without a layout, a torpedo, an unknown class.
#[test]
fn other_objects_constructed() {
    let asteroid = ObjCreate {
        opcode: 0x02,
        owner_slot: 0,
        team: None,
        prefix: ObjectPrefix::ClassId(CLASS_SHIP),
        object_id: 0x0000_0100,
        body: ObjectBody::Ship(ShipBody {
            species: 31,
            position: [1.0, 2.0, 3.0],
            orientation: [1.0, 0.0, 0.0, 0.0],
            velocity: ([0; 3], 0.0),
            player_name: String::new(),
            set_name: "Multi1".into(),
            subsystems: SubsystemBlob::Raw(vec![0xFF, 0xFF]),
        }),
    };
    let bytes = asteroid.emit();
    assert_eq!(&bytes[..11], &hex("0200 08800000 00010000 1f"));
    let (c, w) = parse(&bytes);
    assert_eq!(c, asteroid);
    assert!(w.iter().any(|w| w.code == Code::NoLayout));

    let torpedo = ObjCreate {
        opcode: 0x02,
        owner_slot: 1,
        team: None,
        prefix: ObjectPrefix::ClassId(CLASS_TORPEDO),
        object_id: 0x4004_0010,
        body: ObjectBody::Torpedo {
            torpedo_type: 2,
            rest: vec![1, 2, 3],
        },
    };
    assert_eq!(torpedo.emit(), hex("0201 09800000 10000440 02 010203"));
    assert_eq!(parse(&torpedo.emit()).0, torpedo);

    let m = decode_plain(&hex("0200 77770000 01000000 aa"));
    assert!(has_warning(&m, Code::UnknownClass));
    assert_eq!(field(&m, "object_body"), &Value::Bytes(vec![0xaa]));
}

// The creation blob's records carry the class's StateUpdate index, key and name,
// so one path names one entry: checked against the Akira's stock layout.
#[test]
fn creation_subsystems_are_a_keyed_list_like_state_update_records() {
    use crate::game::path::FieldPath;
    let m = decode_plain(&hex(AKIRA));
    let class = ShipCatalog::stock().class(1).unwrap().clone();
    let Value::List(records) = field(&m, "subsystems") else {
        panic!("subsystems is not a list: {m:?}");
    };
    assert_eq!(records.len(), class.subsystems.len());
    for (k, entry) in class.subsystems.iter().enumerate() {
        let get = |leaf: &str| {
            let path: FieldPath = format!("subsystems[{}].{leaf}", entry.key).parse().unwrap();
            path.resolve(&m.fields)
                .into_iter()
                .map(|v| v.into_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(get("index"), vec![Value::Uint(k as u64)]);
        assert_eq!(get("name"), vec![Value::Text(entry.name.clone())]);
        assert_eq!(get("kind"), vec![Value::Text(entry.kind.clone())]);
        assert_eq!(get("condition"), vec![Value::Uint(255)]);
        if entry.format != crate::game::ships::RecordFormat::Shield {
            // Always a list, with one value per child of the layout.
            match &get("children")[..] {
                [Value::List(c)] => assert_eq!(c.len(), entry.children.len()),
                other => panic!("{}: children {other:?}", entry.key),
            }
        }
    }
}

#[test]
fn unknown_species_is_a_decode_error_with_fields_kept() {
    let mut bytes = hex(AKIRA);
    bytes[11] = 99; // species byte
    let m = decode_plain(&bytes);
    assert!(has_warning(&m, Code::DecodeError));
    assert_eq!(field(&m, "player_name"), &Value::Text("Cady2".into()));
    assert!(matches!(field(&m, "undecoded"), Value::Bytes(b) if b.len() == 51));
}

#[test]
fn constructed_galaxy_round_trip_keeps_bit_placement() {
    let catalog = ShipCatalog::stock();
    let c = constructed_ship(3, &creation_layout(catalog.class(3).unwrap()));
    let bytes = c.emit();
    // 3 envelope + 8 prefix/id + 36 fixed + 5 + 7 strings + 54 blob bytes.
    assert_eq!(bytes.len(), 3 + 8 + 36 + 5 + 7 + 54);
    assert_eq!(parse(&bytes).0, c);
    assert_clean(&decode_plain(&bytes));
}

// Constructed: a modded class from a layout file lays out its creation blob too.
#[test]
fn layout_file_lays_out_a_modded_creation_blob() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/example-ships.json");
    let modded = ShipCatalog::load_file(path).unwrap();
    let c = constructed_ship(41, &creation_layout(modded.class(41).unwrap()));
    let bytes = c.emit();
    let registry = crate::game::objects::ObjectRegistry::new();
    let stock = crate::game::opcodes::decode(
        &bytes,
        &crate::game::opcodes::DecodeContext::new(&registry, &ShipCatalog::stock()),
    );
    assert!(
        has_warning(&stock, Code::NoLayout),
        "stock cannot split it: {stock:?}"
    );
    let m = crate::game::opcodes::decode(
        &bytes,
        &crate::game::opcodes::DecodeContext::new(&registry, &modded),
    );
    assert_clean(&m);
    assert!(m.fields.iter().any(|f| f.name == "subsystems"));
}

/// A ship creation with fresh subsystem states for `layout`.
fn constructed_ship(
    species: u8,
    layout: &[crate::game::opcodes::ship_layouts::Entry<'_>],
) -> ObjCreate {
    let records: Vec<SubsystemState> = layout
        .iter()
        .map(|e| match e.format {
            EntryFormat::Base => SubsystemState::Base {
                condition: 0xFF,
                children: Children::from_elem(0xFF, e.children as usize),
            },
            EntryFormat::Power => SubsystemState::Power {
                condition: 0xFF,
                children: Children::new(),
                main_battery: 0xFF,
                backup_battery: 0x80,
            },
            EntryFormat::Powered => SubsystemState::Powered {
                condition: 0xFE,
                children: Children::from_elem(0xFF, e.children as usize),
                power: -100,
                weapon: e.weapon.then_some((true, 1)),
            },
            EntryFormat::Shield => SubsystemState::Shield {
                condition: 0xFF,
                power: 100,
                facings: [1, 2, 3, 4, 5, 6],
            },
        })
        .collect();
    ObjCreate {
        opcode: 0x03,
        owner_slot: 1,
        team: Some(2),
        prefix: ObjectPrefix::ClassId(CLASS_SHIP),
        object_id: 0x4003_FFFF,
        body: ObjectBody::Ship(ShipBody {
            species,
            position: [0.0; 3],
            orientation: [1.0, 0.0, 0.0, 0.0],
            velocity: ([0, 0x7F, 0], 5.5),
            player_name: "Bot1".into(),
            set_name: "Multi1".into(),
            subsystems: SubsystemBlob::Decoded(records),
        }),
    }
}
