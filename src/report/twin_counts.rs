//! Signed counts per message digest, bounded in memory by spilling to disk.
//!
//! `bcwire diff` counts, per direction, every digest as +1 in capture A and −1 in
//! capture B; what is left non-zero at the end are the messages without a twin. Two
//! captures of one session cancel out as they are read and the table stays small, but
//! two unrelated captures leave one entry per message. Past a budget the table is
//! therefore written out as a run sorted by digest, and at the end the runs (and what
//! is still in memory) are merged, summing the counts of equal digests: every digest
//! gets exactly the total the in-memory table would have held, whatever was spilled
//! when. Only those totals are used (summed per opcode), so nothing depends on the
//! order in which they are visited.
//!
//! The runs of one table share one anonymous temporary file (`tempfile::tempfile`: the
//! file is unlinked at creation, so the system reclaims it when it is dropped, on
//! error, or if the process dies); each run keeps its own read position and buffer.

use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::hash_map::Entry;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};

/// Bytes a table entry may take: a hashbrown slot is 16 bytes plus a control byte,
/// and just after the table grows (power-of-two buckets, 7/8 full at most) there are
/// up to 2.3 slots per entry, about 39 bytes; spilling copies the entries, sorted,
/// into 16 more.
const BYTES_PER_ENTRY: usize = 56;
/// One spilled entry on disk: the digest and its count, little-endian.
const RECORD: usize = 16;
/// Read buffer of one run while merging.
const RUN_BUFFER: usize = 16 * 1024;
/// Runs merged at once at most; at this many, they are merged into one run first, so
/// the merge buffers stay within `MAX_RUNS × RUN_BUFFER` (4 MB).
const MAX_RUNS: usize = 256;
/// Write buffer of a run being spilled.
const WRITE_BUFFER: usize = 64 * 1024;

/// Digest → signed count, zero counts dropped; see the module docs.
#[derive(Debug)]
pub struct TwinCounts {
    table: FxHashMap<u64, i64>,
    /// Entries the table may hold before it is spilled (at least one).
    max_entries: usize,
    spill: Option<SpillFile>,
}

/// The sorted runs written so far, one after the other in one file.
#[derive(Debug)]
struct SpillFile {
    file: File,
    /// Where each run starts and how many records it has.
    runs: Vec<(u64, u64)>,
    end: u64,
}

impl TwinCounts {
    /// A table that spills past about `budget` bytes (any budget holds one entry).
    pub fn new(budget: usize) -> TwinCounts {
        TwinCounts {
            table: FxHashMap::default(),
            max_entries: (budget / BYTES_PER_ENTRY).max(1),
            spill: None,
        }
    }

    /// Add `delta` copies of `digest`.
    pub fn add(&mut self, digest: u64, delta: i64) -> io::Result<()> {
        match self.table.entry(digest) {
            Entry::Occupied(mut e) => {
                *e.get_mut() += delta;
                if *e.get() == 0 {
                    e.remove();
                }
            }
            Entry::Vacant(e) => {
                e.insert(delta);
                if self.table.len() > self.max_entries {
                    self.spill_table()?;
                }
            }
        }
        Ok(())
    }

    /// Runs written to disk so far (for tests and measurements).
    pub fn runs(&self) -> usize {
        self.spill.as_ref().map_or(0, |s| s.runs.len())
    }

    /// Write the table out as one sorted run and empty it (keeping its allocation: it
    /// fills up again as long as the captures keep differing).
    fn spill_table(&mut self) -> io::Result<()> {
        let mut entries: Vec<(u64, i64)> = self.table.drain().collect();
        entries.sort_unstable_by_key(|e| e.0);
        let spill = match &mut self.spill {
            Some(s) => s,
            None => self.spill.insert(SpillFile {
                file: tempfile::tempfile()?,
                runs: Vec::new(),
                end: 0,
            }),
        };
        let mut run = RunWriter::new(&mut spill.file, spill.end)?;
        for (digest, n) in entries {
            run.push(digest, n)?;
        }
        let (start, len) = run.finish()?;
        spill.runs.push((start, len));
        spill.end = start + len * RECORD as u64;
        if spill.runs.len() >= MAX_RUNS {
            self.compact()?;
        }
        Ok(())
    }

