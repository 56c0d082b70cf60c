//! Counters of the latest second (or tick) held close at hand while a capture is read.
//!
//! The report counts every message under its second and opcode, and every datagram
//! under its client's second, in maps that span the whole capture. Records arrive in
//! time order, so almost every count lands on the latest key: [`OpcodeTally`] keeps
//! that key's counts in an array and adds them to the map once the key changes, and
//! [`at_latest`] reaches the latest entry of a map without a search. The totals are
//! the same; a long capture no longer pays a search per message in a map that grows
//! with it.

use std::collections::BTreeMap;

/// Run `f` on the value under `key`, inserted as the default if absent: the map's last
/// entry when that is the key (the usual case when keys are times read in order).
pub fn at_latest<V: Default>(m: &mut BTreeMap<i64, V>, key: i64, f: impl FnOnce(&mut V)) {
    if let Some(mut last) = m.last_entry() {
        if *last.key() == key {
            f(last.get_mut());
            return;
        }
    }
    f(m.entry(key).or_default());
}

/// Message counts by opcode under one key, not yet added to their map.
#[derive(Debug)]
pub struct OpcodeTally {
    key: i64,
    counts: [u64; 256],
    /// Opcodes with a count, in order of their first message under `key`.
    seen: Vec<u8>,
}

impl Default for OpcodeTally {
    fn default() -> OpcodeTally {
        OpcodeTally {
            key: 0,
            counts: [0; 256],
            seen: Vec::new(),
        }
    }
}

impl OpcodeTally {
    /// Count one message of `opcode` under `key`; the counts held under another key
    /// are handed to `flush` (key, opcode, count) first.
    pub fn add(&mut self, key: i64, opcode: u8, flush: impl FnMut(i64, u8, u64)) {
        if key != self.key {
            self.drain(flush);
            self.key = key;
        }
        let n = &mut self.counts[usize::from(opcode)];
        if *n == 0 {
            self.seen.push(opcode);
        }
        *n += 1;
    }

    /// Hand every held count to `flush` (key, opcode, count) and hold none.
    pub fn drain(&mut self, mut flush: impl FnMut(i64, u8, u64)) {
        for op in self.seen.drain(..) {
            let n = std::mem::take(&mut self.counts[usize::from(op)]);
            flush(self.key, op, n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latest_entry_or_a_new_one() {
        let mut m: BTreeMap<i64, u32> = BTreeMap::new();
        for k in [1, 1, 2, 1, 2, 2, 0] {
            at_latest(&mut m, k, |v| *v += 1);
        }
        assert_eq!(m, BTreeMap::from([(0, 1), (1, 3), (2, 3)]));
    }

    #[test]
    fn tally_hands_on_every_count() {
        let mut t = OpcodeTally::default();
        let mut out: BTreeMap<(i64, u8), u64> = BTreeMap::new();
        let mut put = |k: i64, op: u8, n: u64| *out.entry((k, op)).or_default() += n;
        for (k, op) in [(0, 1), (0, 1), (0, 2), (1, 1), (0, 2), (0, 2)] {
            t.add(k, op, &mut put);
        }
        t.drain(&mut put);
        assert_eq!(out, BTreeMap::from([((0, 1), 2), ((0, 2), 3), ((1, 1), 1)]));
    }
}
