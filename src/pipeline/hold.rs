//! Standard input read against a selection that names players (`--client Worf`,
//! `-Y 'client == Worf'`): a file is read twice, the first time to learn every
//! client's name, but a stream cannot be, and a client sends its name only after its
//! first datagrams (the connect, the checksum exchange). So the records of a client
//! whose name is not known yet are held here and handed on, in their order, the
//! moment the name arrives; every other record streams through at once. The hold is
//! bounded: a record held longer than [`HOLD_SECONDS`] of capture time, or beyond
//! [`HOLD_RECORDS`] held records, is handed on as things stand (a note counts them),
//! and whatever is held at the end of the input is handed on then.

use super::names::Names;
use super::record::PacketRecord;
use super::{Control, FieldTrees, Sink};
use anyhow::Result;
use std::collections::VecDeque;

/// The most records held at once.
pub const HOLD_RECORDS: usize = 20_000;
/// The longest a record is held, in seconds of capture time.
pub const HOLD_SECONDS: i64 = 10;

/// A sink that holds the records of unnamed clients for the sink it wraps.
pub struct HoldUntilNamed<'a> {
    inner: &'a mut dyn Sink,
    held: VecDeque<PacketRecord>,
    /// Records handed on before their client's name was known.
    released_unnamed: u64,
    stopped: bool,
    /// Sessions that ended while records of theirs were held: announced once those
    /// are handed on.
    ended: Vec<usize>,
}

impl<'a> HoldUntilNamed<'a> {
    pub fn new(inner: &'a mut dyn Sink) -> HoldUntilNamed<'a> {
        HoldUntilNamed {
            inner,
            held: VecDeque::new(),
            released_unnamed: 0,
            stopped: false,
            ended: Vec::new(),
        }
    }

    /// Records handed on before their client's name was known (past the bounds, or at
    /// the end of the input).
    pub fn released_unnamed(&self) -> u64 {
        self.released_unnamed
    }

    fn pass(&mut self, p: &PacketRecord, names: &dyn Names) -> Result<Control> {
        if self.stopped {
            return Ok(Control::Stop);
        }
        let control = self.inner.packet(p, names)?;
        self.stopped = control == Control::Stop;
        Ok(control)
    }

    /// Hands on, in order, every held record whose client is now named, and those past
    /// the bounds (`now`: the capture time of the newest record).
    fn release(&mut self, names: &dyn Names, now: i64) -> Result<Control> {
        let mut k = 0;
        while k < self.held.len() {
            let h = &self.held[k];
            let named = names.client_name(h.session, h.client).is_some();
            let overdue = k == 0
                && (self.held.len() > HOLD_RECORDS
                    || now.saturating_sub(h.ts_ns) > HOLD_SECONDS * 1_000_000_000);
            if named || overdue {
                let h = self.held.remove(k).expect("k is in range");
                if !named {
                    self.released_unnamed += 1;
                }
                if self.pass(&h, names)? == Control::Stop {
                    return Ok(Control::Stop);
                }
            } else {
                k += 1;
            }
        }
        self.announce_ended();
        Ok(Control::Continue)
    }

    /// Announces the ended sessions none of whose records is held any more.
    fn announce_ended(&mut self) {
        let held = &self.held;
        let (done, waiting): (Vec<usize>, Vec<usize>) = self
            .ended
            .iter()
            .partition(|s| !held.iter().any(|h| h.session == **s));
        self.ended = waiting;
        for s in done {
            self.inner.session_ended(s);
        }
    }
}

impl Sink for HoldUntilNamed<'_> {
    fn packet(&mut self, p: &PacketRecord, names: &dyn Names) -> Result<Control> {
        if self.stopped {
            return Ok(Control::Stop);
        }
        let named = names.client_name(p.session, p.client).is_some();
        // Records of a client just named go first, in their order, then this one.
        if self.release(names, p.ts_ns)? == Control::Stop {
            return Ok(Control::Stop);
        }
        if named {
            self.pass(p, names)
        } else {
            self.held.push_back(p.clone());
            Ok(Control::Continue)
        }
    }

    fn field_trees(&self) -> FieldTrees {
        self.inner.field_trees()
    }

    fn links_relays(&self) -> bool {
        self.inner.links_relays()
    }

    fn reads_flow_counts(&self) -> bool {
        self.inner.reads_flow_counts()
    }

    fn session_ended(&mut self, session: usize) {
        // Held records of the session go first: the sink may let go of its state.
        if self.held.iter().any(|h| h.session == session) {
            self.ended.push(session);
        } else {
            self.inner.session_ended(session);
        }
    }

    fn frame_read(&mut self, ts_ns: i64, ts_digits: u8) {
        self.inner.frame_read(ts_ns, ts_digits);
    }

    fn end(&mut self, names: &dyn Names) -> Result<Control> {
        while let Some(h) = self.held.pop_front() {
            if names.client_name(h.session, h.client).is_none() {
                self.released_unnamed += 1;
            }
            if self.pass(&h, names)? == Control::Stop {
                return Ok(Control::Stop);
            }
        }
        self.announce_ended();
        self.inner.end(names)
    }
}
