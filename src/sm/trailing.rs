//! Bytes after a body: one rule for every update of every object type.
//!
//! Each test builds every update of one object type whose body has a known extent (a
//! laid-out body, or a Remove, which carries nothing), decodes it clean, then decodes
//! it again with one byte more. The longer copy must decode to the same fields plus an
//! `undecoded` field holding that byte, with one `trailing_bytes` warning at the byte's
//! offset. Updates whose body has no layout keep the whole body raw, extra byte
//! included, and say nothing about trailing bytes: no end of body is known.

use super::update::{self, Update, CREATE, P, REMOVE, UPDATE};
use crate::diag::Code;
use crate::game::field::Value;

const EXTRA: u8 = 0xee;

/// The header of an update: type byte, the controller byte of a Create, the object id.
fn header(update_type: u8, object_type: u8, controller: u8) -> Vec<u8> {
    let mut v = vec![update_type << 5 | object_type];
    if update_type == CREATE {
        v.push(controller);
    }
    v.extend_from_slice(&0x0102_0304u32.to_be_bytes());
    v
}

fn update_of(update_type: u8, object_type: u8, controller: u8, body: &[u8]) -> Vec<u8> {
    let mut v = header(update_type, object_type, controller);
    v.extend_from_slice(body);
    v
}

fn decode_with(data: &[u8], learned: Option<u8>) -> Update {
    update::decode(data, &|_, _| learned)
}

/// `data` decodes without a warning; with [`EXTRA`] after it, to the same fields plus
/// the extra byte, reported once as trailing at its offset.
fn extra_byte_is_trailing(what: &str, data: &[u8], learned: Option<u8>) {
    let clean = decode_with(data, learned);
    assert!(clean.header_ok, "{what}: {clean:?}");
    assert!(clean.warnings.is_empty(), "{what}: {:?}", clean.warnings);
    assert!(
        clean.fields.iter().all(|f| f.name != "undecoded"),
        "{what}: {:?}",
        clean.fields
    );
    let mut long = data.to_vec();
    long.push(EXTRA);
    let u = decode_with(&long, learned);
    let trailing: Vec<_> = u
        .warnings
        .iter()
        .filter(|w| w.code == Code::TrailingBytes)
        .collect();
    assert_eq!(trailing.len(), 1, "{what}: {:?}", u.warnings);
    assert_eq!(trailing[0].offset, Some(data.len()), "{what}");
    assert_eq!(
        trailing[0].message,
        format!("1 byte(s) after the {} body", clean.display_name()),
        "{what}"
    );
    // A learned layout also notes that the body is longer than the layout; nothing
    // else may change.
    assert!(
        u.warnings
            .iter()
            .all(|w| matches!(w.code, Code::TrailingBytes | Code::LayoutMismatch)),
        "{what}: {:?}",
        u.warnings
    );
    let (last, before) = u.fields.split_last().expect("fields");
    assert_eq!(before, clean.fields.as_slice(), "{what}");
    assert_eq!(last.name, "undecoded", "{what}");
    assert_eq!(last.value, Value::Bytes(vec![EXTRA]), "{what}");
    assert_eq!(
        (last.span.start as usize, last.span.len),
        (data.len(), 1),
        "{what}"
    );
}

/// A body without a layout is kept raw whole, the extra byte with it.
fn extra_byte_is_raw_body(what: &str, data: &[u8]) {
    let mut long = data.to_vec();
    long.push(EXTRA);
    let u = decode_with(&long, None);
    assert!(u.header_ok, "{what}: {u:?}");
    assert!(
        u.warnings.iter().all(|w| w.code != Code::TrailingBytes),
        "{what}: {:?}",
        u.warnings
    );
    let raw = u.fields.iter().find(|f| f.name == "undecoded").expect(what);
    assert_eq!(
        raw.value,
        Value::Bytes(long[data.len() - 2..].to_vec()),
        "{what}"
    );
}

fn remove(object_type: u8) {
    extra_byte_is_trailing("remove", &update_of(REMOVE, object_type, 0, &[]), None);
}

/// Types without any documented body: Remove is the one update with a known extent.
fn undocumented(object_type: u8) {
    remove(object_type);
    for (what, t) in [("create", CREATE), ("update", UPDATE)] {
        extra_byte_is_raw_body(what, &update_of(t, object_type, 0, &[1, 2]));
    }
    // P on anything but a Joint is flagged and kept raw.
    let u = decode_with(&update_of(P, object_type, 0, &[1, 2, EXTRA]), None);
    assert_eq!(u.warnings[0].code, Code::PUpdateNotJoint);
    assert!(u.warnings.iter().all(|w| w.code != Code::TrailingBytes));
}

fn f32s(n: usize) -> Vec<u8> {
    vec![0; 4 * n]
}

