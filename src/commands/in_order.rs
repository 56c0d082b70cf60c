//! Several inputs read at once, one per core, their output written in input order.
//!
//! Each input is read by a task of rayon's pool into a [`Spool`] of its own; the
//! calling thread writes the spools out one after the other. The spool of the input
//! being written (the head) is a bounded queue: its reader waits when the writer falls
//! behind. The spool of an input further on keeps its first [`BUDGET`] bytes in memory
//! and appends the rest to an anonymous temporary file, read back once its turn comes:
//! so a core never waits for the inputs before it, and memory stays bounded however
//! large the captures are. The tasks start in input order (FIFO), and at most
//! [`AHEAD`] inputs past the head are started, so few temporary files are open at once.

use anyhow::Result;
use std::collections::VecDeque;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::sync::{Condvar, Mutex, MutexGuard};

/// Bytes a reader hands over at a time.
const CHUNK: usize = 1 << 16;

/// Bytes of one input's output kept in memory; past it the head's reader waits and
/// the others spill to disk.
const BUDGET: usize = 4 << 20;

/// Inputs started past the one being written, per core.
const AHEAD: usize = 2;

/// One input's output on its way from its reader to the writer.
#[derive(Default)]
pub struct Spool {
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Default)]
struct State {
    /// Chunks in memory, all older than anything in the spill file.
    mem: VecDeque<Vec<u8>>,
    mem_bytes: usize,
    spill: Option<File>,
    spill_written: u64,
    spill_read: u64,
    /// The writer is on this input: its reader waits instead of spilling.
    head: bool,
    /// The reader is done (whatever its outcome).
    done: bool,
    /// The output went away: readers stop.
    cancelled: bool,
}

fn gone() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::BrokenPipe, "output closed")
}

impl Spool {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A reader that panicked leaves its spool as it was; the writer reads on.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wait<'a>(&self, st: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        self.changed.wait(st).unwrap_or_else(|e| e.into_inner())
    }

    /// Hand over a chunk (reader side).
    fn push(&self, chunk: Vec<u8>) -> std::io::Result<()> {
        let mut st = self.lock();
        loop {
            if st.cancelled {
                return Err(gone());
            }
            // Once a spill has started, later chunks follow it until it is read back.
            let spilling = st.spill_written > st.spill_read;
            if !spilling && (st.mem.is_empty() || st.mem_bytes + chunk.len() <= BUDGET) {
                st.mem_bytes += chunk.len();
                st.mem.push_back(chunk);
                break;
            }
            if !spilling && st.head {
                st = self.wait(st);
                continue;
            }
            if st.spill.is_none() {
                st.spill = Some(tempfile::tempfile()?);
            }
            let at = st.spill_written;
            let file = st.spill.as_mut().ok_or_else(gone)?;
            file.seek(SeekFrom::Start(at))?;
            file.write_all(&chunk)?;
            st.spill_written += chunk.len() as u64;
            break;
        }
        drop(st);
        self.changed.notify_all();
        Ok(())
    }

    /// The reader is done.
    fn finish(&self) {
        self.lock().done = true;
        self.changed.notify_all();
    }

    fn cancel(&self) {
        self.lock().cancelled = true;
        self.changed.notify_all();
    }

    /// Writes everything the reader hands over until it is done (writer side).
    /// `first`: called on the input's first bytes, before they are written.
    fn drain(&self, w: &mut dyn Write, first: &mut dyn FnMut(&[u8]) -> Vec<u8>) -> Result<()> {
        let mut st = self.lock();
        st.head = true;
        self.changed.notify_all();
        let mut started = false;
        loop {
            let chunk = if let Some(c) = st.mem.pop_front() {
                st.mem_bytes -= c.len();
                c
            } else if st.spill_read < st.spill_written {
                let n = (st.spill_written - st.spill_read).min(CHUNK as u64) as usize;
                let at = st.spill_read;
                let mut c = vec![0; n];
                let file = st.spill.as_mut().ok_or_else(gone)?;
                file.seek(SeekFrom::Start(at))?;
                file.read_exact(&mut c)?;
                st.spill_read += n as u64;
                if st.spill_read == st.spill_written {
                    // Read back whole: the file starts again from its beginning.
                    st.spill_read = 0;
                    st.spill_written = 0;
                }
                c
            } else if st.done {
                break;
            } else {
                st = self.wait(st);
                continue;
            };
            drop(st);
            self.changed.notify_all();
            if started {
                w.write_all(&chunk)?;
            } else if !chunk.is_empty() {
                started = true;
                w.write_all(&first(&chunk))?;
            }
            st = self.lock();
        }
        Ok(())
    }
}

