//! The front of the pipeline: reading frames, the network layers and deciphering.
//!
//! None of it depends on what later stages learn (sessions, clients, phases), so it can
//! run ahead of them — on another thread when the machine has a core to spare — and
//! hand over batches of [`Item`]s in capture order.
//!
//! Deciphering (and the transport walk, which depends on the bytes alone) happens
//! here, before a datagram's flow is known: a game-port payload
//! that is not GameSpy text is deciphered as soon as it is read, a few at a time so
//! that their independent keystream chains overlap (`cipher::decrypt_many`).
//! Classification reads only the clear first byte, and datagrams that turn out not to
//! be BC never show their payload, so nothing sees the difference.

use crate::capture::{CaptureError, CaptureReader, Frame, Truncation};
use crate::diag::Code;
use crate::net::{Datagram, FragmentReport, NetDecoder, NetOutcome};
use crate::pipeline::summary::CompressionSummary;
use crate::transport::cipher;
use crate::transport::packet::{self, Packet};

/// Frame bytes per batch at most (give or take a frame): with few batches in flight,
/// this bounds the memory held between the stages whatever the frame sizes.
pub const MAX_BATCH_BYTES: usize = 128 * 1024;

/// Transport walks kept for reuse: enough for the batches in flight.
const MAX_SPARE_PACKETS: usize = 768;
/// Walks with longer message lists are freed rather than kept (see `MAX_SPARE_PACKETS`).
const MAX_SPARE_MESSAGES: usize = 16;

/// What the summary needs of a frame once its datagram is handled.
#[derive(Debug, Clone, Default)]
pub struct FrameMeta {
    pub ts_ns: i64,
    pub len: usize,
    pub link_type: u32,
    /// The pcapng packet comment (rare: boxed to keep the common item small).
    pub comment: Option<Box<str>>,
    /// [`Frame::ts_digits`].
    pub ts_digits: u8,
}

impl FrameMeta {
    fn of(frame: &Frame) -> FrameMeta {
        FrameMeta {
            ts_ns: frame.ts_ns,
            len: frame.data.len(),
            link_type: frame.link_type,
            // Several comments are one text, a line each (as the records show them).
            comment: (!frame.comments.is_empty()).then(|| frame.comments.join("\n").into()),
            ts_digits: frame.ts_digits,
        }
    }
}

/// One step of the capture, in order.
// Nearly every item is a frame: boxing it would allocate per frame for the sake of
// the rare read error.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Item {
    /// A frame and what the network layers made of it. `parsed` is set when a game
    /// payload was deciphered here: its transport walk, which depends on the bytes
    /// alone, done here too.
    Frame {
        meta: FrameMeta,
        outcome: NetOutcome,
        parsed: Option<Packet>,
    },
    /// A read error or flaw that does not end the capture.
    Problem(Code, String),
    /// A read error that ends the capture.
    Fatal(Code, String),
}

/// How the read ended: what the summary reports once every item is handled.
#[derive(Debug, Default)]
pub struct FrontEnd {
    pub truncation: Option<Truncation>,
    pub compression: Option<CompressionSummary>,
    /// Reader notes not yet handed over (a capture without frames after them).
    pub notes: Vec<crate::diag::Warning>,
    pub fragments: FragmentReport,
}

/// What the later stages hand back to the front once a batch is handled: the payload
/// buffers of its datagrams and the transport walks done with ([`Front::take_back`]).
#[derive(Debug, Default)]
pub struct Returns {
    payloads: Vec<Vec<u8>>,
    packets: Vec<Packet>,
}

impl Returns {
    /// Room for the buffers of `items` front items: growing empty lists by pushes
    /// costs more.
    pub fn with_capacity(items: usize) -> Returns {
        Returns {
            payloads: Vec::with_capacity(items),
            packets: Vec::with_capacity(items),
        }
    }

    pub fn payload(&mut self, p: Vec<u8>) {
        self.payloads.push(p);
    }

    pub fn packet(&mut self, p: Packet) {
        self.packets.push(p);
    }

    /// A walk to parse into, for a datagram the front did not walk.
    pub fn take_packet(&mut self) -> Packet {
        self.packets.pop().unwrap_or_default()
    }
}

/// Reads frames into batches of items.
pub struct Front {
    reader: CaptureReader,
    net: NetDecoder,
    game_port: u16,
    frame: Frame,
    /// Game-port datagrams waiting to be deciphered together: the last `waiting`
    /// items of the batch being filled. Every other item is pushed only once they are
    /// deciphered, so they are always its tail, and they are pushed once, where they
    /// stay, instead of being moved from a list of their own.
    waiting: usize,
    /// How many wait at most: `cipher::LANES`, or 1 to hand each frame on at once.
    gather: usize,
    spare_packets: Vec<Packet>,
    /// The room of the list of payloads handed to the cipher, kept between batches
    /// (always empty here). Built afresh on the stack, the list (`cipher::LANES`
    /// slices, 8 KiB) was copied whole once made.
    views: Vec<&'static mut [u8]>,
    done: bool,
}

impl Front {
    /// With `gather` false every frame is handed on as soon as it is read (a live
    /// capture on standard input); otherwise game datagrams are deciphered in groups.
    pub fn new(reader: CaptureReader, game_port: u16, gather: bool) -> Front {
        Front {
            reader,
            net: NetDecoder::default(),
            game_port,
            frame: Frame::default(),
            waiting: 0,
            gather: if gather { cipher::LANES } else { 1 },
            spare_packets: Vec::new(),
            views: Vec::with_capacity(cipher::LANES),
            done: false,
        }
    }

