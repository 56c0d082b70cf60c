//! Decoded values with the byte span they came from.
//!
//! Every decoder produces a list of [`Field`]s. The span is relative to the start of the
//! game message (opcode byte = offset 0), so the hex view can mark which bytes mean what.
//! Every field carries its registry entry ([`FieldId`]): a reader that wants a field
//! the code knows compares entries, never names.

use super::registry::{FieldId, FieldName, FieldType};
use serde_json::{json, Map, Value as Json};
use std::borrow::Cow;

/// A byte range inside a game message: `start .. start + len`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Span {
    pub start: u32,
    pub len: u32,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span {
            start: start as u32,
            len: end.saturating_sub(start) as u32,
        }
    }
    pub fn end(&self) -> u32 {
        self.start + self.len
    }
}

/// One decoded value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Bool(bool),
    Uint(u64),
    Int(i64),
    Float(f64),
    /// A network object id (shown as a number and as hex).
    ObjectId(u32),
    /// A value people read in hex (flags, codes, class ids).
    Hex(u64),
    Text(String),
    Vec3([f32; 3]),
    /// Raw bytes: an unknown or undecoded part, or an opaque blob.
    Bytes(Vec<u8>),
    List(Vec<Value>),
    Group(Vec<Field>),
}

impl FieldType {
    /// The type of a decoded value.
    pub fn of(value: &Value) -> FieldType {
        match value {
            Value::Bool(_) => FieldType::Bool,
            Value::Uint(_) => FieldType::Uint,
            Value::Int(_) => FieldType::Int,
            Value::Float(_) => FieldType::Float,
            Value::ObjectId(_) => FieldType::ObjectId,
            Value::Hex(_) => FieldType::Hex,
            Value::Text(_) => FieldType::Text,
            Value::Vec3(_) => FieldType::Vec3,
            Value::Bytes(_) => FieldType::Bytes,
            Value::List(_) => FieldType::List,
            Value::Group(_) => FieldType::Group,
        }
    }
}

/// A value, which field it is and the bytes it was read from.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// Which field: its registry entry. Readers that look for a field compare this.
    pub id: FieldId,
    /// What the tree prints: the entry's last segment, a list element's own name, or a
    /// ship layout's child key (`ventral_phaser_3` under `subsystems.children_pct.child`).
    pub name: Cow<'static, str>,
    pub value: Value,
    pub span: Span,
}

impl Field {
    /// A field under its entry's local name (`field!("orientation.w")` prints `w`).
    pub fn new(name: FieldName, value: Value, span: Span) -> Field {
        Field {
            id: name.id,
            name: Cow::Borrowed(name.local),
            value,
            span,
        }
    }

    /// A field whose tree name is not fixed by its entry: a ship layout's child key, or
    /// a field of another game ([`FieldId::OTHER_GAME`]).
    pub fn keyed(
        id: FieldId,
        name: impl Into<Cow<'static, str>>,
        value: Value,
        span: Span,
    ) -> Field {
        Field {
            id,
            name: name.into(),
            value,
            span,
        }
    }

    /// Whether it is the field of this entry.
    #[inline]
    pub fn is(&self, id: FieldId) -> bool {
        self.id == id
    }
}

/// `0x` hex padded to the value's natural width: 2, 4, 8 or 16 digits.
pub fn hex_padded(v: u64) -> String {
    match v {
        0..=0xFF => format!("0x{v:02X}"),
        0x100..=0xFFFF => format!("0x{v:04X}"),
        0x1_0000..=0xFFFF_FFFF => format!("0x{v:08X}"),
        _ => format!("0x{v:016X}"),
    }
}

/// The text of a value's `_hex` twin, as the JSON records write it: `0x` and the
/// value's natural width, eight digits for an object id; none for other kinds.
pub fn hex_twin_text(v: &Value) -> Option<String> {
    match v {
        Value::Uint(n) | Value::Hex(n) => Some(hex_padded(*n)),
        Value::Int(n) => u64::try_from(*n).ok().map(hex_padded),
        Value::ObjectId(id) => Some(format!("0x{id:08X}")),
        _ => None,
    }
}

