//! NetworkUpdate: the header and body of one rebuilt sub-update (seed 002, "Updates").
//!
//! Offsets in fields and warnings are relative to the update data (type byte = 0).
//! Update layouts for RigidBody and ChildShape depend on the controller type, which
//! only Create updates carry; the caller supplies what it learned ([`super::state`])
//! or the layout is inferred from the body size and marked so.
//!
//! Why this file is long: about 840 lines; it is the seed's table of update bodies, one decoder per
//! object type sharing one header reader and one field recorder; each decoder is short.

use super::bits::BitReader;
use super::names::{axis_name, object_type_name, pascal, update_type_name, MAX_OBJECT_TYPE};
use crate::diag::{Code, Warning};
use crate::game::field::{Field, Span, Value};
use crate::game::reader::DecodeResult;
use crate::game::registry::FieldId;

/// A field of this decoder: Scrap Mechanic has no field registry, so each carries
/// [`FieldId::OTHER_GAME`] and is known by its name alone.
pub fn sm_field(
    name: impl Into<std::borrow::Cow<'static, str>>,
    value: Value,
    span: Span,
) -> Field {
    Field::keyed(FieldId::OTHER_GAME, name, value, span)
}

pub const CREATE: u8 = 1;
pub const P: u8 = 2;
pub const UPDATE: u8 = 3;
pub const REMOVE: u8 = 5;

pub const RIGID_BODY: u8 = 0;
pub const CHILD_SHAPE: u8 = 1;
pub const JOINT: u8 = 2;
pub const CONTAINER: u8 = 4;
pub const HARVESTABLE: u8 = 5;
pub const CHARACTER: u8 = 6;
pub const LIFT: u8 = 7;
pub const TOOL: u8 = 8;

/// Where the controller type that chose a layout came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayoutSource {
    /// The Create update's own header.
    Header,
    /// A Create seen earlier (`--stateful`).
    Learned,
    /// Guessed from the body size.
    Inferred,
}

impl LayoutSource {
    pub fn as_str(self) -> &'static str {
        match self {
            LayoutSource::Header => "header",
            LayoutSource::Learned => "learned",
            LayoutSource::Inferred => "inferred",
        }
    }
}

/// Controller type used to pick a body layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    pub controller_type: u8,
    pub source: LayoutSource,
}

/// One decoded NetworkUpdate.
#[derive(Debug, Clone, PartialEq)]
pub struct Update {
    pub update_type: u8,
    pub object_type: u8,
    /// Present in Create updates only.
    pub controller_type: Option<u8>,
    pub object_id: Option<u32>,
    /// True when type, object type and id were all read and valid.
    pub header_ok: bool,
    /// Controller type that chose the body layout, for layouts that need one.
    pub layout: Option<Layout>,
    pub fields: Vec<Field>,
    /// Names of the top-level fields whose layout seed 002 does not give (read with
    /// the layout of the third-party PacketLogger parser instead), so readers can tell
    /// specified facts from borrowed ones.
    pub undocumented: Vec<&'static str>,
    pub warnings: Vec<Warning>,
}

impl Update {
    /// `update_container`, or `None` when the header names no known update.
    pub fn name(&self) -> Option<String> {
        let u = update_type_name(self.update_type)?;
        let o = object_type_name(self.object_type)?;
        Some(format!("{u}_{o}"))
    }
    pub fn display_name(&self) -> String {
        match self.name() {
            Some(n) => pascal(&n),
            None => format!(
                "type {} / object type {}",
                self.update_type, self.object_type
            ),
        }
    }
}

/// Body size of the controller-dependent Update layouts, for inference.
fn inferred_controller(object_type: u8, body_len: usize) -> Option<u8> {
    match (object_type, body_len) {
        (RIGID_BODY, 5) => Some(1),
        (RIGID_BODY, 2) => Some(2),
        (CHILD_SHAPE, 22) => Some(31),
        (CHILD_SHAPE, 17) => Some(32),
        _ => None,
    }
}

fn expected_body_len(object_type: u8, controller: u8) -> Option<usize> {
    match (object_type, controller) {
        (RIGID_BODY, 1) => Some(5),
        (RIGID_BODY, 2) => Some(2),
        (CHILD_SHAPE, 31) => Some(22),
        (CHILD_SHAPE, 32) => Some(17),
        _ => None,
    }
}

