//! StateUpdate dirty flags: short names and the histograms behind a `stats` command.
//!
//! Counts are kept per direction, per object and per ship class. Objects and classes are
//! keyed by input data, so both tables are bounded ([`MAX_OBJECTS`], [`MAX_CLASSES`]);
//! updates for keys beyond the limit are still counted per direction and in
//! `overflow`.

use super::update::StateUpdate;
use crate::diag::Direction;
use std::collections::BTreeMap;

/// Short names of the eight flag bits, bit 0 first (`stateupdate.md` §2).
pub const FLAG_NAMES: [&str; 8] = ["POS", "DELTA", "FWD", "UP", "SPD", "SUBSYS", "CLOAK", "WPN"];

/// Most objects with their own histogram.
pub const MAX_OBJECTS: usize = 1024;
/// Most ship classes with their own histogram, per direction.
pub const MAX_CLASSES: usize = 256;

/// `0x9E` → `DELTA+FWD+UP+SPD+WPN`; `0x00` → `NONE`.
pub fn flag_names(flags: u8) -> String {
    if flags == 0 {
        return "NONE".to_string();
    }
    let mut s = String::with_capacity(32);
    for (bit, name) in FLAG_NAMES.iter().enumerate() {
        if flags & (1 << bit) != 0 {
            if !s.is_empty() {
                s.push('+');
            }
            s.push_str(name);
        }
    }
    s
}

/// Counts of one set of StateUpdates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlagHistogram {
    pub messages: u64,
    /// By whole flags byte.
    pub combos: [u64; 256],
    /// By single bit (a message counts once for each bit it has).
    pub bits: [u64; 8],
    /// By 0x20 start index.
    pub start_index: [u64; 256],
}

impl Default for FlagHistogram {
    fn default() -> Self {
        FlagHistogram {
            messages: 0,
            combos: [0; 256],
            bits: [0; 8],
            start_index: [0; 256],
        }
    }
}

impl FlagHistogram {
    pub fn add(&mut self, flags: u8, subsystem_start: Option<u8>) {
        self.messages += 1;
        self.combos[flags as usize] += 1;
        for (bit, n) in self.bits.iter_mut().enumerate() {
            *n += ((flags >> bit) & 1) as u64;
        }
        if let Some(s) = subsystem_start {
            self.start_index[s as usize] += 1;
        }
    }

    /// The most frequent flag combinations, commonest first (ties: lower value first).
    pub fn top_combos(&self, n: usize) -> Vec<(u8, u64)> {
        let mut v: Vec<(u8, u64)> = (0..=255u8)
            .map(|f| (f, self.combos[f as usize]))
            .filter(|(_, c)| *c > 0)
            .collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v.truncate(n);
        v
    }

    /// Start indices seen, in index order.
    pub fn start_indices(&self) -> Vec<(u8, u64)> {
        (0..=255u8)
            .map(|i| (i, self.start_index[i as usize]))
            .filter(|(_, c)| *c > 0)
            .collect()
    }
}

/// Dirty-flag statistics of a capture.
#[derive(Debug, Clone, Default)]
pub struct DirtyStats {
    by_direction: [FlagHistogram; 2],
    by_object: BTreeMap<(Direction, u32), FlagHistogram>,
    by_class: [BTreeMap<String, FlagHistogram>; 2],
    /// Updates whose object or class had no slot left.
    pub overflow: u64,
}

impl DirtyStats {
    pub fn new() -> DirtyStats {
        DirtyStats::default()
    }

    /// Count one StateUpdate; `class` is the ship class name when known.
    pub fn record(&mut self, dir: Direction, su: &StateUpdate, class: Option<&str>) {
        let start = su.subsystem_start;
        self.by_direction[dir.index()].add(su.flags, start);
        let key = (dir, su.object_id);
        if let Some(h) = self.by_object.get_mut(&key) {
            h.add(su.flags, start);
        } else if self.by_object.len() < MAX_OBJECTS {
            self.by_object.entry(key).or_default().add(su.flags, start);
        } else {
            self.overflow += 1;
        }
        let class = class.unwrap_or("unknown");
        let classes = &mut self.by_class[dir.index()];
        if let Some(h) = classes.get_mut(class) {
            h.add(su.flags, start);
        } else if classes.len() < MAX_CLASSES {
            classes
                .entry(class.to_string())
                .or_default()
                .add(su.flags, start);
        } else {
            self.overflow += 1;
        }
    }

    pub fn direction(&self, dir: Direction) -> &FlagHistogram {
        &self.by_direction[dir.index()]
    }
    pub fn objects(&self) -> impl Iterator<Item = (&(Direction, u32), &FlagHistogram)> {
        self.by_object.iter()
    }
    /// Per-class histograms, client → host first, classes by name.
    pub fn classes(&self) -> impl Iterator<Item = (Direction, &str, &FlagHistogram)> {
        [Direction::C2S, Direction::S2C]
            .into_iter()
            .flat_map(move |d| {
                self.by_class[d.index()]
                    .iter()
                    .map(move |(c, h)| (d, c.as_str(), h))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_common_combinations() {
        assert_eq!(flag_names(0x9E), "DELTA+FWD+UP+SPD+WPN");
        assert_eq!(flag_names(0x9D), "POS+FWD+UP+SPD+WPN");
        assert_eq!(flag_names(0x20), "SUBSYS");
        assert_eq!(flag_names(0x41), "POS+CLOAK");
        assert_eq!(flag_names(0xFF), "POS+DELTA+FWD+UP+SPD+SUBSYS+CLOAK+WPN");
        assert_eq!(flag_names(0), "NONE");
    }

    #[test]
    fn histograms_by_direction_object_and_class() {
        let mut s = DirtyStats::new();
        let su = |object_id, flags, start| StateUpdate {
            object_id,
            flags,
            subsystem_start: start,
            ..StateUpdate::default()
        };
        s.record(Direction::C2S, &su(1, 0x9E, None), Some("Akira"));
        s.record(Direction::C2S, &su(1, 0x9E, None), Some("Akira"));
        s.record(Direction::C2S, &su(1, 0x9D, None), Some("Akira"));
        s.record(Direction::S2C, &su(1, 0x20, Some(8)), Some("Akira"));
        s.record(Direction::S2C, &su(2, 0x3E, Some(2)), None);
        let c2s = s.direction(Direction::C2S);
        assert_eq!(c2s.messages, 3);
        assert_eq!(c2s.top_combos(5), [(0x9E, 2), (0x9D, 1)]);
        assert_eq!(c2s.bits[7], 3);
        assert_eq!(c2s.bits[0], 1);
        let s2c = s.direction(Direction::S2C);
        assert_eq!(s2c.start_indices(), [(2, 1), (8, 1)]);
        assert_eq!(s.objects().count(), 3);
        let classes: Vec<String> = s.classes().map(|(d, c, _)| format!("{d}:{c}")).collect();
        assert_eq!(classes, ["c2s:Akira", "s2c:Akira", "s2c:unknown"]);
    }

    #[test]
    fn object_table_is_bounded() {
        let mut s = DirtyStats::new();
        for id in 0..(MAX_OBJECTS as u32 + 10) {
            let su = StateUpdate {
                object_id: id,
                ..StateUpdate::default()
            };
            s.record(Direction::S2C, &su, Some("X"));
        }
        assert_eq!(s.objects().count(), MAX_OBJECTS);
        assert_eq!(s.overflow, 10);
        assert_eq!(
            s.direction(Direction::S2C).messages,
            MAX_OBJECTS as u64 + 10
        );
    }
}
