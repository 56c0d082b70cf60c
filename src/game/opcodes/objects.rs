//! Object creation (`opcodes.md` §6): 0x02 ObjCreate and 0x03 ObjCreateTeam with the
//! serialized object, the ship body and its subsystem blob.
//!
//! Reimplementations write the serialized object in three ways (`variants.md`): with the
//! stock class-id prefix `08 80 00 00`, with a synthetic prefix `01 00 00 00`, or with no
//! prefix (object id first). The layout is recognised by structure and non-stock forms
//! are flagged.

use super::common::non_stock;
use super::ship_layouts::{creation_layout, species_name, EntryFormat, SPECIES_NAMES};
use crate::diag::{Code, Warning};
use crate::game::field::{Span, Value};
use crate::game::reader::{DecodeResult, FieldReader};
use crate::game::registry::field;
use crate::game::ships::ShipCatalog;
use crate::game::subsys::Children;
use crate::game::writer::Writer;

pub const CLASS_SHIP: u32 = 0x0000_8008;
pub const CLASS_TORPEDO: u32 = 0x0000_8009;
/// The prefix one reimplementation writes instead of the class id.
pub const SYNTHETIC_PREFIX: u32 = 0x0000_0001;

/// Size of the fixed part of a ship body: species, position, quaternion, velocity.
const SHIP_FIXED_LEN: usize = 1 + 12 + 16 + 7;

/// How the serialized object starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectPrefix {
    /// Stock: the class id (0x8008 ship, 0x8009 torpedo, or an undocumented class).
    ClassId(u32),
    /// Non-stock `01 00 00 00` in place of the class id.
    Synthetic,
    /// Non-stock: no prefix; the object id comes first.
    Absent,
}

impl ObjectPrefix {
    pub fn is_stock(&self) -> bool {
        matches!(self, ObjectPrefix::ClassId(_))
    }
}

/// One top-level subsystem record of a creation blob. Its child conditions are held
/// inline as in a StateUpdate's records ([`Children`]): a few bytes each, and a heap
/// allocation per record made a ship's creation cost a dozen of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SubsystemState {
    Base {
        condition: u8,
        children: Children,
    },
    Power {
        condition: u8,
        children: Children,
        main_battery: u8,
        backup_battery: u8,
    },
    Powered {
        condition: u8,
        children: Children,
        /// Requested power percent; negative = switched off.
        power: i8,
        /// Weapon systems only: a packed bit and a byte of unknown meaning.
        weapon: Option<(bool, u8)>,
    },
    Shield {
        condition: u8,
        power: i8,
        facings: [u8; 6],
    },
}

/// The subsystem blob of a ship body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SubsystemBlob {
    /// Split with the species' layout, one record per top-level subsystem.
    Decoded(Vec<SubsystemState>),
    /// No layout known for the species: kept as bytes.
    Raw(Vec<u8>),
    /// The layout ran out of bytes: the blob as it came (with a `decode_error`).
    Undecoded(Vec<u8>),
}

/// Body of a ship or station (class 0x8008).
#[derive(Debug, Clone, PartialEq)]
pub struct ShipBody {
    /// SpeciesToShip index.
    pub species: u8,
    pub position: [f32; 3],
    /// Quaternion w, x, y, z.
    pub orientation: [f32; 4],
    /// `cv4f`: direction bytes and f32 speed.
    pub velocity: ([u8; 3], f32),
    pub player_name: String,
    /// Star-system set the ship is in, e.g. `Multi1`.
    pub set_name: String,
    pub subsystems: SubsystemBlob,
}

/// The class-specific part of a serialized object.
#[derive(Debug, Clone, PartialEq)]
pub enum ObjectBody {
    Ship(ShipBody),
    /// Class 0x8009: a SpeciesToTorp byte, the rest undocumented.
    Torpedo {
        torpedo_type: u8,
        rest: Vec<u8>,
    },
    /// An undocumented class: bytes as they came.
    Raw(Vec<u8>),
    /// A documented class whose body ends early: bytes as they came (the message also
    /// carries a `decode_error`).
    Undecoded(Vec<u8>),
}

