//! The creation-blob layout of the 16 stock ship classes and the species name table,
//! transcribed from `ships.json` (top-level list in wire order: record format, child
//! count, whether the entry is a weapon system, subsystem kind).
//!
//! The object-creation body (0x02/0x03) cannot be split without these lists. They are
//! kept here as constants because the ship catalog exposes class names only; entries for
//! cloaking and pulse-weapon ships are unverified against captures (ships.md §2).

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

/// One entry of a ship's top-level subsystem list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub format: EntryFormat,
    pub children: u8,
    /// Phaser, pulse, torpedo and tractor systems write an extra bit and byte.
    pub weapon: bool,
    pub kind: &'static str,
}

const fn e(format: EntryFormat, children: u8, weapon: bool, kind: &'static str) -> Entry {
    Entry {
        format,
        children,
        weapon,
        kind,
    }
}

use EntryFormat::{Base as B, Power as P, Powered as W, Shield as S};

/// Layouts of species 1..=16, index = species − 1.
const LAYOUTS: [&[Entry]; 16] = [
    // 1 Akira
    &[
        e(B, 0, false, "hull"),
        e(S, 0, false, "shield_generator"),
        e(W, 0, false, "sensor_array"),
        e(P, 0, false, "reactor"),
        e(W, 2, false, "impulse_engines"),
        e(W, 8, true, "phaser_system"),
        e(W, 2, false, "warp_engines"),
        e(W, 6, true, "torpedo_system"),
        e(W, 0, false, "repair"),
        e(W, 2, true, "tractor_system"),
        e(B, 0, false, "hull"),
    ],
    // 2 Ambassador
    &[
        e(B, 0, false, "hull"),
        e(S, 0, false, "shield_generator"),
        e(W, 0, false, "sensor_array"),
        e(P, 0, false, "reactor"),
        e(W, 2, false, "impulse_engines"),
        e(W, 8, true, "phaser_system"),
        e(W, 2, false, "warp_engines"),
        e(W, 4, true, "torpedo_system"),
        e(W, 0, false, "repair"),
        e(B, 0, false, "hull"),
        e(W, 2, true, "tractor_system"),
    ],
    // 3 Galaxy
    &[
        e(B, 0, false, "hull"),
        e(P, 0, false, "reactor"),
        e(S, 0, false, "shield_generator"),
        e(W, 0, false, "sensor_array"),
        e(W, 6, true, "torpedo_system"),
        e(W, 8, true, "phaser_system"),
        e(W, 3, false, "impulse_engines"),
        e(W, 2, false, "warp_engines"),
        e(W, 4, true, "tractor_system"),
        e(B, 0, false, "hull"),
        e(W, 0, false, "repair"),
    ],
    // 4 Nebula
    &[
        e(B, 0, false, "hull"),
        e(S, 0, false, "shield_generator"),
        e(W, 0, false, "sensor_array"),
        e(P, 0, false, "reactor"),
        e(W, 2, false, "impulse_engines"),
        e(W, 8, true, "phaser_system"),
        e(W, 2, false, "warp_engines"),
        e(W, 6, true, "torpedo_system"),
        e(W, 0, false, "repair"),
        e(W, 2, true, "tractor_system"),
        e(B, 0, false, "hull"),
    ],
    // 5 Sovereign
    &[
        e(B, 0, false, "hull"),
        e(S, 0, false, "shield_generator"),
        e(W, 0, false, "sensor_array"),
        e(P, 0, false, "reactor"),
        e(W, 2, false, "impulse_engines"),
        e(W, 6, true, "torpedo_system"),
        e(W, 0, false, "repair"),
        e(W, 8, true, "phaser_system"),
        e(W, 4, true, "tractor_system"),
        e(W, 2, false, "warp_engines"),
        e(B, 0, false, "hull"),
    ],
    // 6 BirdOfPrey
    &[
        e(B, 0, false, "hull"),
        e(S, 0, false, "shield_generator"),
        e(P, 0, false, "reactor"),
        e(W, 2, true, "pulse_system"),
        e(W, 1, true, "torpedo_system"),
        e(W, 1, false, "impulse_engines"),
        e(W, 2, false, "warp_engines"),
        e(W, 0, false, "cloaking_device"),
        e(W, 0, false, "sensor_array"),
        e(W, 0, false, "repair"),
    ],
    // 7 Vorcha
    &[
        e(B, 0, false, "hull"),
        e(S, 0, false, "shield_generator"),
        e(P, 0, false, "reactor"),
        e(W, 1, true, "phaser_system"),
        e(W, 2, true, "pulse_system"),
        e(W, 3, true, "torpedo_system"),
        e(W, 2, false, "impulse_engines"),
        e(W, 2, false, "warp_engines"),
        e(W, 0, false, "cloaking_device"),
        e(W, 0, false, "sensor_array"),
        e(W, 0, false, "repair"),
        e(W, 2, true, "tractor_system"),
    ],
    // 8 Warbird
    &[
        e(B, 0, false, "hull"),
        e(S, 0, false, "shield_generator"),
        e(P, 0, false, "reactor"),
        e(W, 1, true, "phaser_system"),
        e(W, 4, true, "pulse_system"),
        e(W, 2, true, "torpedo_system"),
        e(W, 2, false, "impulse_engines"),
        e(W, 2, false, "warp_engines"),
        e(W, 0, false, "cloaking_device"),
        e(W, 0, false, "sensor_array"),
        e(W, 0, false, "repair"),
        e(B, 0, false, "hull"),
        e(W, 2, true, "tractor_system"),
    ],
    // 9 Marauder
    &[
        e(B, 0, false, "hull"),
        e(S, 0, false, "shield_generator"),
        e(P, 0, false, "reactor"),
        e(W, 1, true, "phaser_system"),
        e(W, 2, false, "impulse_engines"),
        e(W, 2, false, "warp_engines"),
        e(W, 2, true, "tractor_system"),
        e(W, 0, false, "sensor_array"),
        e(W, 0, false, "repair"),
        e(W, 2, true, "pulse_system"),
    ],
    // 10 Galor
    &[
        e(B, 0, false, "hull"),
        e(S, 0, false, "shield_generator"),
        e(P, 0, false, "reactor"),
        e(W, 4, true, "phaser_system"),
        e(W, 1, true, "torpedo_system"),
        e(W, 2, false, "impulse_engines"),
        e(W, 1, false, "warp_engines"),
        e(W, 0, false, "repair"),
        e(W, 0, false, "sensor_array"),
    ],
    // 11 Keldon
    &[
        e(B, 0, false, "hull"),
        e(S, 0, false, "shield_generator"),
        e(P, 0, false, "reactor"),
        e(W, 4, true, "phaser_system"),
        e(W, 2, true, "torpedo_system"),
        e(W, 4, false, "impulse_engines"),
        e(W, 1, false, "warp_engines"),
        e(W, 0, false, "sensor_array"),
        e(W, 0, false, "repair"),
        e(W, 2, true, "tractor_system"),
    ],
    // 12 CardHybrid
    &[
        e(B, 0, false, "hull"),
        e(P, 0, false, "reactor"),
        e(W, 3, true, "torpedo_system"),
        e(W, 0, false, "repair"),
        e(S, 0, false, "shield_generator"),
        e(W, 0, false, "sensor_array"),
        e(W, 2, false, "impulse_engines"),
        e(W, 3, false, "warp_engines"),
        e(W, 7, true, "phaser_system"),
        e(W, 1, true, "pulse_system"),
        e(W, 2, true, "tractor_system"),
    ],
    // 13 KessokHeavy
    &[
        e(B, 0, false, "hull"),
        e(P, 0, false, "reactor"),
        e(W, 2, false, "impulse_engines"),
        e(W, 2, false, "warp_engines"),
        e(W, 8, true, "phaser_system"),
        e(W, 2, true, "torpedo_system"),
        e(W, 0, false, "repair"),
        e(S, 0, false, "shield_generator"),
        e(W, 0, false, "sensor_array"),
        e(W, 0, false, "cloaking_device"),
    ],
    // 14 KessokLight
    &[
        e(B, 0, false, "hull"),
        e(P, 0, false, "reactor"),
        e(W, 1, true, "torpedo_system"),
        e(W, 0, false, "repair"),
        e(S, 0, false, "shield_generator"),
        e(W, 0, false, "sensor_array"),
        e(W, 2, false, "impulse_engines"),
        e(W, 2, false, "warp_engines"),
        e(W, 8, true, "phaser_system"),
        e(W, 0, false, "cloaking_device"),
    ],
    // 15 Shuttle
    &[
        e(B, 0, false, "hull"),
        e(W, 2, false, "impulse_engines"),
        e(P, 0, false, "reactor"),
        e(W, 0, false, "sensor_array"),
        e(S, 0, false, "shield_generator"),
        e(W, 1, true, "phaser_system"),
        e(W, 0, false, "repair"),
        e(W, 2, false, "warp_engines"),
        e(W, 1, true, "tractor_system"),
    ],
    // 16 CardFreighter
    &[
        e(B, 0, false, "hull"),
        e(W, 2, false, "impulse_engines"),
        e(W, 1, false, "warp_engines"),
        e(W, 0, false, "repair"),
        e(W, 1, true, "tractor_system"),
        e(W, 0, false, "sensor_array"),
        e(S, 0, false, "shield_generator"),
        e(P, 0, false, "reactor"),
    ],
];

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

/// Creation-blob layout of a species, if it is one of the 16 stock ship classes.
pub fn creation_layout(species: u8) -> Option<&'static [Entry]> {
    LAYOUTS.get((species as usize).checked_sub(1)?).copied()
}

/// Script name of a species id (0 = "(unknown)").
pub fn species_name(species: u8) -> Option<&'static str> {
    SPECIES_NAMES.get(species as usize).copied()
}

/// Bytes of a creation blob for a layout, counting the one packed byte of the weapon bits.
pub fn blob_len(layout: &[Entry]) -> usize {
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
        for (i, n) in want.iter().enumerate() {
            let l = creation_layout(i as u8 + 1).unwrap();
            assert_eq!(blob_len(l), *n, "species {}", i + 1);
        }
        assert!(creation_layout(0).is_none());
        assert!(creation_layout(17).is_none());
        assert_eq!(species_name(3), Some("Galaxy"));
        assert_eq!(species_name(45), Some("BorgCube"));
        assert_eq!(species_name(46), None);
    }
}
