//! Ship subsystem layouts (`ships.md`): which top-level subsystems a class has, in which
//! order and wire format, with how many children.
//!
//! The 16 stock classes are built in (`ships.json`, embedded). A layout file in the same
//! schema adds or replaces classes by species id (see `docs/ships.md`); parsing and
//! error location live in [`super::layout_file`].

use super::layout_file::{self, LayoutError};
use serde::Deserialize;
use std::path::Path;
use std::sync::OnceLock;

/// The stock layouts, as published in the protocol reference.
const STOCK_JSON: &str = include_str!("ships.json");

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

/// All known ship classes (stock ones built in, plus any loaded from a layout file).
#[derive(Debug, Clone, Default)]
pub struct ShipCatalog {
    /// Sorted by species id, unique.
    classes: Vec<ShipClass>,
    /// `(species, same layout as species)`: unverified aliases from the reference.
    aliases: Vec<(u16, u16)>,
}

impl ShipCatalog {
    /// The 16 stock classes.
    pub fn stock() -> ShipCatalog {
        static STOCK: OnceLock<ShipCatalog> = OnceLock::new();
        STOCK
            .get_or_init(|| {
                let mut c = ShipCatalog::default();
                // The embedded file is part of the program, checked by the tests below.
                c.merge_json(STOCK_JSON, LayoutOrigin::Stock)
                    .expect("embedded ships.json is valid");
                c
            })
            .clone()
    }

    /// Stock classes with the classes of a layout file merged over them by species id.
    pub fn load_file(path: impl AsRef<Path>) -> Result<ShipCatalog, LayoutError> {
        let mut c = ShipCatalog::stock();
        c.merge_file(path)?;
        Ok(c)
    }

    /// Merge a layout file into this catalog; returns how many classes it defined.
    pub fn merge_file(&mut self, path: impl AsRef<Path>) -> Result<usize, LayoutError> {
        let path = path.as_ref();
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| LayoutError::io(&origin, &e))?;
        self.merge_json(&text, LayoutOrigin::File(origin))
    }

    /// Merge layouts given as JSON text (`ships.json` schema). Nothing is merged when
    /// the text has an error.
    pub fn merge_json(&mut self, text: &str, origin: LayoutOrigin) -> Result<usize, LayoutError> {
        let parsed = layout_file::parse(text, &origin)?;
        let n = parsed.classes.len();
        for class in parsed.classes {
            match self
                .classes
                .binary_search_by_key(&class.species_id, |c| c.species_id)
            {
                Ok(i) => self.classes[i] = class,
                Err(i) => self.classes.insert(i, class),
            }
        }
        for (alias, target) in parsed.aliases {
            self.aliases.retain(|(a, _)| *a != alias);
            self.aliases.push((alias, target));
        }
        Ok(n)
    }

    /// The class for a species id; aliases (Enterprise → Sovereign …) resolve to the
    /// class they share a layout with unless the alias id has its own definition.
    pub fn class(&self, species: u16) -> Option<&ShipClass> {
        if let Some(c) = self.direct(species) {
            return Some(c);
        }
        let target = self.aliases.iter().find(|(a, _)| *a == species)?.1;
        self.direct(target)
    }

    fn direct(&self, species: u16) -> Option<&ShipClass> {
        self.classes
            .binary_search_by_key(&species, |c| c.species_id)
            .ok()
            .and_then(|i| self.classes.get(i))
    }

    /// Readable class name for a species id, if known.
    pub fn class_name(&self, species: u16) -> Option<&str> {
        self.class(species).map(|c| c.display_name.as_str())
    }

    /// Every class, ordered by species id.
    pub fn classes(&self) -> &[ShipClass] {
        &self.classes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stock_catalog_has_sixteen_classes() {
        let c = ShipCatalog::stock();
        assert_eq!(c.classes().len(), 16);
        assert_eq!(c.class_name(1), Some("Akira"));
        assert_eq!(c.class_name(6), Some("Bird of Prey"));
        assert_eq!(c.class_name(16), Some("Cardassian Freighter"));
        assert_eq!(c.class_name(0), None);
        assert_eq!(c.class_name(99), None);
        // Enterprise (37) shares the Sovereign layout.
        assert_eq!(c.class(37).map(|k| k.species_id), Some(5));
    }

    // ships.md §4: the Akira list.
    #[test]
    fn akira_layout_matches_reference() {
        let c = ShipCatalog::stock();
        let akira = c.class(1).unwrap();
        let names: Vec<&str> = akira.subsystems.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "Hull",
                "Shield Generator",
                "Sensor Array",
                "Warp Core",
                "Impulse Engines",
                "Phasers",
                "Warp Engines",
                "Torpedoes",
                "Engineering",
                "Tractors",
                "Bridge"
            ]
        );
        assert_eq!(akira.subsystems[1].format, RecordFormat::Shield);
        assert_eq!(akira.subsystems[3].format, RecordFormat::Power);
        assert_eq!(akira.subsystems[5].children.len(), 8);
        assert!(!akira.subsystems[0].powered_type);
        assert!(akira.subsystems[1].powered_type);
    }

    // ships.md §3: bytes per full 0x20 cycle, owner / others, excluding packed bytes.
    #[test]
    fn cycle_sizes_match_summary_table() {
        let want: [(u16, usize, usize, usize); 16] = [
            (1, 39, 47, 8),
            (2, 37, 45, 8),
            (3, 42, 50, 8),
            (4, 39, 47, 8),
            (5, 41, 49, 8),
            (6, 24, 32, 8),
            (7, 32, 42, 10),
            (8, 34, 44, 10),
            (9, 27, 35, 8),
            (10, 25, 32, 7),
            (11, 31, 39, 8),
            (12, 37, 46, 9),
            (13, 32, 40, 8),
            (14, 31, 39, 8),
            (15, 23, 30, 7),
            (16, 20, 26, 6),
        ];
        let c = ShipCatalog::stock();
        for (species, own, others, bits) in want {
            let k = c.class(species).unwrap();
            let sum = |p| {
                k.subsystems
                    .iter()
                    .map(|s| s.record_bytes(p))
                    .sum::<usize>()
            };
            let b = k
                .subsystems
                .iter()
                .filter(|s| s.format.has_power_bit())
                .count();
            assert_eq!(
                (sum(false), sum(true), b),
                (own, others, bits),
                "{}",
                k.name
            );
        }
    }
}
