//! Tests of the dispatcher: opcode names, one clean vector per named opcode, typed
//! bodies of damaged messages, and truncations that keep every byte.

use super::test_util::*;
use super::*;
use crate::diag::Code;

#[test]
fn names_and_lookup_agree() {
    for (op, name) in NAMES {
        assert_eq!(opcode_name(*op), *name);
        assert_eq!(opcode_from_name(&name.to_lowercase()), Some(*op));
    }
    assert_eq!(opcode_name(0x05), "Unknown");
    assert_eq!(opcode_from_name("0x1c"), Some(0x1C));
    assert_eq!(opcode_from_name("28"), Some(28));
    assert_eq!(opcode_from_name("nonsense"), None);
}

#[test]
fn unknown_opcode_is_raw_bytes_and_count() {
    let m = decode_plain(&[0xCD, 1, 2, 3]);
    assert_eq!(m.name, "Unknown");
    assert_eq!(field(&m, "byte_count"), &Value::Uint(3));
    assert_eq!(field(&m, "raw"), &Value::Bytes(vec![1, 2, 3]));
    assert!(m.warnings.is_empty());
}

// One clean vector per named opcode ("c" = captured in the openbc sessions, "k" =
// constructed here); the family modules check the typed round trips.
#[test]
fn every_named_opcode_has_a_clean_vector() {
    let vectors = [
        ("c", "000c022b3e610025004d756c7469706c617965722e457069736f64652e4d697373696f6e312e4d697373696f6e31"),
        ("c", "01"),
        ("k", "0201 09800000 10000440 02 010203"),
        ("c", "03000208800000ffffff3f010000b042000084c2000092c2f54a6f3ffe8c963e84e34b3e38784e3c00000000000000054361647932064d756c746931ffff64ffffffffffffff64ffffffffffff64ffffffffffffffffff646001ffffff64ffffffffffffff6400ff64ffffff6401ff"),
        ("k", "0402"),
        ("c", "0601010000df008000000000401a000040"),
        ("c", "0728810000d800800000000000050000400000000000000000"),
        ("k", "0801010000da00800000000000050000 40"),
        ("k", "090c010000dc00800000000000050000 40ffff0340"),
        ("k", "0a04010000 6c008000 00000000 05000040 01"),
        ("k", "0b01010000df008000 00000000 05000040"),
        ("k", "0c02000000 00000000 00000000 00000000"),
        ("k", "0d0c010000580080000000000005000040ffff0340"),
        ("k", "0e02000000e2008000 00000000 05000040"),
        ("k", "0f02000000e4008000 00000000 05000040"),
        ("k", "102a810000ec0080000000000005000040 064d756c746932 0000803f 000000c0 00006040 00001041"),
        ("k", "110c010000760080000000000005000040 07000040"),
        ("c", "1205010000e0008000000000000500004000"),
        ("c", "13"),
        ("c", "14ffffff3f"),
        ("c", "15248100005000800000000000ffff034001277711b89d472544"),
        ("k", "1621"),
        ("c", "1766080000f100800000000000ffffff3f02"),
        ("c", "1805004361647932"),
        ("k", "1910000040020100 7f00 ffff0340 7f000040"),
        ("c", "1affff03400100007f02ffff0740"),
        ("k", "1b05010000fe008000ffffff3f0500004003"),
        ("k", "1d01000000"),
        ("k", "1effff0340"),
        ("k", "1fffffff3f060000004d756c74693100"),
        ("c", "20000800736372697074732f07004170702e70796320"),
        ("c", "210215d331b8010067800f8d8fa1a71d01a48d1ac50100c49167e4ef55c14700"),
        ("k", "22 0700 4170702e707963"),
        ("k", "23 0700 4170702e707963"),
        ("k", "25 0500 612e707963 010203"),
        ("k", "27"),
        ("c", "28"),
        ("c", "29ffff0740214365df54aa52e360"),
        ("c", "2a20"),
        ("c", "2c0100000002006767"),
        ("k", "2d030000000200676f"),
        ("c", "350801ffff"),
        ("c", "3600000000020000000100000000"),
        ("c", "3702000000000000000000000000000000"),
        ("k", "3802000000"),
        ("k", "39"),
        ("k", "3f 02000000 01000000 00000000 0a000000 01"),
        ("k", "40 01 03000000 1e000000"),
        ("k", "41 04000000 00"),
    ];
    let mut covered = std::collections::BTreeSet::new();
    for (_, s) in vectors {
        let bytes = hex(s);
        let m = decode_plain(&bytes);
        assert_ne!(m.name, "Unknown", "{s}");
        assert_clean(&m);
        // The typed body is the whole message: emitting it gives the bytes back.
        let body = m
            .body
            .as_ref()
            .unwrap_or_else(|| panic!("no typed body: {s}"));
        assert_eq!(body.emit(), bytes, "{s}");
        covered.insert(bytes[0]);
    }
    for (op, name) in NAMES {
        assert!(*op == 0x1C || covered.contains(op), "no vector for {name}");
    }
    assert_eq!(emit_raw(0x24, &[1, 2]), vec![0x24, 1, 2]);
}