/// 0x02 ObjCreate / 0x03 ObjCreateTeam.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjCreate {
    pub opcode: u8,
    pub owner_slot: u8,
    /// 0x03 only.
    pub team: Option<u8>,
    pub prefix: ObjectPrefix,
    pub object_id: u32,
    pub body: ObjectBody,
}

impl ObjCreate {
    /// The class the object was serialized as: the class id after the envelope, or for
    /// a non-stock prefix the class its body was read as.
    pub fn class(&self) -> Option<u32> {
        match (&self.prefix, &self.body) {
            (ObjectPrefix::ClassId(c), _) => Some(*c),
            (_, ObjectBody::Ship(_)) => Some(CLASS_SHIP),
            (_, ObjectBody::Torpedo { .. }) => Some(CLASS_TORPEDO),
            _ => None,
        }
    }

    pub fn species(&self) -> Option<u8> {
        match &self.body {
            ObjectBody::Ship(s) => Some(s.species),
            _ => None,
        }
    }
    pub fn ship(&self) -> Option<&ShipBody> {
        match &self.body {
            ObjectBody::Ship(s) => Some(s),
            _ => None,
        }
    }

    pub fn parse(
        opcode: u8,
        f: &mut FieldReader,
        w: &mut Vec<Warning>,
        catalog: &ShipCatalog,
    ) -> DecodeResult<Self> {
        match Self::parse_keeping(opcode, f, w, catalog) {
            (Some(c), Ok(())) => Ok(c),
            (_, Err(e)) => Err(e),
            (None, Ok(())) => unreachable!("a parse without a value reports its error"),
        }
    }

    /// [`Self::parse`], but once the head is read a failure further on still gives the
    /// creation, with the bytes from the failing part on kept as they came
    /// ([`ObjectBody::Undecoded`], [`SubsystemBlob::Undecoded`]), next to the error: a
    /// ship with a damaged blob is still a ship of its player.
    pub fn parse_keeping(
        opcode: u8,
        f: &mut FieldReader,
        w: &mut Vec<Warning>,
        catalog: &ShipCatalog,
    ) -> (Option<Self>, DecodeResult<()>) {
        let head = match CreationHead::parse(opcode, f, w) {
            Ok(h) => h,
            Err(e) => return (None, Err(e)),
        };
        let rest_from =
            |f: &FieldReader, at: usize| f.r.buffer().get(at..).unwrap_or_default().to_vec();
        let body_at = f.r.pos();
        let (body, result) = match head.class {
            CLASS_SHIP => match ShipFixed::parse(f) {
                Ok((fixed, species)) => {
                    let blob_at = f.r.pos();
                    match parse_blob(species, catalog, f, w) {
                        Ok(blob) => (ObjectBody::Ship(fixed.with_blob(species, blob)), Ok(())),
                        Err(e) => {
                            let blob = SubsystemBlob::Undecoded(rest_from(f, blob_at));
                            (ObjectBody::Ship(fixed.with_blob(species, blob)), Err(e))
                        }
                    }
                }
                Err(e) => (ObjectBody::Undecoded(rest_from(f, body_at)), Err(e)),
            },
            CLASS_TORPEDO => match f.u8(field!("torpedo_type")) {
                Ok(torpedo_type) => {
                    let rest = f.rest(field!("torpedo_body_undocumented")).to_vec();
                    (ObjectBody::Torpedo { torpedo_type, rest }, Ok(()))
                }
                Err(e) => (ObjectBody::Undecoded(rest_from(f, body_at)), Err(e)),
            },
            other => {
                w.push(Warning::new(
                    Code::UnknownClass,
                    Some(head.at),
                    format!("object class {other:#010x} is not documented; body shown raw"),
                ));
                (
                    ObjectBody::Raw(f.rest(field!("object_body")).to_vec()),
                    Ok(()),
                )
            }
        };
        let c = ObjCreate {
            opcode,
            owner_slot: head.owner_slot,
            team: head.team,
            prefix: head.prefix,
            object_id: head.object_id,
            body,
        };
        (Some(c), result)
    }