/// Decode one update. `learned` is the controller type remembered for
/// `(object_type, id)` from an earlier Create, if the caller keeps state.
pub fn decode(data: &[u8], learned: &dyn Fn(u8, u32) -> Option<u8>) -> Update {
    let mut b = Body::new(data);
    let mut u = Update {
        update_type: 0,
        object_type: 0,
        controller_type: None,
        object_id: None,
        header_ok: false,
        layout: None,
        fields: Vec::new(),
        undocumented: Vec::new(),
        warnings: Vec::new(),
    };
    let Some(&first) = data.first() else {
        u.warnings.push(Warning::new(
            Code::UpdateEmpty,
            Some(0),
            "empty update: expected a type byte and a 4-byte object id",
        ));
        return u;
    };
    u.update_type = first >> 5;
    u.object_type = first & 0x1f;
    b.r.u8("type").ok();
    let type_ok = update_type_name(u.update_type).is_some();
    let object_ok = u.object_type <= MAX_OBJECT_TYPE;
    if !type_ok {
        u.warnings.push(Warning::new(
            Code::UpdateTypeUnknown,
            Some(0),
            format!(
                "update type {} (byte {first:#04x}) is not one of 1 create, 2 p, 3 update, 5 remove",
                u.update_type
            ),
        ));
    }
    if !object_ok {
        u.warnings.push(Warning::new(
            Code::ObjectTypeInvalid,
            Some(0),
            format!(
                "object type {} (byte {first:#04x}) is above {MAX_OBJECT_TYPE}",
                u.object_type
            ),
        ));
    }
    // The seed puts the controller byte after the type byte of every Create and the id
    // after that for every update type, so both are read even when a type is unknown;
    // only the body then has no layout.
    if u.update_type == CREATE {
        match b.r.u8("controller_type") {
            Ok(c) => u.controller_type = Some(c),
            Err(e) => return truncated(u, b, e.to_string()),
        }
    }
    match b.r.u32("object_id") {
        Ok(id) => u.object_id = Some(id),
        Err(e) => return truncated(u, b, e.to_string()),
    }
    if !(type_ok && object_ok) {
        b.rest("undecoded");
        u.fields = b.fields;
        return u;
    }
    u.header_ok = true;
    // A body that fails on its first field reports its bytes as undecoded, not the
    // header's, which decoded.
    b.mark = b.r.bit_pos();
    let id = u.object_id.unwrap_or(0);
    let body_len = data.len().saturating_sub(b.r.byte_pos());

    // Pick the controller type for layouts that need one.
    let needs_controller = matches!(
        (u.update_type, u.object_type),
        (CREATE, RIGID_BODY) | (UPDATE, RIGID_BODY) | (UPDATE, CHILD_SHAPE)
    );
    if needs_controller {
        u.layout = if let Some(c) = u.controller_type {
            Some(Layout {
                controller_type: c,
                source: LayoutSource::Header,
            })
        } else if let Some(c) = learned(u.object_type, id) {
            if let Some(want) = expected_body_len(u.object_type, c) {
                if want != body_len {
                    u.warnings.push(Warning::new(
                        Code::LayoutMismatch,
                        Some(b.r.byte_pos()),
                        format!(
                            "learned controller type {c} means a {want}-byte body, found {body_len}"
                        ),
                    ));
                }
            }
            Some(Layout {
                controller_type: c,
                source: LayoutSource::Learned,
            })
        } else {
            inferred_controller(u.object_type, body_len).map(|c| Layout {
                controller_type: c,
                source: LayoutSource::Inferred,
            })
        };
    }
    if u.update_type == P && u.object_type != JOINT {
        u.warnings.push(Warning::new(
            Code::PUpdateNotJoint,
            Some(0),
            "P updates are only documented for Joint objects; body left undecoded",
        ));
    }

    let body_at = b.r.byte_pos();
    let result = decode_body(&mut b, &u);
    if !seed_documents(u.update_type, u.object_type) {
        u.undocumented = b
            .fields
            .iter()
            .filter_map(|f| match &f.name {
                std::borrow::Cow::Borrowed(n) if *n != "undecoded" => Some(*n),
                _ => None,
            })
            .collect();
    }
    match result {
        Ok(Some(note)) => u
            .warnings
            .push(Warning::new(Code::NoLayout, Some(body_at), note)),
        Ok(None) => {}
        Err(e) => {
            u.warnings.push(Warning::new(
                Code::UpdateTruncated,
                Some(e.offset),
                format!("{} ({})", e, u.display_name()),
            ));
            // Bytes of a half-read field are reported with the rest, not lost.
            b.r.rewind(b.mark);
            b.rest("undecoded");
        }
    }
    finish(&mut u, b);
    u
}

