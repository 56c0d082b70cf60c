//! The layout of one ship class: its top-level subsystem entries in wire order, their
//! record formats and children, and the snake_case keys that name entries in field trees.
//!
//! These are the types both the catalog (`ships`) and the layout file reader
//! (`layout_file`) build, and the subsystem block reader (`subsys`) walks; they sit below
//! all three so that none of them has to import another to name a layout.

use serde::Deserialize;

/// How one top-level list entry is written in a 0x20 subsystem block
/// (`stateupdate.md` §5.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RecordFormat {
    /// Condition, child conditions.
    Base,
    /// Condition, child conditions, has-power-data bit, power percent if the bit is 1.
    Powered,
    /// Condition, child conditions, main battery, backup battery (the reactor).
    Power,
    /// Condition, has-power-data bit, power percent if the bit is 1, six facing levels.
    Shield,
}

impl RecordFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            RecordFormat::Base => "base",
            RecordFormat::Powered => "powered",
            RecordFormat::Power => "power",
            RecordFormat::Shield => "shield",
        }
    }

    /// Whether records of this format carry the has-power-data bit.
    pub fn has_power_bit(self) -> bool {
        matches!(self, RecordFormat::Powered | RecordFormat::Shield)
    }
}

/// A child subsystem (phaser bank, torpedo tube, engine): one condition byte on the wire.
#[derive(Debug, Clone, PartialEq)]
pub struct ChildLayout {
    pub name: String,
    /// snake_case form of `name`, the child's key in field trees.
    pub key: String,
    pub kind: String,
    pub max_condition: Option<f32>,
}

/// One entry of a ship's top-level subsystem list.
#[derive(Debug, Clone, PartialEq)]
pub struct SubsystemLayout {
    pub name: String,
    /// The entry's key in field trees and paths (`subsys::entry_key`), computed once
    /// when the class is built rather than for every record decoded.
    pub key: String,
    pub kind: String,
    pub format: RecordFormat,
    /// May appear in 0x80 power blocks.
    pub powered_type: bool,
    pub weapon_system: Option<String>,
    pub max_condition: Option<f32>,
    pub children: Vec<ChildLayout>,
}

impl SubsystemLayout {
    /// Bytes of this entry's 0x20 record, packed-bit bytes excluded.
    pub fn record_bytes(&self, with_power_data: bool) -> usize {
        let base = 1 + self.children.len();
        match self.format {
            RecordFormat::Base => base,
            RecordFormat::Power => base + 2,
            RecordFormat::Powered => base + with_power_data as usize,
            RecordFormat::Shield => base + 6 + with_power_data as usize,
        }
    }
}

/// Where a class definition came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LayoutOrigin {
    Stock,
    /// Loaded from a layout file (its path as given).
    File(String),
}

/// One ship class and its top-level subsystem list, in wire order.
#[derive(Debug, Clone, PartialEq)]
pub struct ShipClass {
    pub species_id: u16,
    /// Script name (`BirdOfPrey`).
    pub name: String,
    /// Readable name (`Bird of Prey`).
    pub display_name: String,
    pub faction: String,
    pub can_cloak: bool,
    pub subsystems: Vec<SubsystemLayout>,
    pub origin: LayoutOrigin,
}

impl ShipClass {
    /// The list entry at a wire index (start index, 0x80 index).
    pub fn entry(&self, index: usize) -> Option<&SubsystemLayout> {
        self.subsystems.get(index)
    }
    pub fn len(&self) -> usize {
        self.subsystems.len()
    }
    pub fn is_empty(&self) -> bool {
        self.subsystems.is_empty()
    }
}

/// The snake_case key of a display name (`Shield Generator` → `shield_generator`):
/// ASCII letters and digits kept (lower case), every other run of characters one `_`.
pub fn snake_key(name: &str) -> String {
    let mut key = Vec::with_capacity(name.len());
    for &c in name.as_bytes() {
        if c.is_ascii_alphanumeric() {
            key.push(c.to_ascii_lowercase());
        } else if key.last().is_some_and(|&l| l != b'_') {
            key.push(b'_');
        }
    }
    while key.last() == Some(&b'_') {
        key.pop();
    }
    if key.is_empty() {
        key.push(b'_');
    }
    // Only ASCII letters, digits and `_` were pushed.
    String::from_utf8(key).unwrap_or_default()
}

/// The key of entry `index` of `list` (see `subsys::entry_key`), as the catalog computes it
/// once per class.
pub fn key_among(list: &[SubsystemLayout], index: usize) -> String {
    let Some(entry) = list.get(index) else {
        return format!("index_{index}");
    };
    let key = snake_key(&entry.name);
    let same = list[..index]
        .iter()
        .filter(|e| same_snake_key(&e.name, &key))
        .count();
    if same == 0 {
        key
    } else {
        format!("{key}_{}", same + 1)
    }
}

/// Whether [`snake_key`] of `name` is `key`, without allocating.
fn same_snake_key(name: &str, key: &str) -> bool {
    let mut want = key.bytes();
    let mut pending_sep = false;
    let mut started = false;
    for c in name.bytes() {
        if c.is_ascii_alphanumeric() {
            if pending_sep && want.next() != Some(b'_') {
                return false;
            }
            pending_sep = false;
            started = true;
            if want.next() != Some(c.to_ascii_lowercase()) {
                return false;
            }
        } else if started {
            pending_sep = true;
        }
    }
    let rest = want.next();
    // A name with no letter or digit has the key `_`.
    (rest.is_none() && started) || (!started && key == "_")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_snake_case() {
        assert_eq!(snake_key("Shield Generator"), "shield_generator");
        assert_eq!(snake_key("  Forward Beam #1 "), "forward_beam_1");
        assert_eq!(snake_key("--"), "_");
        for name in [
            "Shield Generator",
            "  Forward Beam #1 ",
            "--",
            "a",
            "Warp-Core",
            "x  y",
        ] {
            let key = snake_key(name);
            assert!(same_snake_key(name, &key), "{name}");
            assert!(!same_snake_key(name, &format!("{key}x")), "{name}");
            assert!(!same_snake_key(name, "other"), "{name}");
        }
    }
}