    /// Merge every run into one, in a new file (the old one is dropped, and with it
    /// its disk space).
    fn compact(&mut self) -> io::Result<()> {
        let Some(mut old) = self.spill.take() else {
            return Ok(());
        };
        let mut file = tempfile::tempfile()?;
        let mut run = RunWriter::new(&mut file, 0)?;
        merge(&mut old, Vec::new(), |digest, n| run.push(digest, n))?;
        let (start, len) = run.finish()?;
        self.spill = Some(SpillFile {
            file,
            runs: vec![(start, len)],
            end: len * RECORD as u64,
        });
        Ok(())
    }

    /// Visit every digest whose total count is not zero, with that total, in no
    /// particular order.
    pub fn for_each_total(mut self, mut visit: impl FnMut(u64, i64)) -> io::Result<()> {
        let Some(mut spill) = self.spill.take() else {
            // Nothing spilled: the table holds the totals.
            for (&digest, &n) in &self.table {
                visit(digest, n);
            }
            return Ok(());
        };
        let mut rest: Vec<(u64, i64)> = self.table.drain().collect();
        drop(self.table);
        rest.sort_unstable_by_key(|e| e.0);
        merge(&mut spill, rest, |digest, n| {
            visit(digest, n);
            Ok(())
        })
    }
}

/// Writes one sorted run at `start` of `file`.
struct RunWriter<'a> {
    out: BufWriter<&'a mut File>,
    start: u64,
    len: u64,
}

impl<'a> RunWriter<'a> {
    fn new(file: &'a mut File, start: u64) -> io::Result<RunWriter<'a>> {
        file.seek(SeekFrom::Start(start))?;
        Ok(RunWriter {
            out: BufWriter::with_capacity(WRITE_BUFFER, file),
            start,
            len: 0,
        })
    }

    fn push(&mut self, digest: u64, n: i64) -> io::Result<()> {
        let mut record = [0u8; RECORD];
        record[..8].copy_from_slice(&digest.to_le_bytes());
        record[8..].copy_from_slice(&n.to_le_bytes());
        self.out.write_all(&record)?;
        self.len += 1;
        Ok(())
    }

    /// Where the run starts and how many records it has.
    fn finish(mut self) -> io::Result<(u64, u64)> {
        self.out.flush()?;
        Ok((self.start, self.len))
    }
}

/// Reads one run back through its own buffer (the runs share the file, so each read
/// seeks to where its run is).
struct RunReader {
    next: u64,
    left: u64,
    buf: Vec<u8>,
    pos: usize,
}

impl RunReader {
    fn new((start, len): (u64, u64)) -> RunReader {
        RunReader {
            next: start,
            left: len,
            buf: Vec::new(),
            pos: 0,
        }
    }