    /// Appends up to about `max` items (and at most about [`MAX_BATCH_BYTES`] of frame
    /// data) to `batch`, besides the game datagrams gathered for the cipher (up to
    /// `cipher::LANES`); false once the capture has ended (the last items are in
    /// `batch`).
    pub fn fill(&mut self, batch: &mut Vec<Item>, max: usize) -> bool {
        let mut bytes = 0;
        // The datagrams gathered for the cipher do not count towards `max`: on one core
        // the batches are 16 items, and groups that small leave most lanes idle (stats
        // on 100,000 stock frames on one core: 701.6 M instructions with them counted,
        // 564.8 M without). From the front's thread the groups are then cipher::LANES
        // wide on top of 256 items, where counting them measured a little cheaper
        // (573.6 M against 577.3 M): not worth a rule of its own.
        while !self.done
            && batch.len().saturating_sub(self.waiting) < max
            && bytes < MAX_BATCH_BYTES
        {
            match self.reader.read_into(&mut self.frame) {
                Ok(true) if self.reader.has_notes() => {
                    // A frame read despite a flaw (past the snap length): said first.
                    self.decipher_waiting(batch);
                    for w in self.reader.take_notes() {
                        batch.push(Item::Problem(w.code, w.to_string()));
                    }
                }
                Ok(true) => {}
                Ok(false) => self.done = true,
                Err(e) => {
                    // Datagrams read before the error come before it.
                    self.decipher_waiting(batch);
                    if e.is_fatal() {
                        batch.push(Item::Fatal(read_error_code(&e), e.to_string()));
                        self.done = true;
                    } else {
                        batch.push(Item::Problem(read_error_code(&e), e.to_string()));
                    }
                    continue;
                }
            }
            if self.done {
                break;
            }
            let meta = FrameMeta::of(&self.frame);
            bytes += meta.len;
            match self.net.decode(&self.frame) {
                NetOutcome::Datagram(d) if self.deciphers_ahead(&d) => {
                    batch.push(Item::Frame {
                        meta,
                        outcome: NetOutcome::Datagram(d),
                        parsed: None,
                    });
                    self.waiting += 1;
                    if self.waiting >= self.gather {
                        self.decipher_waiting(batch);
                    }
                }
                outcome => {
                    self.decipher_waiting(batch);
                    batch.push(Item::Frame {
                        meta,
                        outcome,
                        parsed: None,
                    });
                }
            }
        }
        self.decipher_waiting(batch);
        !self.done
    }

    /// Takes payload buffers and transport walks back for reuse (a bounded number of
    /// small ones; the rest are freed), leaving `returns` empty. Each list is taken
    /// whole, in one copy: moved one at a time, the buffers and walks cost about 78
    /// instructions a frame.
    pub fn take_back(&mut self, returns: &mut Returns) {
        self.net.recycle(&mut returns.payloads);
        returns
            .packets
            .retain(|p| p.messages.capacity() <= MAX_SPARE_MESSAGES);
        self.spare_packets.append(&mut returns.packets);
        self.spare_packets.truncate(MAX_SPARE_PACKETS);
    }

    /// Ends the read: truncation and incomplete IP fragment sets.
    pub fn finish(mut self) -> FrontEnd {
        FrontEnd {
            truncation: self.reader.truncation().cloned(),
            compression: self.reader.compression().map(|c| CompressionSummary {
                method: c.as_str(),
                compressed_bytes: self.reader.compressed_bytes_read(),
                bytes: self.reader.bytes_read(),
            }),
            notes: self.reader.take_notes(),
            fragments: self.net.finish(),
        }
    }

    /// A game-port payload that is not GameSpy text.
    fn deciphers_ahead(&self, d: &Datagram) -> bool {
        d.payload.len() >= 2
            && d.payload.first() != Some(&cipher::GAMESPY_MARK)
            && (d.src.port() == self.game_port || d.dst.port() == self.game_port)
    }

    /// Deciphers the batch's waiting datagrams (its last `waiting` items) together
    /// and walks their transport messages.
    fn decipher_waiting(&mut self, batch: &mut [Item]) {
        if self.waiting == 0 {
            return;
        }
        let tail = batch.len().saturating_sub(self.waiting);
        self.waiting = 0;
        let waiting = &mut batch[tail..];
        let mut views = relent(std::mem::take(&mut self.views));
        views.extend(waiting.iter_mut().filter_map(|item| match item {
            Item::Frame {
                outcome: NetOutcome::Datagram(d),
                ..
            } => Some(d.payload.as_mut_slice()),
            _ => None,
        }));
        cipher::decrypt_many(&mut views);
        self.views = relent(views);
        for item in waiting {
            if let Item::Frame {
                outcome: NetOutcome::Datagram(d),
                parsed,
                ..
            } = item
            {
                let mut packet = self.spare_packets.pop().unwrap_or_default();
                packet::parse_into(&d.payload, &mut packet);
                *parsed = Some(packet);
            }
        }
    }
}

/// `list` emptied, as a list of slices of another lifetime, in the same allocation
/// (collecting in place keeps it: the elements have one layout).
fn relent<'b>(mut list: Vec<&mut [u8]>) -> Vec<&'b mut [u8]> {
    list.clear();
    // The list is empty: the map never runs.
    list.into_iter()
        .map(|_| -> &'b mut [u8] { &mut [] })
        .collect()
}

/// The registered code of a capture read error.
fn read_error_code(e: &CaptureError) -> Code {
    match e {
        CaptureError::BadRecord { .. } => Code::CaptureBlockMalformed,
        CaptureError::HeaderCut { .. } => Code::TruncatedCapture,
        CaptureError::Io(_) => Code::CaptureReadError,
        CaptureError::NotACapture { .. } | CaptureError::Corrupt { .. } => Code::CaptureCorrupt,
    }
}
