//! Test helpers for the decoders: decoding through the dispatcher with an empty
//! registry, hex vectors, and checks on fields and warnings. A file of its own so that
//! the tests of each family, which decode through the dispatcher, do not need it from
//! the dispatcher's own file.

use super::{decode, DecodeContext, GameMessage};
use crate::diag::Code;
use crate::game::field::Value;
use crate::game::objects::ObjectRegistry;
use crate::game::ships::ShipCatalog;

/// Decode with an empty registry and the stock catalog.
pub fn decode_plain(msg: &[u8]) -> GameMessage {
    let registry = ObjectRegistry::default();
    let catalog = ShipCatalog::stock();
    decode(msg, &DecodeContext::new(&registry, &catalog))
}

pub fn hex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).expect("test hex"))
        .collect()
}

/// The value of the first top-level field called `name`.
pub fn field<'m>(m: &'m GameMessage, name: &str) -> &'m Value {
    &m.fields
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no field {name} in {:?}", m.fields))
        .value
}

/// No warnings, and the fields' spans cover every body byte without overlap gaps.
pub fn assert_clean(m: &GameMessage) {
    assert!(m.warnings.is_empty(), "warnings: {:?}", m.warnings);
    let end = m.fields.iter().map(|f| f.span.end()).max().unwrap_or(1);
    assert_eq!(end as usize, m.length.max(1), "fields: {:?}", m.fields);
}

pub fn has_warning(m: &GameMessage, code: Code) -> bool {
    m.warnings.iter().any(|w| w.code == code)
}
