//! The creation-blob layout of a ship class, derived from the ship catalog (the same
//! lists, in wire order, that lay out StateUpdate subsystem blocks), and the species
//! name table.
//!
//! The object-creation body (0x02/0x03) cannot be split without these lists, so a
//! layout file given with `--ships` lays out creation blobs of modded ships too.

use crate::game::ships::{RecordFormat, ShipClass};

/// Record format of one top-level subsystem in a creation blob (`opcodes.md` §6.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryFormat {
    /// Condition, then one condition byte per child.
    Base,
    /// Reactor: condition, children, main battery, backup battery.
    Power,
    /// Condition, children, signed power byte (+ bit + byte for weapon systems).
    Powered,
    /// Condition, signed power byte, six shield-facing levels.
    Shield,
}

/// One entry of a ship's top-level subsystem list, as a creation blob needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry<'a> {
    pub format: EntryFormat,
    pub children: u8,
    /// Phaser, pulse, torpedo and tractor systems write an extra bit and byte.
    pub weapon: bool,
    pub kind: &'a str,
}

/// Creation-blob layout of a ship class.
pub fn creation_layout(class: &ShipClass) -> Vec<Entry<'_>> {
    class
        .subsystems
        .iter()
        .map(|s| Entry {
            format: match s.format {
                RecordFormat::Base => EntryFormat::Base,
                RecordFormat::Power => EntryFormat::Power,
                RecordFormat::Powered => EntryFormat::Powered,
                RecordFormat::Shield => EntryFormat::Shield,
            },
            children: s.children.len().min(u8::MAX as usize) as u8,
            weapon: s.weapon_system.is_some(),
            kind: &s.kind,
        })
        .collect()
}

/// SpeciesToShip names, index = species id (`opcodes.md` §7.1).
pub const SPECIES_NAMES: [&str; 46] = [
    "(unknown)",
    "Akira",
    "Ambassador",
    "Galaxy",
    "Nebula",
    "Sovereign",
    "BirdOfPrey",
    "Vorcha",
    "Warbird",
    "Marauder",
    "Galor",
    "Keldon",
    "CardHybrid",
    "KessokHeavy",
    "KessokLight",
    "Shuttle",
    "CardFreighter",
    "Freighter",
    "Transport",
    "SpaceFacility",
    "CommArray",
    "CommLight",
    "DryDock",
    "Probe",
    "Decoy",
    "Sunbuster",
    "CardOutpost",
    "CardStarbase",
    "CardStation",
    "FedOutpost",
    "FedStarbase",
    "Asteroid",
    "Asteroid1",
    "Asteroid2",
    "Asteroid3",
    "Amagon",
    "BiranuStation",
    "Enterprise",
    "Geronimo",
    "Peregrine",
    "Asteroidh1",
    "Asteroidh2",
    "Asteroidh3",
    "Escapepod",
    "KessokMine",
    "BorgCube",
];

/// Script name of a species id (0 = "(unknown)").
pub fn species_name(species: u8) -> Option<&'static str> {
    SPECIES_NAMES.get(species as usize).copied()
}

/// Bytes of a creation blob for a layout, counting the one packed byte of the weapon bits.
pub fn blob_len(layout: &[Entry<'_>]) -> usize {
    let mut n = 0;
    let mut bits = 0;
    for e in layout {
        n += match e.format {
            EntryFormat::Base => 1 + e.children as usize,
            EntryFormat::Power => 3 + e.children as usize,
            EntryFormat::Powered => 2 + e.children as usize + e.weapon as usize,
            EntryFormat::Shield => 8,
        };
        bits += e.weapon as usize;
    }
    n + bits.div_ceil(5)
}

#[cfg(test)]
mod tests {
    use super::*;

    // ships.md: captured blobs are 51 (Akira) and 54 (Galaxy) bytes; the other sizes are
    // the table's.
    #[test]
    fn blob_sizes_match_ships_md() {
        let want = [
            51, 49, 54, 51, 53, 35, 47, 49, 39, 35, 43, 51, 43, 42, 33, 28,
        ];
        let catalog = crate::game::ships::ShipCatalog::stock();
        for (i, n) in want.iter().enumerate() {
            let class = catalog.class(i as u16 + 1).unwrap();
            assert_eq!(blob_len(&creation_layout(class)), *n, "species {}", i + 1);
        }
        assert!(catalog.class(0).is_none());
        assert!(catalog.class(17).is_none());
        assert_eq!(species_name(3), Some("Galaxy"));
        assert_eq!(species_name(45), Some("BorgCube"));
        assert_eq!(species_name(46), None);
    }
}