    pub fn emit(&self) -> Vec<u8> {
        let mut w = Writer::with_opcode(self.opcode);
        w.u8(self.owner_slot);
        if self.opcode == 0x03 {
            w.u8(self.team.unwrap_or(0));
        }
        match self.prefix {
            ObjectPrefix::ClassId(c) => {
                w.u32(c);
            }
            ObjectPrefix::Synthetic => {
                w.u32(SYNTHETIC_PREFIX);
            }
            ObjectPrefix::Absent => {}
        }
        w.u32(self.object_id);
        match &self.body {
            ObjectBody::Ship(s) => s.emit(&mut w),
            ObjectBody::Torpedo { torpedo_type, rest } => {
                w.u8(*torpedo_type).bytes(rest);
            }
            ObjectBody::Raw(b) | ObjectBody::Undecoded(b) => {
                w.bytes(b);
            }
        }
        w.into_bytes()
    }
}

/// Envelope, prefix and object id of a creation message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CreationHead {
    pub owner_slot: u8,
    pub team: Option<u8>,
    pub prefix: ObjectPrefix,
    pub object_id: u32,
    /// Class of the body (0x8008 for the non-stock layouts, which carry ships).
    pub class: u32,
    /// Offset of the serialized object.
    at: usize,
}

impl CreationHead {
    fn parse(opcode: u8, f: &mut FieldReader, w: &mut Vec<Warning>) -> DecodeResult<Self> {
        let owner_slot = f.u8(field!("owner_slot"))?;
        let team = if opcode == 0x03 {
            Some(f.u8(field!("team"))?)
        } else {
            None
        };
        let at = f.r.pos();
        let buf = f.r.buffer();
        let prefix = match read_u32(buf, at) {
            Some(c @ (CLASS_SHIP | CLASS_TORPEDO)) => ObjectPrefix::ClassId(c),
            Some(SYNTHETIC_PREFIX) if ship_body_fits(buf, at + 8) => ObjectPrefix::Synthetic,
            Some(_) if ship_body_fits(buf, at + 4) => ObjectPrefix::Absent,
            Some(c) => ObjectPrefix::ClassId(c),
            None => return Err(f.r.error("class_id", "4 bytes")),
        };
        let class = match prefix {
            ObjectPrefix::ClassId(c) => {
                f.hex32(field!("class_id"))?;
                // The serialized object's class, opcodes.md §6.2.
                let name = match c {
                    CLASS_SHIP => Some("ship or station"),
                    CLASS_TORPEDO => Some("torpedo"),
                    _ => None,
                };
                if let Some(n) = name {
                    let span = f.last_span();
                    f.label(field!("class_name"), n, span);
                }
                c
            }
            ObjectPrefix::Synthetic => {
                f.hex32(field!("synthetic_prefix"))?;
                w.push(non_stock(
                    at,
                    "serialized object starts with 01 00 00 00 instead of the class id \
                     08 80 00 00",
                ));
                CLASS_SHIP
            }
            ObjectPrefix::Absent => {
                w.push(non_stock(
                    at,
                    "serialized object has no class-id prefix: object id first",
                ));
                CLASS_SHIP
            }
        };
        let object_id = f.object_id(field!("object_id"))?;
        Ok(CreationHead {
            owner_slot,
            team,
            prefix,
            object_id,
            class,
            at,
        })
    }
}

/// The fixed part and names of a ship body (everything before the subsystem blob).
#[derive(Debug, Clone, PartialEq)]
pub struct ShipFixed {
    pub position: [f32; 3],
    pub orientation: [f32; 4],
    pub velocity: ([u8; 3], f32),
    pub player_name: String,
    pub set_name: String,
}

