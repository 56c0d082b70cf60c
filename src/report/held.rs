//! The digests a flow holds while one capture is ahead in it, bounded in memory.
//!
//! `bcwire diff` keeps, per flow, the digests of the capture that is ahead until the
//! other one reaches the same positions (see `report::align`). In step, that is
//! little; but a flow only one capture has, or has much later, is held until the
//! other capture ends. Each flow's digests form a queue of segments, oldest first,
//! each either in memory or spilled to a temporary file shared by all flows
//! ([`HeldStore`]). When the digests in memory over all flows pass a budget, each
//! flow's newest digests are written out; a spilled segment is read back a piece at a time
//! when the other capture catches up. The queue gives back exactly the digests pushed,
//! in order: spilling changes where they wait, not what is compared.
//!
//! The file is anonymous (`tempfile::tempfile`: unlinked at creation, reclaimed by
//! the system when dropped, on error, or if the process dies) and append-only: space
//! of digests read back is not reused, which costs disk (8 bytes per digest spilled),
//! not memory.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};

/// Bytes per held digest.
const DIGEST: usize = 8;
/// Digests read back (and smallest segment spilled) at most at a time.
const MAX_PIECE: usize = 4096;

/// The spill file of all flows and the count of digests held in memory.
#[derive(Debug)]
pub struct HeldStore {
    file: Option<File>,
    end: u64,
    in_memory: usize,
    /// Digests in memory that trigger a spill.
    limit: usize,
    /// The next spill happens past this many (see [`HeldStore::over_budget`]).
    trigger: usize,
    /// Digests read back at a time; segments shorter than this stay in memory.
    piece: usize,
    buf: Vec<u8>,
    spills: usize,
}

impl HeldStore {
    /// A store that spills past about `budget` bytes of digests in memory.
    pub fn new(budget: usize) -> HeldStore {
        let limit = (budget / DIGEST).max(1);
        HeldStore {
            file: None,
            end: 0,
            in_memory: 0,
            limit,
            trigger: limit,
            piece: (limit / 64).clamp(1, MAX_PIECE),
            buf: Vec::new(),
            spills: 0,
        }
    }

    /// Whether the flows' segments should be spilled now.
    pub fn over_budget(&self) -> bool {
        self.in_memory > self.trigger
    }

    /// After a round of [`HeldQueue::spill`] over all flows: segments shorter than a
    /// piece stay in memory, and with many flows they may add up to more than the
    /// limit; the next round then waits until half the limit more is held, so rounds
    /// (each visiting every flow) stay at least that many digests apart.
    pub fn spilled_all(&mut self) {
        self.trigger = self.limit.max(self.in_memory + self.limit / 2);
    }

    /// Segments written to disk so far (for tests and measurements).
    pub fn spills(&self) -> usize {
        self.spills
    }

    fn write(&mut self, digests: &VecDeque<u64>) -> io::Result<u64> {
        let file = match &mut self.file {
            Some(f) => f,
            None => self.file.insert(tempfile::tempfile()?),
        };
        self.buf.clear();
        for d in digests {
            self.buf.extend_from_slice(&d.to_le_bytes());
        }
        let at = self.end;
        file.seek(SeekFrom::Start(at))?;
        file.write_all(&self.buf)?;
        self.end += self.buf.len() as u64;
        self.spills += 1;
        Ok(at)
    }

    fn read(&mut self, at: u64, count: usize) -> io::Result<VecDeque<u64>> {
        let file = self
            .file
            .as_mut()
            .ok_or_else(|| io::Error::other("spilled digests without a spill file"))?;
        self.buf.resize(count * DIGEST, 0);
        file.seek(SeekFrom::Start(at))?;
        file.read_exact(&mut self.buf)?;
        Ok(self
            .buf
            .chunks_exact(DIGEST)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
            .collect())
    }
}

#[derive(Debug)]
enum Segment {
    Memory(VecDeque<u64>),
    Spilled { at: u64, count: usize },
}

/// One flow's held digests, oldest first; see the module docs.
#[derive(Debug, Default)]
pub struct HeldQueue {
    segments: VecDeque<Segment>,
}

impl HeldQueue {
    pub fn push_back(&mut self, digest: u64, store: &mut HeldStore) {
        match self.segments.back_mut() {
            Some(Segment::Memory(m)) => m.push_back(digest),
            _ => self
                .segments
                .push_back(Segment::Memory(VecDeque::from([digest]))),
        }
        store.in_memory += 1;
    }