/// Whether seed 002 gives the body layout of this update. Harvestable bodies follow the
/// PacketLogger parser of the SMInjector project, the only other decoder of this packet.
fn seed_documents(update_type: u8, object_type: u8) -> bool {
    !matches!(
        (update_type, object_type),
        (CREATE, HARVESTABLE) | (UPDATE, HARVESTABLE)
    )
}

fn truncated(mut u: Update, mut b: Body<'_>, msg: String) -> Update {
    u.warnings.push(Warning::new(
        Code::UpdateTruncated,
        Some(b.r.byte_pos()),
        msg,
    ));
    b.rest("undecoded");
    u.fields = b.fields;
    u
}

/// Padding bits and trailing bytes after the body.
fn finish(u: &mut Update, mut b: Body<'_>) {
    if !b.r.is_aligned() {
        let at = b.r.byte_pos();
        let pad = b.r.align();
        if pad != 0 {
            u.warnings.push(Warning::new(
                Code::PaddingNonzero,
                Some(at),
                format!("padding bits {pad:#b} are not zero"),
            ));
        }
    }
    let rest = b.r.rest_bytes();
    if !rest.is_empty() {
        let at = b.r.byte_end();
        u.warnings.push(Warning::new(
            Code::TrailingBytes,
            Some(at),
            format!("{} byte(s) after the {} body", rest.len(), u.display_name()),
        ));
        b.rest("undecoded");
    }
    u.warnings.append(&mut b.warnings);
    u.fields = b.fields;
}