impl ShipFixed {
    fn parse(f: &mut FieldReader) -> DecodeResult<(ShipFixed, u8)> {
        let species = f.u8(field!("species"))?;
        if let Some(n) = species_name(species) {
            let span = f.last_span();
            f.label(field!("species_name"), n, span);
        }
        let position = f.vec3_f32(field!("position"))?;
        let (first, start) = (f.mark(), f.r.pos());
        let orientation = [
            f.f32(field!("orientation.w"))?,
            f.f32(field!("orientation.x"))?,
            f.f32(field!("orientation.y"))?,
            f.f32(field!("orientation.z"))?,
        ];
        f.group_from(field!("orientation"), first, start);
        let velocity = f.cv4f_raw(field!("velocity"))?;
        let player_name = f.str8(field!("player_name"))?;
        let set_name = f.str8(field!("set_name"))?;
        Ok((
            ShipFixed {
                position,
                orientation,
                velocity,
                player_name,
                set_name,
            },
            species,
        ))
    }

    fn with_blob(self, species: u8, subsystems: SubsystemBlob) -> ShipBody {
        ShipBody {
            species,
            position: self.position,
            orientation: self.orientation,
            velocity: self.velocity,
            player_name: self.player_name,
            set_name: self.set_name,
            subsystems,
        }
    }
}