/// A reader's output: collects bytes into chunks for its [`Spool`].
pub struct SpoolWriter<'s> {
    spool: &'s Spool,
    buf: Vec<u8>,
}

impl Write for SpoolWriter<'_> {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.buf.len() >= CHUNK {
            self.flush()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if !self.buf.is_empty() {
            let chunk = std::mem::replace(&mut self.buf, Vec::with_capacity(CHUNK));
            self.spool.push(chunk)?;
        }
        Ok(())
    }
}

/// Reads `count` inputs at once and writes their output in order.
///
/// `read(i, w)` reads input `i` on a task of the pool, writing its output to `w`, and
/// returns what the writer needs to know of it afterwards. `write_first(i, bytes)` gets
/// the first bytes of input `i`'s output and returns what to write instead (a record
/// separator of the whole output may differ from the one the reader wrote).
/// `after(i, outcome)` runs on the calling thread once input `i`'s output is written;
/// an error from it stops everything and is returned.
pub fn run<T: Send>(
    count: usize,
    w: &mut dyn Write,
    read: impl Fn(usize, &mut SpoolWriter) -> T + Sync,
    write_first: &mut dyn FnMut(usize, &[u8]) -> Vec<u8>,
    after: &mut dyn FnMut(usize, T) -> Result<()>,
) -> Result<()> {
    let spools: Vec<Spool> = (0..count).map(|_| Spool::default()).collect();
    let outcomes: Vec<Mutex<Option<T>>> = (0..count).map(|_| Mutex::new(None)).collect();
    // The index of the input being written: a task waits before starting an input
    // more than `ahead` past it.
    let head = Mutex::new(0usize);
    let moved = Condvar::new();
    let ahead = AHEAD * rayon::current_num_threads().max(1);
    let (spools, outcomes, head, moved, read) = (&spools, &outcomes, &head, &moved, &read);
    let mut result = Ok(());
    rayon::in_place_scope_fifo(|scope| {
        for (i, (spool, outcome)) in spools.iter().zip(outcomes).enumerate() {
            scope.spawn_fifo(move |_| {
                let mut at = head.lock().unwrap_or_else(|e| e.into_inner());
                while i > *at + ahead {
                    at = moved.wait(at).unwrap_or_else(|e| e.into_inner());
                }
                drop(at);
                let mut sw = SpoolWriter {
                    spool,
                    buf: Vec::with_capacity(CHUNK),
                };
                let cancelled = spool.lock().cancelled;
                if !cancelled {
                    // A reader that panics still finishes its spool (below), so the
                    // writer is not left waiting; its input then counts as failed.
                    let done =
                        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| read(i, &mut sw)));
                    // What is left of the output; an error here is the output gone.
                    let _ = sw.flush();
                    *outcome.lock().unwrap_or_else(|e| e.into_inner()) = done.ok();
                }
                spool.finish();
            });
        }
        for (i, (spool, outcome)) in spools.iter().zip(outcomes).enumerate() {
            let step = spool
                .drain(w, &mut |bytes| write_first(i, bytes))
                .and_then(|()| {
                    let done = outcome.lock().unwrap_or_else(|e| e.into_inner()).take();
                    match done {
                        Some(o) => after(i, o),
                        None => Err(anyhow::anyhow!("input {i} was not read to its end")),
                    }
                });
            *head.lock().unwrap_or_else(|e| e.into_inner()) = i + 1;
            moved.notify_all();
            if let Err(e) = step {
                for s in &spools[i..] {
                    s.cancel();
                }
                result = Err(e);
                break;
            }
        }
        if result.is_err() {
            // Tasks still waiting for their turn start, see the cancel and stop.
            *head.lock().unwrap_or_else(|e| e.into_inner()) = count;
            moved.notify_all();
        }
    });
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each input writes a known sequence, long enough for some to spill; the output
    /// is the concatenation in input order.
    #[test]
    fn outputs_come_out_in_input_order() {
        let sizes = [0usize, 10, 3 * BUDGET, 1, BUDGET + 7, 70_000, 0, 5];
        let make = |i: usize| -> Vec<u8> {
            (0..sizes[i])
                .map(|k| (k as u32).wrapping_mul(31).wrapping_add(i as u32) as u8)
                .collect()
        };
        let mut out = Vec::new();
        let mut seen = Vec::new();
        run(
            sizes.len(),
            &mut out,
            |i, w| {
                // Odd-sized writes, so that chunks and writes do not line up.
                for piece in make(i).chunks(1000 + i) {
                    w.write_all(piece).unwrap();
                }
                i * 2
            },
            &mut |_, b| b.to_vec(),
            &mut |i, o| {
                seen.push((i, o));
                Ok(())
            },
        )
        .unwrap();
        let want: Vec<u8> = (0..sizes.len()).flat_map(make).collect();
        assert!(out == want, "output differs from the inputs in order");
        let order: Vec<(usize, usize)> = (0..sizes.len()).map(|i| (i, i * 2)).collect();
        assert_eq!(seen, order);
    }

    /// An input written in full while the one before it is still being read goes
    /// past its memory budget and spills; it comes back whole and in order.
    #[test]
    fn an_input_read_ahead_spills_and_comes_back_in_order() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let second_done = AtomicBool::new(false);
        let big: Vec<u8> = (0..3 * BUDGET + 123).map(|k| (k % 251) as u8).collect();
        let mut out = Vec::new();
        run(
            2,
            &mut out,
            |i, w| {
                if i == 0 {
                    // Give the second input time to be read whole (on a pool of one
                    // thread it comes after this one: then it does not spill).
                    let start = std::time::Instant::now();
                    while rayon::current_num_threads() > 1
                        && !second_done.load(Ordering::Acquire)
                        && start.elapsed() < std::time::Duration::from_secs(20)
                    {
                        std::thread::yield_now();
                    }
                    w.write_all(b"first;").unwrap();
                } else {
                    for piece in big.chunks(4097) {
                        w.write_all(piece).unwrap();
                    }
                    second_done.store(true, Ordering::Release);
                }
            },
            &mut |_, b| b.to_vec(),
            &mut |_, ()| Ok(()),
        )
        .unwrap();
        assert!(out.starts_with(b"first;"));
        assert!(out[6..] == big[..], "the spilled input came back changed");
    }

    #[test]
    fn the_first_bytes_of_each_input_can_be_replaced() {
        let mut out = Vec::new();
        run(
            3,
            &mut out,
            |i, w| {
                write!(w, "[{i}]").unwrap();
            },
            &mut |i, b| if i == 0 { b.to_vec() } else { b[1..].to_vec() },
            &mut |_, ()| Ok(()),
        )
        .unwrap();
        assert_eq!(out, b"[0]1]2]");
    }

    /// The writer failing stops the readers: their writes fail, and the error comes
    /// back.
    #[test]
    fn an_output_that_fails_stops_the_readers() {
        struct Failing;
        impl Write for Failing {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(gone())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let r = run(
            6,
            &mut Failing,
            |_, w| {
                // Far past what a spool holds: a reader that was not stopped would
                // spill all of it.
                let block = vec![7u8; CHUNK];
                for _ in 0..(8 * BUDGET / CHUNK) {
                    if w.write_all(&block).is_err() {
                        return false;
                    }
                }
                true
            },
            &mut |_, b| b.to_vec(),
            &mut |_, _| Ok(()),
        );
        assert!(r.is_err());
    }
}
