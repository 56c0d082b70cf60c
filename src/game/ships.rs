//! Ship subsystem layouts (`ships.md`): which top-level subsystems a class has, in which
//! order and wire format, with how many children.
//!
//! The 16 stock classes are built in (`ships.json`, embedded). A layout file in the same
//! schema adds or replaces classes by species id (see `docs/ships.md`); parsing and
//! error location live in [`super::layout_file`].

use super::layout_file::{self, LayoutError};
use std::path::Path;
use std::sync::OnceLock;

pub use super::class_layout::{
    ChildLayout, LayoutOrigin, RecordFormat, ShipClass, SubsystemLayout,
};

/// The stock layouts, as published in the protocol reference.
const STOCK_JSON: &str = include_str!("ships.json");

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
    ///
    /// Inlined for its usual answer, a stock class at its own place (see
    /// [`ShipCatalog::at_place`]), asked for every StateUpdate: the call cost about
    /// as much as the lookup.
    #[inline]
    pub fn class(&self, species: u16) -> Option<&ShipClass> {
        self.at_place(species)
            .or_else(|| self.class_elsewhere(species))
    }

    /// The stock ids run 1, 2, 3 … with no gap, so class `n` is usually at `n - 1`.
    #[inline]
    fn at_place(&self, species: u16) -> Option<&ShipClass> {
        (species as usize)
            .checked_sub(1)
            .and_then(|i| self.classes.get(i))
            .filter(|c| c.species_id == species)
    }

    /// [`ShipCatalog::class`] for a species not at its place: added by a layout file
    /// past a gap, an alias, or unknown.
    fn class_elsewhere(&self, species: u16) -> Option<&ShipClass> {
        if let Some(c) = self.direct(species) {
            return Some(c);
        }
        let target = self.aliases.iter().find(|(a, _)| *a == species)?.1;
        self.direct(target)
    }

    fn direct(&self, species: u16) -> Option<&ShipClass> {
        if let Some(c) = self.at_place(species) {
            return Some(c);
        }
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

    /// The lookup by position finds exactly what a search of the sorted list finds, for
    /// every id, on the stock catalog and on catalogs whose ids leave gaps or run past
    /// their position (classes added from a layout file, one replaced).
    #[test]
    fn class_lookup_agrees_with_search() {
        let hull = r#"[{"name": "Hull", "format": "base"}]"#;
        let ship = |id: u16, name: &str| {
            format!(r#"{{"species_id": {id}, "name": "{name}", "subsystems": {hull}}}"#)
        };
        let mut gaps = ShipCatalog::stock();
        let text = format!(
            r#"{{"ships": [{}, {}, {}]}}"#,
            ship(3, "Replaced"),
            ship(18, "Past A Gap"),
            ship(400, "Far")
        );
        gaps.merge_json(&text, LayoutOrigin::File("gaps.json".into()))
            .unwrap();
        let mut sparse = ShipCatalog::default();
        let text = format!(r#"{{"ships": [{}, {}]}}"#, ship(2, "Two"), ship(5, "Five"));
        sparse
            .merge_json(&text, LayoutOrigin::File("sparse.json".into()))
            .unwrap();
        for cat in [ShipCatalog::stock(), gaps, sparse, ShipCatalog::default()] {
            for species in 0..=u16::MAX {
                let searched = cat
                    .classes
                    .binary_search_by_key(&species, |c| c.species_id)
                    .ok()
                    .map(|i| &cat.classes[i]);
                assert_eq!(
                    cat.direct(species).map(|c| (c.species_id, &c.name)),
                    searched.map(|c| (c.species_id, &c.name)),
                    "species {species}"
                );
            }
        }
    }
}