    fn read(&mut self, file: &mut File) -> io::Result<Option<(u64, i64)>> {
        if self.pos == self.buf.len() {
            if self.left == 0 {
                return Ok(None);
            }
            let records = self.left.min((RUN_BUFFER / RECORD) as u64);
            self.buf.resize(records as usize * RECORD, 0);
            file.seek(SeekFrom::Start(self.next))?;
            file.read_exact(&mut self.buf)?;
            self.next += records * RECORD as u64;
            self.left -= records;
            self.pos = 0;
        }
        let record = self
            .buf
            .get(self.pos..self.pos + RECORD)
            .ok_or_else(|| io::Error::new(io::ErrorKind::UnexpectedEof, "spilled run cut short"))?;
        let (d, n) = record.split_at(8);
        let digest = u64::from_le_bytes(d.try_into().unwrap_or_default());
        let n = i64::from_le_bytes(n.try_into().unwrap_or_default());
        self.pos += RECORD;
        Ok(Some((digest, n)))
    }
}

/// K-way merge of the runs of `spill` and the sorted `memory` entries: `emit` gets
/// every digest once, in increasing order, with its counts summed, unless they sum
/// to zero.
fn merge(
    spill: &mut SpillFile,
    memory: Vec<(u64, i64)>,
    mut emit: impl FnMut(u64, i64) -> io::Result<()>,
) -> io::Result<()> {
    let mut readers: Vec<RunReader> = spill.runs.iter().map(|&r| RunReader::new(r)).collect();
    let mut memory = memory.into_iter();
    let mem_source = readers.len();
    // Smallest digest first; the source index says where to read the next one.
    let mut heap: BinaryHeap<Reverse<(u64, usize, i64)>> = BinaryHeap::new();
    let mut next = |source: usize| -> io::Result<Option<(u64, i64)>> {
        match readers.get_mut(source) {
            Some(r) => r.read(&mut spill.file),
            None => Ok(memory.next()),
        }
    };
    for source in 0..=mem_source {
        if let Some((d, n)) = next(source)? {
            heap.push(Reverse((d, source, n)));
        }
    }
    let mut current: Option<(u64, i64)> = None;
    while let Some(Reverse((d, source, n))) = heap.pop() {
        if let Some((d, n)) = next(source)? {
            heap.push(Reverse((d, source, n)));
        }
        current = match current {
            Some((cd, cn)) if cd == d => Some((cd, cn + n)),
            Some((cd, cn)) => {
                if cn != 0 {
                    emit(cd, cn)?;
                }
                Some((d, n))
            }
            None => Some((d, n)),
        };
    }
    if let Some((cd, cn)) = current {
        if cn != 0 {
            emit(cd, cn)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    use crate::report::test_rng::Rng;

    fn totals(t: TwinCounts) -> BTreeMap<u64, i64> {
        let mut out = BTreeMap::new();
        t.for_each_total(|d, n| {
            assert!(out.insert(d, n).is_none(), "digest {d} visited twice");
        })
        .unwrap();
        out
    }

    #[test]
    fn spilled_totals_equal_the_in_memory_ones() {
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        let mut spilled = 0;
        for round in 0..300 {
            // Small digest ranges make equal digests (and cancelling counts) common.
            let range = 1 + rng.below(if round % 2 == 0 { 20 } else { 5000 });
            let ops = rng.below(3000);
            let mut want: BTreeMap<u64, i64> = BTreeMap::new();
            // Budgets of one entry, a few entries, and enough never to spill.
            let budgets = [0, BYTES_PER_ENTRY * (1 + rng.below(40) as usize), 1 << 30];
            let mut tables: Vec<TwinCounts> = budgets.iter().map(|&b| TwinCounts::new(b)).collect();
            for _ in 0..ops {
                let d = rng.below(range).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                let delta = if rng.below(2) == 0 { 1 } else { -1 };
                *want.entry(d).or_default() += delta;
                for t in &mut tables {
                    t.add(d, delta).unwrap();
                }
            }
            want.retain(|_, n| *n != 0);
            if tables[0].runs() > 0 {
                spilled += 1;
            }
            assert_eq!(tables[2].runs(), 0);
            for t in tables {
                assert_eq!(totals(t), want, "round {round}");
            }
        }
        // A budget of one entry spills as soon as two digests are waiting for twins.
        assert!(spilled > 250, "{spilled}");
    }

    #[test]
    fn many_runs_are_compacted_and_still_sum_exactly() {
        let mut t = TwinCounts::new(0);
        let mut want: BTreeMap<u64, i64> = BTreeMap::new();
        // Every add spills (budget of one entry): well past MAX_RUNS runs.
        for i in 0..(3 * MAX_RUNS as u64 + 7) {
            let d = i % 97;
            let delta = if i % 3 == 0 { -1 } else { 1 };
            *want.entry(d).or_default() += delta;
            t.add(d, delta).unwrap();
        }
        want.retain(|_, n| *n != 0);
        assert!(t.runs() < MAX_RUNS);
        assert_eq!(totals(t), want);
    }
}