/// Decode the body after the header. `Ok(Some(note))`: no layout known, bytes kept raw.
fn decode_body(b: &mut Body<'_>, u: &Update) -> DecodeResult<Option<String>> {
    let ctrl = u.layout.map(|l| l.controller_type);
    match (u.update_type, u.object_type) {
        (CREATE, RIGID_BODY) => match ctrl {
            Some(1) => {
                b.u16("world_id")?;
                b.quat_wzyx("rotation")?;
                b.vec3f("position", false)?;
            }
            Some(2) => {
                b.u16("world_id")?;
                b.transform("transform")?;
            }
            _ => return Ok(Some(no_layout(b, u, ctrl))),
        },
        (UPDATE, RIGID_BODY) => match ctrl {
            Some(1) => {
                b.u8("unknown")?;
                b.i32("unknown_2")?;
            }
            Some(2) => {
                b.u8("unknown")?;
                b.u8("revision")?;
            }
            _ => return Ok(Some(no_layout(b, u, ctrl))),
        },
        (UPDATE, CHILD_SHAPE) => {
            if !matches!(ctrl, Some(31) | Some(32)) {
                return Ok(Some(no_layout(b, u, ctrl)));
            }
            b.u16("uuid_index")?;
            b.id("body_id")?;
            b.vec3_int("local_position", 16)?;
            b.color("color", ColorOrder::Abgr)?;
            if ctrl == Some(31) {
                b.vec3_int("bounds", 16)?;
            } else {
                b.axis("z_axis")?;
                b.axis("x_axis")?;
            }
        }
        (UPDATE, JOINT) => {
            b.u16("uuid_index")?;
            b.id("shape_a_id")?;
            b.id("shape_b_id")?;
            b.vec3_int("position_a", 32)?;
            b.vec3_int("position_b", 32)?;
            let start = b.r.bit_pos();
            let mut axes = Vec::with_capacity(4);
            for name in ["z_axis_b", "z_axis_a", "x_axis_b", "x_axis_a"] {
                axes.push(b.axis_field(name)?);
            }
            b.push("axis", Value::Group(axes), start);
            b.color("color", ColorOrder::Abgr)?;
        }
        (CREATE, CONTAINER) => {
            let n = b.u16("slot_count")?;
            b.u16("stack_size")?;
            b.list("items", n as usize, |b| {
                Ok(vec![
                    b.sub_uuid("uuid", true)?,
                    b.sub_hex32("tool_instance_id")?,
                    b.sub_u16("quantity")?,
                ])
            })?;
            let n = b.u16("filter_count")?;
            b.uuid_list("filters", n as usize)?;
        }
        (UPDATE, CONTAINER) => {
            let n = b.u16("slot_change_count")?;
            b.list("slot_changes", n as usize, |b| {
                Ok(vec![
                    b.sub_uuid("uuid", true)?,
                    b.sub_hex32("tool_instance_id")?,
                    b.sub_u16("quantity")?,
                    b.sub_u16("slot")?,
                ])
            })?;
            if b.flag("has_filters")? {
                let n = b.u16("filter_count")?;
                b.padding()?;
                b.uuid_list("filters", n as usize)?;
            }
        }
        // Not in the seed: the PacketLogger parser's layouts (see `seed_documents`).
        (CREATE, HARVESTABLE) => {
            b.u16("world_id")?;
            b.u16("uuid_index")?;
            b.vec3f("position", false)?;
            b.quat_wzyx("rotation")?;
            // Half-precision floats whose meaning nobody has worked out.
            b.f16("unknown_1")?;
            b.f16("unknown_2")?;
        }
        (UPDATE, HARVESTABLE) => {
            b.color("color", ColorOrder::Rgba)?;
            // Optional: present when the body goes on, absent when it ends here. A body
            // ending inside the id is truncated, not "absent".
            if b.r.bits_left() > 0 {
                b.id("seated_character_id")?;
            }
        }
        (CREATE, CHARACTER) => {
            b.u64("steam_id")?;
            b.vec3f("position", true)?;
            b.u16("world_id")?;
            b.f32("yaw")?;
            b.f32("pitch")?;
            b.uuid("character_uuid", true)?;
        }
        (UPDATE, CHARACTER) => {
            let movement = b.flag("update_movement_states")?;
            let color = b.flag("update_color")?;
            let selected = b.flag("update_selected_item")?;
            let player = b.flag("update_is_player")?;
            if movement {
                let start = b.r.bit_pos();
                let mut f = Vec::with_capacity(6);
                for name in [
                    "is_downed",
                    "is_swimming",
                    "is_diving",
                    "unknown",
                    "is_climbing",
                    "is_tumbling",
                ] {
                    f.push(b.sub_flag(name)?);
                }
                b.push("movement_states", Value::Group(f), start);
            }
            if color {
                b.color("color", ColorOrder::Rgba)?;
            }
            if selected {
                let start = b.r.bit_pos();
                let f = vec![b.sub_uuid("uuid", true)?, b.sub_hex32("instance_id")?];
                b.push("selected_item", Value::Group(f), start);
            }
            if player {
                let start = b.r.bit_pos();
                let f = vec![b.sub_flag("is_player")?, b.sub_u32("player_or_unit_id")?];
                b.push("is_player", Value::Group(f), start);
            }
        }
        (CREATE, LIFT) => {
            b.u64("steam_id")?;
            b.u16("world_id")?;
            b.vec3_int("position", 32)?;
            b.i32("level")?;
        }
        (UPDATE, LIFT) => {
            b.i32("level")?;
        }
        (CREATE, TOOL) => {
            b.uuid("uuid", true)?;
        }
        (UPDATE, TOOL) => {
            b.hex32("player_id")?;
        }
        // Documented as carrying nothing more.
        (CREATE, CHILD_SHAPE) | (CREATE, JOINT) | (P, JOINT) => {}
        // A Remove names its object and carries nothing more, whatever the object type:
        // the seed lists no body for any of them, so a byte after the id is a trailing
        // byte (reported by `finish`) for Controller and types 9–14 as for the rest.
        (REMOVE, _) => {}
        // Create and Update of object types without a layout (and P on anything but
        // Joint): the body is unknown, so all of it is kept raw and nothing can be said
        // to lie after it.
        _ => {
            b.rest("undecoded");
        }
    }
    Ok(None)
}

