//! Counts at a fine time resolution, for the page's zoom: a brushed time window is
//! drawn again in bins of the interval the reader chooses (as Wireshark's I/O graph
//! does), which the per-second tallies cannot give below one second.
//!
//! Counts are kept per tick of [`FineCounts::tick_ns`]: 100 ms to begin with, ten
//! times longer each time the capture outgrows [`MAX_TICKS`] ticks, so a long capture
//! costs no more memory (or page) than a short one.

use super::pending::at_latest;
use std::collections::BTreeMap;

/// Ticks a capture may span before the tick grows tenfold.
pub const MAX_TICKS: i64 = 40_000;
/// The first tick: 100 ms.
pub const FIRST_TICK_NS: i64 = 100_000_000;

/// ACKs matched to a message in one tick, and their delays.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FineAcks {
    pub count: u32,
    pub sum_us: i64,
    pub max_us: i64,
}

/// Counts per direction (by `Direction::index`) and tick.
#[derive(Debug, Clone, PartialEq)]
pub struct FineCounts {
    pub tick_ns: i64,
    /// Delivered game messages by opcode, as the rate charts count them.
    pub messages: [BTreeMap<u8, BTreeMap<i64, u32>>; 2],
    pub retransmissions: [BTreeMap<i64, u32>; 2],
    pub acks: [BTreeMap<i64, FineAcks>; 2],
}

impl Default for FineCounts {
    fn default() -> Self {
        FineCounts {
            tick_ns: FIRST_TICK_NS,
            messages: Default::default(),
            retransmissions: Default::default(),
            acks: Default::default(),
        }
    }
}

fn coarsen<V: Copy>(m: &mut BTreeMap<i64, V>, merge: impl Fn(&mut V, V)) {
    let old = std::mem::take(m);
    for (k, v) in old {
        match m.entry(k.div_euclid(10)) {
            std::collections::btree_map::Entry::Vacant(e) => {
                e.insert(v);
            }
            std::collections::btree_map::Entry::Occupied(mut e) => merge(e.get_mut(), v),
        }
    }
}

impl FineCounts {
    /// The tick of a time `ns` after the capture's first datagram, growing the tick
    /// first when that time lies beyond [`MAX_TICKS`] of them.
    fn tick(&mut self, ns: i64) -> i64 {
        let ns = ns.max(0);
        while ns / self.tick_ns >= MAX_TICKS && self.tick_ns < i64::MAX / 10 {
            self.tick_ns *= 10;
            let add = |a: &mut u32, b: u32| *a = a.saturating_add(b);
            for d in 0..2 {
                for m in self.messages[d].values_mut() {
                    coarsen(m, add);
                }
                coarsen(&mut self.retransmissions[d], add);
                coarsen(&mut self.acks[d], |a: &mut FineAcks, b: FineAcks| {
                    a.count = a.count.saturating_add(b.count);
                    a.sum_us = a.sum_us.saturating_add(b.sum_us);
                    a.max_us = a.max_us.max(b.max_us);
                });
            }
        }
        ns / self.tick_ns
    }

    /// Where the tick of a time `ns` after the first datagram begins (ns): a key
    /// that stays right when the tick grows (the time lies within the longer tick that
    /// begins at the same instant).
    pub fn tick_start(&mut self, ns: i64) -> i64 {
        self.tick(ns) * self.tick_ns
    }

    pub fn message(&mut self, dir: usize, ns: i64, opcode: u8) {
        self.messages(dir, ns, opcode, 1);
    }

    /// `n` delivered messages of `opcode` in the tick of `ns`.
    pub fn messages(&mut self, dir: usize, ns: i64, opcode: u8, n: u64) {
        let k = self.tick(ns);
        let add = u32::try_from(n).unwrap_or(u32::MAX);
        at_latest(self.messages[dir].entry(opcode).or_default(), k, |c| {
            *c = c.saturating_add(add)
        });
    }

    pub fn retransmission(&mut self, dir: usize, ns: i64) {
        let k = self.tick(ns);
        at_latest(&mut self.retransmissions[dir], k, |n| {
            *n = n.saturating_add(1)
        });
    }

    pub fn ack(&mut self, dir: usize, ns: i64, delay_ns: i64) {
        let k = self.tick(ns);
        let us = delay_ns.max(0) / 1000;
        at_latest(&mut self.acks[dir], k, |a| {
            a.count = a.count.saturating_add(1);
            a.sum_us = a.sum_us.saturating_add(us);
            a.max_us = a.max_us.max(us);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_grow_and_keep_every_count() {
        let mut f = FineCounts::default();
        f.message(0, 50_000_000, 0x1C);
        f.message(0, 150_000_000, 0x1C);
        assert_eq!(f.messages[0][&0x1C].len(), 2);
        // An hour and a half at 100 ms is more than MAX_TICKS: one-second ticks.
        f.message(0, 5_400_000_000_000, 0x1C);
        assert_eq!(f.tick_ns, 1_000_000_000);
        let m = &f.messages[0][&0x1C];
        assert_eq!(m.values().sum::<u32>(), 3);
        assert_eq!(m.get(&0), Some(&2));
        assert_eq!(m.get(&5400), Some(&1));
    }
}