    pub fn pop_front(&mut self, store: &mut HeldStore) -> io::Result<Option<u64>> {
        loop {
            match self.segments.front_mut() {
                None => return Ok(None),
                Some(Segment::Memory(m)) => {
                    let d = m.pop_front();
                    if m.is_empty() {
                        self.segments.pop_front();
                    }
                    if let Some(d) = d {
                        store.in_memory -= 1;
                        return Ok(Some(d));
                    }
                }
                Some(Segment::Spilled { at, count }) => {
                    // Bring back the next piece in front of the rest.
                    let n = (*count).min(store.piece);
                    let piece = store.read(*at, n)?;
                    *at += (n * DIGEST) as u64;
                    *count -= n;
                    if *count == 0 {
                        self.segments.pop_front();
                    }
                    store.in_memory += piece.len();
                    self.segments.push_front(Segment::Memory(piece));
                }
            }
        }
    }

    /// Drop every held digest (the flow has nothing more to compare).
    pub fn clear(&mut self, store: &mut HeldStore) {
        for s in self.segments.drain(..) {
            if let Segment::Memory(m) = s {
                store.in_memory -= m.len();
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.segments.is_empty()
    }

    /// Write out the newest digests, if at least a piece of them is in memory. Only
    /// the back segment takes pushes; a segment in front is a piece read back, about
    /// to be compared, and writing it out again would only cost disk.
    pub fn spill(&mut self, store: &mut HeldStore) -> io::Result<()> {
        let Some(Segment::Memory(m)) = self.segments.back() else {
            return Ok(());
        };
        if m.len() < store.piece {
            return Ok(());
        }
        let count = m.len();
        let at = store.write(m)?;
        store.in_memory -= count;
        self.segments.pop_back();
        // Written right after this flow's previous spill: one segment.
        if let Some(Segment::Spilled { at: prev, count: n }) = self.segments.back_mut() {
            if *prev + (*n * DIGEST) as u64 == at {
                *n += count;
                return Ok(());
            }
        }
        self.segments.push_back(Segment::Spilled { at, count });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::report::test_rng::Rng;

    #[test]
    fn queues_give_back_what_was_pushed_in_order_whatever_was_spilled() {
        let mut rng = Rng(0xD1B5_4A32_D192_ED03);
        for round in 0..200 {
            let budget = DIGEST * rng.below(300) as usize;
            let mut store = HeldStore::new(budget);
            let flows = 1 + rng.below(5) as usize;
            let mut queues: Vec<HeldQueue> = (0..flows).map(|_| HeldQueue::default()).collect();
            let mut want: Vec<VecDeque<u64>> = vec![VecDeque::new(); flows];
            let mut next = 0u64;
            for _ in 0..rng.below(4000) {
                let f = rng.below(flows as u64) as usize;
                match rng.below(10) {
                    0..=5 => {
                        queues[f].push_back(next, &mut store);
                        want[f].push_back(next);
                        next += 1;
                    }
                    6..=8 => {
                        let got = queues[f].pop_front(&mut store).unwrap();
                        assert_eq!(got, want[f].pop_front(), "round {round}");
                    }
                    _ => {
                        if rng.below(20) == 0 {
                            queues[f].clear(&mut store);
                            want[f].clear();
                        }
                    }
                }
                if store.over_budget() {
                    for q in &mut queues {
                        q.spill(&mut store).unwrap();
                    }
                    store.spilled_all();
                }
                let held: usize = want.iter().map(VecDeque::len).sum();
                assert!(store.in_memory <= held, "round {round}");
            }
            for (q, w) in queues.iter_mut().zip(&mut want) {
                while let Some(d) = q.pop_front(&mut store).unwrap() {
                    assert_eq!(Some(d), w.pop_front(), "round {round}");
                }
                assert!(w.is_empty() && q.is_empty());
            }
            assert_eq!(store.in_memory, 0, "round {round}");
        }
    }

    #[test]
    fn memory_stays_within_the_budget_for_one_long_queue() {
        let mut store = HeldStore::new(DIGEST * 1000);
        let mut q = HeldQueue::default();
        for d in 0..100_000 {
            q.push_back(d, &mut store);
            if store.over_budget() {
                q.spill(&mut store).unwrap();
                store.spilled_all();
            }
            assert!(store.in_memory <= 1001);
        }
        assert!(store.spills() > 50);
        for d in 0..100_000 {
            assert_eq!(q.pop_front(&mut store).unwrap(), Some(d));
            assert!(store.in_memory <= 1001);
        }
        assert_eq!(q.pop_front(&mut store).unwrap(), None);
    }
}