fn no_layout(b: &mut Body<'_>, u: &Update, ctrl: Option<u8>) -> String {
    b.rest("undecoded");
    match ctrl {
        Some(c) => format!(
            "{}: no documented layout for controller type {c}",
            u.display_name()
        ),
        None => format!(
            "{}: controller type unknown and the body size does not identify it (use --stateful)",
            u.display_name()
        ),
    }
}

#[derive(Clone, Copy)]
enum ColorOrder {
    /// `0xAABBGGRR` (child shapes, joints).
    Abgr,
    /// `0xRRGGBBAA` (characters).
    Rgba,
}

/// Field recorder over the bit reader; spans cover every byte a field touched.
struct Body<'a> {
    r: BitReader<'a>,
    fields: Vec<Field>,
    warnings: Vec<Warning>,
    /// Bit position just after the last whole top-level field.
    mark: usize,
}

impl<'a> Body<'a> {
    fn new(data: &'a [u8]) -> Body<'a> {
        Body {
            r: BitReader::new(data),
            fields: Vec::new(),
            warnings: Vec::new(),
            mark: 0,
        }
    }
    fn field(&self, name: &'static str, value: Value, start_bit: usize) -> Field {
        sm_field(name, value, Span::new(start_bit / 8, self.r.byte_end()))
    }
    fn push(&mut self, name: &'static str, value: Value, start_bit: usize) {
        let f = self.field(name, value, start_bit);
        self.fields.push(f);
        self.mark = self.r.bit_pos();
    }
    fn rest(&mut self, name: &'static str) {
        let start = self.r.byte_end();
        let rest = self.r.rest_bytes();
        if !rest.is_empty() {
            let end = start + rest.len();
            self.fields.push(sm_field(
                name,
                Value::Bytes(rest.to_vec()),
                Span::new(start, end),
            ));
            // Consume everything so nothing is reported twice.
            self.r.skip_to_end();
        }
    }

    fn sub(
        &mut self,
        name: &'static str,
        read: impl FnOnce(&mut BitReader<'a>) -> DecodeResult<Value>,
    ) -> DecodeResult<Field> {
        let start = self.r.bit_pos();
        let v = read(&mut self.r)?;
        Ok(self.field(name, v, start))
    }
    fn sub_u16(&mut self, name: &'static str) -> DecodeResult<Field> {
        self.sub(name, |r| Ok(Value::Uint(r.u16(name)? as u64)))
    }
    fn sub_u32(&mut self, name: &'static str) -> DecodeResult<Field> {
        self.sub(name, |r| Ok(Value::Uint(r.u32(name)? as u64)))
    }
    fn sub_hex32(&mut self, name: &'static str) -> DecodeResult<Field> {
        self.sub(name, |r| Ok(Value::Hex(r.u32(name)? as u64)))
    }
    fn sub_flag(&mut self, name: &'static str) -> DecodeResult<Field> {
        self.sub(name, |r| Ok(Value::Bool(r.flag(name)?)))
    }
    fn sub_uuid(&mut self, name: &'static str, little_endian: bool) -> DecodeResult<Field> {
        self.sub(name, |r| {
            let b = r.bytes16(name)?;
            Ok(Value::Text(uuid_string(b, little_endian)))
        })
    }
    fn sub_int(&mut self, name: &'static str, bits: usize) -> DecodeResult<Field> {
        self.sub(name, |r| {
            let v = r.bits(bits, name)?;
            let v = if bits == 16 {
                v as u16 as i16 as i64
            } else {
                v as u32 as i32 as i64
            };
            Ok(Value::Int(v))
        })
    }
    fn sub_f32(&mut self, name: &'static str) -> DecodeResult<Field> {
        self.sub(name, |r| Ok(Value::Float(r.f32(name)? as f64)))
    }

    fn keep(&mut self, f: Field) {
        self.fields.push(f);
        self.mark = self.r.bit_pos();
    }
    fn u8(&mut self, name: &'static str) -> DecodeResult<u8> {
        let s = self.r.bit_pos();
        let v = self.r.u8(name)?;
        self.push(name, Value::Uint(v as u64), s);
        Ok(v)
    }
    fn u16(&mut self, name: &'static str) -> DecodeResult<u16> {
        let s = self.r.bit_pos();
        let v = self.r.u16(name)?;
        self.push(name, Value::Uint(v as u64), s);
        Ok(v)
    }
    fn u64(&mut self, name: &'static str) -> DecodeResult<u64> {
        let s = self.r.bit_pos();
        let v = self.r.u64(name)?;
        self.push(name, Value::Uint(v), s);
        Ok(v)
    }
    fn i32(&mut self, name: &'static str) -> DecodeResult<i32> {
        let s = self.r.bit_pos();
        let v = self.r.u32(name)? as i32;
        self.push(name, Value::Int(v as i64), s);
        Ok(v)
    }
    fn hex32(&mut self, name: &'static str) -> DecodeResult<()> {
        let f = self.sub_hex32(name)?;
        self.keep(f);
        Ok(())
    }
    fn id(&mut self, name: &'static str) -> DecodeResult<()> {
        let s = self.r.bit_pos();
        let v = self.r.u32(name)?;
        self.push(name, Value::ObjectId(v), s);
        Ok(())
    }
    fn f32(&mut self, name: &'static str) -> DecodeResult<()> {
        let f = self.sub_f32(name)?;
        self.keep(f);
        Ok(())
    }
    fn f16(&mut self, name: &'static str) -> DecodeResult<()> {
        let f = self.sub(name, |r| Ok(Value::Float(r.f16(name)? as f64)))?;
        self.keep(f);
        Ok(())
    }
    fn flag(&mut self, name: &'static str) -> DecodeResult<bool> {
        let s = self.r.bit_pos();
        let v = self.r.flag(name)?;
        self.push(name, Value::Bool(v), s);
        Ok(v)
    }
    fn uuid(&mut self, name: &'static str, little_endian: bool) -> DecodeResult<()> {
        let f = self.sub_uuid(name, little_endian)?;
        self.keep(f);
        Ok(())
    }
    /// Padding bits before byte-aligned data; non-zero padding is reported.
    fn padding(&mut self) -> DecodeResult<()> {
        let at = self.r.byte_pos();
        let n = (8 - self.r.bit_pos() % 8) % 8;
        let v = self.r.bits(n, "padding")?;
        if v != 0 {
            self.warnings.push(Warning::new(
                Code::PaddingNonzero,
                Some(at),
                format!("{n} padding bit(s) are {v:#b}, expected zero"),
            ));
        }
        Ok(())
    }
    /// Three floats, shown as x, y, z whatever the wire order.
    fn vec3f(&mut self, name: &'static str, zyx: bool) -> DecodeResult<()> {
        let s = self.r.bit_pos();
        let g = self.vec3f_group(zyx)?;
        self.push(name, Value::Group(g), s);
        Ok(())
    }
    fn vec3f_group(&mut self, zyx: bool) -> DecodeResult<Vec<Field>> {
        let a = self.sub_f32(if zyx { "z" } else { "x" })?;
        let b = self.sub_f32("y")?;
        let c = self.sub_f32(if zyx { "x" } else { "z" })?;
        Ok(if zyx { vec![c, b, a] } else { vec![a, b, c] })
    }
    fn vec3_int(&mut self, name: &'static str, bits: usize) -> DecodeResult<()> {
        let s = self.r.bit_pos();
        let g = vec![
            self.sub_int("x", bits)?,
            self.sub_int("y", bits)?,
            self.sub_int("z", bits)?,
        ];
        self.push(name, Value::Group(g), s);
        Ok(())
    }
    /// A quaternion shown as x, y, z, w whatever the wire order.
    fn quat_group(&mut self, wzyx: bool) -> DecodeResult<Vec<Field>> {
        if wzyx {
            let w = self.sub_f32("w")?;
            let z = self.sub_f32("z")?;
            let y = self.sub_f32("y")?;
            let x = self.sub_f32("x")?;
            Ok(vec![x, y, z, w])
        } else {
            Ok(vec![
                self.sub_f32("x")?,
                self.sub_f32("y")?,
                self.sub_f32("z")?,
                self.sub_f32("w")?,
            ])
        }
    }
    fn quat_wzyx(&mut self, name: &'static str) -> DecodeResult<()> {
        let s = self.r.bit_pos();
        let q = self.quat_group(true)?;
        self.push(name, Value::Group(q), s);
        Ok(())
    }
    fn transform(&mut self, name: &'static str) -> DecodeResult<()> {
        let s = self.r.bit_pos();
        let mut t = Vec::with_capacity(4);
        for (part, quat) in [
            ("rotation", true),
            ("position", false),
            ("velocity", false),
            ("angular_velocity", false),
        ] {
            let ps = self.r.bit_pos();
            let g = if quat {
                self.quat_group(false)?
            } else {
                self.vec3f_group(false)?
            };
            t.push(self.field(part, Value::Group(g), ps));
        }
        self.push(name, Value::Group(t), s);
        Ok(())
    }
    fn color(&mut self, name: &'static str, order: ColorOrder) -> DecodeResult<()> {
        let s = self.r.bit_pos();
        let v = self.r.u32(name)?;
        let [b0, b1, b2, b3] = v.to_be_bytes();
        let (r, g, b, a) = match order {
            ColorOrder::Abgr => (b3, b2, b1, b0),
            ColorOrder::Rgba => (b0, b1, b2, b3),
        };
        let span = |f: &Self| Span::new(s / 8, f.r.byte_end());
        let sp = span(self);
        let fields = vec![
            sm_field(
                "rgba",
                Value::Text(format!("#{r:02x}{g:02x}{b:02x}{a:02x}")),
                sp,
            ),
            sm_field("r", Value::Uint(r as u64), sp),
            sm_field("g", Value::Uint(g as u64), sp),
            sm_field("b", Value::Uint(b as u64), sp),
            sm_field("a", Value::Uint(a as u64), sp),
            sm_field("raw", Value::Hex(v as u64), sp),
        ];
        self.push(name, Value::Group(fields), s);
        Ok(())
    }
    /// A 4-bit Local Rotation axis: wire value − 4.
    fn axis_field(&mut self, name: &'static str) -> DecodeResult<Field> {
        let s = self.r.bit_pos();
        let raw = self.r.bits(4, name)? as u8;
        let value = raw as i8 - 4;
        let sp = Span::new(s / 8, self.r.byte_end());
        let label = match axis_name(value) {
            Some(a) => a,
            None => {
                self.warnings.push(Warning::new(
                    Code::AxisInvalid,
                    Some(s / 8),
                    format!("{name}: wire value {raw} gives axis {value}, expected ±1..3"),
                ));
                "invalid"
            }
        };
        let g = vec![
            sm_field("axis", Value::Text(label.into()), sp),
            sm_field("value", Value::Int(value as i64), sp),
            sm_field("raw", Value::Uint(raw as u64), sp),
        ];
        Ok(sm_field(name, Value::Group(g), sp))
    }
    fn axis(&mut self, name: &'static str) -> DecodeResult<()> {
        let f = self.axis_field(name)?;
        self.keep(f);
        Ok(())
    }
    /// `count` items read by `item`; the count is not trusted for allocation.
    fn list(
        &mut self,
        name: &'static str,
        count: usize,
        mut item: impl FnMut(&mut Self) -> DecodeResult<Vec<Field>>,
    ) -> DecodeResult<()> {
        let s = self.r.bit_pos();
        let mut items = Vec::new();
        for _ in 0..count {
            let at = self.r.bit_pos();
            match item(self) {
                Ok(f) => items.push(Value::Group(f)),
                Err(e) => {
                    self.r.rewind(at);
                    self.push(name, Value::List(items), s);
                    return Err(e);
                }
            }
        }
        self.push(name, Value::List(items), s);
        Ok(())
    }
    fn uuid_list(&mut self, name: &'static str, count: usize) -> DecodeResult<()> {
        let s = self.r.bit_pos();
        let mut items = Vec::new();
        for _ in 0..count {
            // bytes16 checks the length before reading, so no rewind is needed.
            match self.r.bytes16(name) {
                Ok(b) => items.push(Value::Text(uuid_string(b, false))),
                Err(e) => {
                    self.push(name, Value::List(items), s);
                    return Err(e);
                }
            }
        }
        self.push(name, Value::List(items), s);
        Ok(())
    }
}

/// Canonical `8-4-4-4-12` form of a u128 sent little-endian (`le u128`) or big-endian.
pub fn uuid_string(bytes: [u8; 16], little_endian: bool) -> String {
    let v = if little_endian {
        u128::from_le_bytes(bytes)
    } else {
        u128::from_be_bytes(bytes)
    };
    let h = format!("{v:032x}");
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}