#[test]
fn rigid_body() {
    let mut static_create = vec![0, 1];
    static_create.extend(f32s(4 + 3));
    extra_byte_is_trailing(
        "create static",
        &update_of(CREATE, 0, 1, &static_create),
        None,
    );
    let mut dynamic_create = vec![0, 1];
    dynamic_create.extend(f32s(4 + 3 + 3 + 3));
    extra_byte_is_trailing(
        "create dynamic",
        &update_of(CREATE, 0, 2, &dynamic_create),
        None,
    );
    // The Update layouts need the controller type; the size no longer identifies it
    // once a byte is added, so it is learned from a Create as `--stateful` does.
    extra_byte_is_trailing(
        "update static",
        &update_of(UPDATE, 0, 0, &[1, 0, 0, 0, 2]),
        Some(1),
    );
    extra_byte_is_trailing("update dynamic", &update_of(UPDATE, 0, 0, &[1, 2]), Some(2));
    remove(0);
}

#[test]
fn child_shape() {
    extra_byte_is_trailing("create", &update_of(CREATE, 1, 31, &[]), None);
    let mut block = vec![0, 1, 0, 0, 0, 9];
    block.extend([0; 6]); // local position
    block.extend([0xff, 0, 0, 0xff]); // colour
    block.extend([0, 1, 0, 1, 0, 1]); // bounds
    extra_byte_is_trailing("update block", &update_of(UPDATE, 1, 0, &block), Some(31));
    let mut part = vec![0, 1, 0, 0, 0, 9];
    part.extend([0; 6]);
    part.extend([0xff, 0, 0, 0xff]);
    part.push(0x75); // z axis +3, x axis +1
    extra_byte_is_trailing("update part", &update_of(UPDATE, 1, 0, &part), Some(32));
    remove(1);
}

#[test]
fn joint() {
    extra_byte_is_trailing("create", &update_of(CREATE, 2, 2, &[]), None);
    extra_byte_is_trailing("p", &update_of(P, 2, 0, &[]), None);
    let mut body = vec![0, 1, 0, 0, 0, 7, 0, 0, 0, 8];
    body.extend([0; 24]); // two positions
    body.extend([0x57, 0x65]); // four valid axes
    body.extend([0xff, 0, 0, 0xff]);
    extra_byte_is_trailing("update", &update_of(UPDATE, 2, 0, &body), None);
    remove(2);
}

#[test]
fn controller() {
    undocumented(3);
}

#[test]
fn container() {
    // No slots, stack size 1, no filters.
    extra_byte_is_trailing(
        "create",
        &update_of(CREATE, 4, 0, &[0, 0, 0, 1, 0, 0]),
        None,
    );
    // No slot change, no filters: 17 bits, then zero padding.
    extra_byte_is_trailing("update", &update_of(UPDATE, 4, 0, &[0, 0, 0]), None);
    remove(4);
}

#[test]
fn harvestable() {
    let mut create = vec![0, 1, 0, 2];
    create.extend(f32s(3 + 4));
    create.extend([0x3c, 0, 0x3c, 0]); // two half floats, 1.0 each
    extra_byte_is_trailing("create", &update_of(CREATE, 5, 0, &create), None);
    // With the optional seated character id: a byte after the colour alone would be
    // a cut-off id, not a trailing byte.
    extra_byte_is_trailing(
        "update",
        &update_of(UPDATE, 5, 0, &[1, 2, 3, 4, 0, 0, 0, 5]),
        None,
    );
    remove(5);
}

#[test]
fn character() {
    let mut create = vec![0; 8]; // Steam id
    create.extend(f32s(3));
    create.extend([0, 1]);
    create.extend(f32s(2));
    create.extend([0; 16]);
    extra_byte_is_trailing("create", &update_of(CREATE, 6, 0, &create), None);
    // Four clear flags, then zero padding.
    extra_byte_is_trailing("update", &update_of(UPDATE, 6, 0, &[0]), None);
    remove(6);
}

#[test]
fn lift() {
    let mut create = vec![0; 8];
    create.extend([0, 1]);
    create.extend([0; 12]);
    create.extend([0, 0, 0, 3]);
    extra_byte_is_trailing("create", &update_of(CREATE, 7, 0, &create), None);
    extra_byte_is_trailing("update", &update_of(UPDATE, 7, 0, &[0, 0, 0, 3]), None);
    remove(7);
}

#[test]
fn tool() {
    extra_byte_is_trailing("create", &update_of(CREATE, 8, 0, &[7; 16]), None);
    extra_byte_is_trailing("update", &update_of(UPDATE, 8, 0, &[0, 0, 0, 9]), None);
    remove(8);
}

#[test]
fn portal() {
    undocumented(9);
}

#[test]
fn path_node() {
    undocumented(10);
}

#[test]
fn unit() {
    undocumented(11);
}

#[test]
fn voxel_terrain_cell() {
    undocumented(12);
}

#[test]
fn scriptable_object() {
    undocumented(13);
}

#[test]
fn shape_group() {
    undocumented(14);
}

#[test]
fn every_valid_object_type_is_covered() {
    // The tests above, one per object type 0..=14; a 15th type would be invalid.
    use super::names::{object_type_name, MAX_OBJECT_TYPE};
    assert_eq!(MAX_OBJECT_TYPE, 14);
    assert!(object_type_name(MAX_OBJECT_TYPE).is_some());
    assert!(object_type_name(MAX_OBJECT_TYPE + 1).is_none());
}