fn read_u32(buf: &[u8], at: usize) -> Option<u32> {
    let b = buf.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// Whether a ship body can start at `at`: a known species, the fixed part, and two
/// counted strings inside the message. Used to recognise prefix-less layouts.
fn ship_body_fits(buf: &[u8], at: usize) -> bool {
    let Some(&species) = buf.get(at) else {
        return false;
    };
    if species == 0 || species as usize >= SPECIES_NAMES.len() {
        return false;
    }
    let mut pos = at + SHIP_FIXED_LEN;
    for _ in 0..2 {
        let Some(&n) = buf.get(pos) else {
            return false;
        };
        pos += 1 + n as usize;
        if pos > buf.len() {
            return false;
        }
    }
    true
}

/// The subsystem blob of a ship of `species`, split with its layout when one is known.
fn parse_blob(
    species: u8,
    catalog: &ShipCatalog,
    f: &mut FieldReader,
    w: &mut Vec<Warning>,
) -> DecodeResult<SubsystemBlob> {
    let at = f.r.pos();
    match catalog.class(species as u16) {
        Some(class) => {
            let (first, start) = (f.mark(), f.r.pos());
            let layout = creation_layout(class);
            let mut records = Vec::with_capacity(layout.len());
            for (index, (entry, sub)) in layout.iter().zip(&class.subsystems).enumerate() {
                let (ef, es) = (f.mark(), f.r.pos());
                // The same index, key and name as the class's StateUpdate records, so
                // a path such as `subsystems[warp_core].condition` names one entry in
                // both messages and in both captures of a diff.
                if f.keeps_fields() {
                    let at = Span::new(es, es);
                    f.push_value(field!("subsystems.index"), Value::Uint(index as u64), at);
                    f.push_value(field!("subsystems.key"), Value::Text(sub.key.clone()), at);
                    f.push_value(field!("subsystems.name"), Value::Text(sub.name.clone()), at);
                    f.push_value(field!("subsystems.kind"), Value::Text(sub.kind.clone()), at);
                }
                records.push(parse_record(f, entry.format, entry.children, entry.weapon)?);
                f.group_from(field!("subsystems", "record"), ef, es);
            }
            f.list_from(field!("subsystems"), first, start);
            Ok(SubsystemBlob::Decoded(records))
        }
        None if species == 0 || species as usize >= SPECIES_NAMES.len() => Err(f.r.error(
            "species",
            format!(
                "a species id 1..{} (got {species}) to lay out the subsystem blob",
                SPECIES_NAMES.len() - 1
            ),
        )),
        None => {
            w.push(Warning::new(
                Code::NoLayout,
                Some(at),
                format!(
                    "no subsystem layout for species {species} ({}); blob shown raw",
                    species_name(species).unwrap_or("?")
                ),
            ));
            Ok(SubsystemBlob::Raw(
                f.rest(field!("subsystem_blob")).to_vec(),
            ))
        }
    }
}

impl ShipBody {
    pub fn emit(&self, w: &mut Writer) {
        w.u8(self.species)
            .f32(self.position[0])
            .f32(self.position[1])
            .f32(self.position[2]);
        for q in self.orientation {
            w.f32(q);
        }
        w.bytes(&self.velocity.0)
            .f32(self.velocity.1)
            .str8(&self.player_name)
            .str8(&self.set_name);
        match &self.subsystems {
            SubsystemBlob::Decoded(records) => {
                for r in records {
                    emit_record(w, r);
                }
            }
            SubsystemBlob::Raw(b) | SubsystemBlob::Undecoded(b) => {
                w.bytes(b);
            }
        }
    }
}

/// `n` condition bytes as one list field (always a list, however many children).
fn children(f: &mut FieldReader, n: u8) -> DecodeResult<Children> {
    let at = f.r.pos();
    let v = Children::from_slice(f.r.bytes(n as usize, "children")?);
    if f.keeps_fields() {
        let items = v.iter().map(|&c| Value::Uint(c as u64)).collect();
        f.push(field!("subsystems.children"), Value::List(items), at);
    }
    Ok(v)
}

fn parse_record(
    f: &mut FieldReader,
    format: EntryFormat,
    n_children: u8,
    weapon: bool,
) -> DecodeResult<SubsystemState> {
    let condition = f.u8(field!("subsystems.condition"))?;
    Ok(match format {
        EntryFormat::Base => SubsystemState::Base {
            condition,
            children: children(f, n_children)?,
        },
        EntryFormat::Power => SubsystemState::Power {
            condition,
            children: children(f, n_children)?,
            main_battery: f.u8(field!("subsystems.main_battery"))?,
            backup_battery: f.u8(field!("subsystems.backup_battery"))?,
        },
        EntryFormat::Powered => {
            let children = children(f, n_children)?;
            let power = f.i8(field!("subsystems.power_percent"))?;
            let weapon = if weapon {
                // Packed bit: shares one byte across the blob's weapon systems.
                Some((
                    f.bit(field!("subsystems.weapon_unknown_bit"))?,
                    f.u8(field!("subsystems.weapon_unknown_byte"))?,
                ))
            } else {
                None
            };
            SubsystemState::Powered {
                condition,
                children,
                power,
                weapon,
            }
        }
        EntryFormat::Shield => {
            let power = f.i8(field!("subsystems.power_percent"))?;
            let at = f.r.pos();
            let mut facings = [0u8; 6];
            facings.copy_from_slice(f.r.bytes(6, "shield_facings")?);
            if f.keeps_fields() {
                let items = facings.iter().map(|&c| Value::Uint(c as u64)).collect();
                f.push(field!("subsystems.shield_facings"), Value::List(items), at);
            }
            SubsystemState::Shield {
                condition,
                power,
                facings,
            }
        }
    })
}

fn emit_record(w: &mut Writer, r: &SubsystemState) {
    match r {
        SubsystemState::Base {
            condition,
            children,
        } => {
            w.u8(*condition).bytes(children);
        }
        SubsystemState::Power {
            condition,
            children,
            main_battery,
            backup_battery,
        } => {
            w.u8(*condition)
                .bytes(children)
                .u8(*main_battery)
                .u8(*backup_battery);
        }
        SubsystemState::Powered {
            condition,
            children,
            power,
            weapon,
        } => {
            w.u8(*condition).bytes(children).i8(*power);
            if let Some((bit, byte)) = weapon {
                w.bit(*bit).u8(*byte);
            }
        }
        SubsystemState::Shield {
            condition,
            power,
            facings,
        } => {
            w.u8(*condition).i8(*power).bytes(facings);
        }
    }
}

#[cfg(test)]
mod tests;