/// Lowercase hex of a byte slice, no separators.
pub fn hex_string(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

impl Value {
    /// JSON form: numbers stay numbers; ids and hex values become `{"value": n, "hex": "0x…"}`
    /// is avoided in favour of a flat number, with the hex twin added by [`fields_to_json`].
    pub fn to_json(&self) -> Json {
        match self {
            Value::Bool(b) => json!(b),
            Value::Uint(v) => json!(v),
            Value::Int(v) => json!(v),
            Value::Float(v) => float_json(*v),
            Value::ObjectId(v) => json!(v),
            Value::Hex(v) => json!(v),
            Value::Text(s) => json!(s),
            Value::Vec3(v) => json!([
                float_json(v[0] as f64),
                float_json(v[1] as f64),
                float_json(v[2] as f64)
            ]),
            Value::Bytes(b) => json!(hex_string(b)),
            Value::List(items) => Json::Array(items.iter().map(Value::to_json).collect()),
            Value::Group(fields) => fields_to_json(fields),
        }
    }

    /// The hex twin for values people read in hex.
    pub fn hex_twin(&self) -> Option<String> {
        match self {
            Value::ObjectId(v) => Some(format!("0x{v:08X}")),
            Value::Hex(v) => Some(hex_padded(*v)),
            _ => None,
        }
    }
}

/// A float as JSON; non-finite values (possible in hostile input) become strings.
fn float_json(v: f64) -> Json {
    if v.is_finite() {
        // Round-trip through f32 text when the value came from an f32, so 5.13 stays 5.13.
        let short = (v as f32) as f64;
        if short == v {
            if let Ok(parsed) = format!("{}", v as f32).parse::<f64>() {
                return json!(parsed);
            }
        }
        json!(v)
    } else {
        json!(format!("{v}"))
    }
}

/// Fields as a JSON object (contract v2): keys in wire order, a name that occurs more
/// than once as one key whose value is the array of its values (at its first place),
/// and after an id or hex value a `<name>_hex` twin (unless a field of that name
/// exists). The JSON writer of `report::json_stream` writes the same text directly.
pub fn fields_to_json(fields: &[Field]) -> Json {
    let mut map = Map::with_capacity(fields.len());
    for (i, f) in fields.iter().enumerate() {
        if fields[..i].iter().any(|x| x.name == f.name) {
            continue;
        }
        let same: Vec<&Field> = fields[i..].iter().filter(|x| x.name == f.name).collect();
        let key = f.name.to_string();
        let twin_taken = fields.iter().any(|x| x.name == format!("{key}_hex"));
        let twin = same.iter().any(|x| x.value.hex_twin().is_some()) && !twin_taken;
        let twin_of = |x: &Field| x.value.hex_twin().map_or(Json::Null, Json::String);
        if same.len() == 1 {
            map.insert(key.clone(), f.value.to_json());
            if twin {
                map.insert(format!("{key}_hex"), twin_of(f));
            }
        } else {
            map.insert(
                key.clone(),
                Json::Array(same.iter().map(|x| x.value.to_json()).collect()),
            );
            if twin {
                map.insert(
                    format!("{key}_hex"),
                    Json::Array(same.iter().map(|x| twin_of(x)).collect()),
                );
            }
        }
    }
    Json::Object(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_has_numbers_and_hex_twins() {
        let fields = vec![
            Field::keyed(
                FieldId::OTHER_GAME,
                "object_id",
                Value::ObjectId(0x3FFF_FFFF),
                Span::new(1, 5),
            ),
            Field::keyed(
                FieldId::OTHER_GAME,
                "speed",
                Value::Float(5.13f32 as f64),
                Span::new(5, 7),
            ),
            Field::keyed(
                FieldId::OTHER_GAME,
                "raw",
                Value::Bytes(vec![0xAB, 0x01]),
                Span::new(7, 9),
            ),
            Field::keyed(
                FieldId::OTHER_GAME,
                "raw",
                Value::Bytes(vec![0xCD]),
                Span::new(9, 10),
            ),
        ];
        let j = fields_to_json(&fields);
        assert_eq!(j["object_id"], json!(1073741823u32));
        assert_eq!(j["object_id_hex"], json!("0x3FFFFFFF"));
        assert_eq!(j["speed"], json!(5.13));
        assert_eq!(j["raw"], json!(["ab01", "cd"]));
        let keys: Vec<&String> = j.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["object_id", "object_id_hex", "speed", "raw"]);
    }
}