#[test]
fn unknown_opcodes_and_damaged_creations_keep_their_bytes_typed() {
    let m = decode_plain(&[0xCD, 1, 2, 3]);
    assert_eq!(
        m.body,
        Some(Body::Unknown {
            opcode: 0xCD,
            body: vec![1, 2, 3]
        })
    );
    // A ship creation cut inside its subsystem blob: still the player's ship,
    // and the typed value still emits every byte.
    let akira = hex("03000208800000ffffff3f010000b042000084c2000092c2f54a6f3ffe8c963e84e34b3e38784e3c00000000000000054361647932064d756c746931ffff64ffffffffffffff64ffffffffffff64ffffffffffffffffff646001ffffff64ffffffffffffff6400ff64ffffff6401ff");
    for cut in [60, 80, akira.len() - 1] {
        let m = decode_plain(&akira[..cut]);
        assert!(has_warning(&m, Code::DecodeError), "cut {cut}");
        let Some(Body::ObjCreate(c)) = &m.body else {
            panic!("cut {cut}: {:?}", m.body)
        };
        assert_eq!(c.object_id, 0x3FFF_FFFF);
        assert_eq!(c.ship().map(|s| s.player_name.as_str()), Some("Cady2"));
        assert_eq!(c.emit(), &akira[..cut]);
    }
    // An exploding event whose tail is cut still names the ship.
    let boom = hex("06298100004e00800000000000ffffff3f0000000000001841");
    let m = decode_plain(&boom[..20]);
    assert!(has_warning(&m, Code::DecodeError));
    let body = m.body.as_ref().expect("typed event");
    assert_eq!(body.exploding_object(), Some(0x3FFF_FFFF));
    assert_eq!(body.emit(), &boom[..20]);
}

#[test]
fn empty_message_is_a_warning_not_a_panic() {
    let m = decode_plain(&[]);
    assert!(has_warning(&m, Code::DecodeError));
}

#[test]
fn state_update_goes_to_its_decoder() {
    let m = decode_plain(&hex("1cffffff3fcccc4c3e2000ffffff20ffffffffffff20"));
    assert_eq!(m.opcode, 0x1C);
    assert_eq!(m.name, "StateUpdate");
}

/// Decoding into a record's slot gives what a returned decode gives, whatever the
/// slot held: a counting StateUpdate (written in place), a short one, another opcode.
#[test]
fn decoding_into_a_slot_gives_the_returned_message() {
    let registry = ObjectRegistry::default();
    let catalog = ShipCatalog::stock();
    let ctx = DecodeContext::new(&registry, &catalog).with_trees(FieldTrees::Counts);
    let messages = [
        hex("1cffffff3fcccc4c3e2000ffffff20ffffffffffff20"),
        hex("1cffffff3fcccc4c3e00"),
        hex("1cffff"),
        hex("0728810000d800800000000000050000400000000000000000"),
    ];
    let mut slot = None;
    for msg in messages.iter().chain(messages.iter().rev()) {
        let want = decode_reusing(msg, &ctx, &mut UpdatePool::new());
        decode_into(msg, &ctx, &mut UpdatePool::new(), &mut slot);
        assert_eq!(slot.as_ref(), Some(&want), "{msg:02x?}");
    }
}

// Every opcode, every truncation: never a panic, always a located warning or a
// clean decode, and the bytes are all accounted for.
#[test]
fn truncations_never_panic_and_keep_every_byte() {
    let samples = [
        "000c022b3e610025004d756c7469706c617965722e457069736f64652e4d697373696f6e312e4d697373696f6e31",
        "03000208800000ffffff3f010000b042000084c2000092c2f54a6f3ffe8c963e84e34b3e38784e3c00000000000000054361647932064d756c746931ffff64ffffffffffffff64ffffffffffff64ffffffffffffffffff646001ffffff64ffffffffffffff6400ff64ffffff6401ff",
        "06298100004e00800000000000ffffff3f0000000000001841",
        "15248100005000800000000000ffff034001277711b89d472544",
        "210215d331b8010067800f8d8fa1a71d01a48d1ac50100c49167e4ef55c14700",
        "3600000000020000000100000000",
        "29ffff0740214365df54aa52e360",
    ];
    for s in samples {
        let full = hex(s);
        for cut in 1..full.len() {
            let m = decode_plain(&full[..cut]);
            let covered: u32 = m.fields.iter().map(|f| f.span.end()).max().unwrap_or(1);
            assert_eq!(covered as usize, cut, "{s} cut {cut}: {:?}", m.fields);
            assert!(m.warnings.iter().all(|w| w.offset.is_some()));
        }
    }
}
