//! The two per-ship blocks of a StateUpdate (`stateupdate.md` §5, §6): the 0x20
//! subsystem block (host → clients) and the 0x80 power block (client → host).
//!
//! Both run to the end of the message with no count, so splitting the 0x20 block needs
//! the ship's top-level subsystem list. Reading and writing go through the message's
//! one [`Reader`] / [`Writer`]: the has-power-data bits share packed bytes with the
//! header's hash and cloak bits.
//!
//! Why this file is long: the code ends at about 970 lines; the rest is tests on the protocol
//! reference's worked blocks.

use super::class_layout::{RecordFormat, ShipClass, SubsystemLayout};
use super::field::{Field, Span, Value};
use super::reader::{DecodeError, DecodeResult, FieldReader, Reader};
use super::ships::ShipCatalog;
use super::writer::Writer;
use crate::game::registry::field;
use smallvec::SmallVec;

/// Child condition bytes of one record: stock layouts have at most 8 children, so they
/// are stored inline; longer lists from layout files spill to the heap.
pub type Children = SmallVec<[u8; 8]>;

/// The host stops adding records once the block (index byte included) reaches this many
/// bytes (§5.3).
pub const HOST_BLOCK_BUDGET: usize = 10;

/// Reference value of a 0x80 byte for 100 % requested power (hypothesis, §6).
pub const POWER_BYTE_FULL: f64 = 204.0;

/// Capacity of a fresh record list: more than any stock class has entries.
const RECORDS_REUSED: usize = 32;

/// One record of a 0x20 block: the state of one top-level list entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubsystemRecord {
    /// Position in the ship's top-level list.
    pub index: u8,
    pub format: RecordFormat,
    /// Condition × 255 (0xFF full, 0x00 destroyed).
    pub condition: u8,
    /// One condition byte per child, in wire order.
    pub children: Children,
    /// Powered and shield formats: requested power × 100, or `None` when the
    /// has-power-data bit is 0 (the receiver owns the ship).
    pub power_pct: Option<u8>,
    /// Power format (reactor): main and backup battery × 255.
    pub batteries: [u8; 2],
    /// Shield format: the six facing levels, in wire order.
    pub facings: [u8; 6],
}

impl SubsystemRecord {
    /// A record for `entry` at full condition; `power_pct` is used by the formats that
    /// carry power data (`None` = the owner's form).
    pub fn full(index: u8, entry: &SubsystemLayout, power_pct: Option<u8>) -> SubsystemRecord {
        SubsystemRecord {
            index,
            format: entry.format,
            condition: 0xFF,
            children: Children::from_elem(0xFF, entry.children.len()),
            power_pct: if entry.format.has_power_bit() {
                power_pct
            } else {
                None
            },
            batteries: if entry.format == RecordFormat::Power {
                [0xFF; 2]
            } else {
                [0; 2]
            },
            facings: if entry.format == RecordFormat::Shield {
                [0xFF; 6]
            } else {
                [0; 6]
            },
        }
    }
}

/// A decoded 0x20 block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubsystemBlock {
    pub start: u8,
    pub records: Vec<SubsystemRecord>,
}

/// Where a record's parts are in the message (for field spans).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RecordSpan {
    pub start: usize,
    pub end: usize,
    /// The packed byte holding the has-power-data bit.
    pub bit_at: Option<usize>,
    pub pct_at: Option<usize>,
}

/// The result of reading a 0x20 block with one class's layout.
#[derive(Debug, Clone)]
pub struct BlockRead {
    pub block: SubsystemBlock,
    pub spans: Vec<RecordSpan>,
    /// Records continued past a full cycle of the list (the host never does that).
    pub wrapped_past_start: bool,
    /// Booleans left unread in the open packed byte at the end: the writer counted
    /// bits this layout did not read, so the layout is wrong.
    pub unread_bits: u8,
}

impl BlockRead {
    /// The layout explains every byte and every bit of the block.
    pub fn fits(&self) -> bool {
        !self.wrapped_past_start && self.unread_bits == 0
    }
}

/// Read a 0x20 block (start index byte first) to the end of the message.
pub fn read_block(r: &mut Reader<'_>, class: &ShipClass) -> DecodeResult<BlockRead> {
    read_block_with(r, class, true)
}

/// [`read_block`]; with `keep_spans` false, [`BlockRead::spans`] stays empty (the spans
/// only serve field trees, which a lean decode does not build).
pub fn read_block_with(
    r: &mut Reader<'_>,
    class: &ShipClass,
    keep_spans: bool,
) -> DecodeResult<BlockRead> {
    read_block_into(r, class, keep_spans, Vec::new())
}

/// [`read_block_with`], filling `records` (emptied first; passed in for its capacity).
pub fn read_block_into(
    r: &mut Reader<'_>,
    class: &ShipClass,
    keep_spans: bool,
    records: Vec<SubsystemRecord>,
) -> DecodeResult<BlockRead> {
    // One copy of the loop for each: without spans their places are never worked out.
    if keep_spans {
        read_records::<true>(r, class, records)
    } else {
        read_records::<false>(r, class, records)
    }
}

/// [`read_block_into`], keeping the records' spans when `SPANS`.
#[inline(always)]
fn read_records<const SPANS: bool>(
    r: &mut Reader<'_>,
    class: &ShipClass,
    mut records: Vec<SubsystemRecord>,
) -> DecodeResult<BlockRead> {
    let start = start_index(r, class)?;
    let n = class.len();
    // Every record takes at least one byte: size the lists once.
    let most = n.min(r.remaining());
    records.clear();
    if records.capacity() < most {
        // A fresh list rather than a grown one: growing copies the old buffer, and a
        // list sized for any stock class is never grown again when it is reused.
        records = Vec::with_capacity(most.max(RECORDS_REUSED));
    }
    let mut spans = Vec::with_capacity(if SPANS { most } else { 0 });
    let mut i = start as usize;
    let mut wrapped = false;
    while !r.is_empty() {
        let Some(entry) = class.entry(i) else { break };
        let mut span = RecordSpan::default();
        let rec = read_record(r, i as u8, entry, &mut span).map_err(|e| in_entry(e, entry))?;
        records.push(rec);
        if SPANS {
            spans.push(span);
        }
        i = if i + 1 == n { 0 } else { i + 1 }; // no division per record
        if i == start as usize && !r.is_empty() {
            wrapped = true;
        }
    }
    Ok(BlockRead {
        block: SubsystemBlock { start, records },
        spans,
        wrapped_past_start: wrapped,
        unread_bits: r.open_bits(),
    })
}

/// [`read_block_with`] without keeping the records or spans ([`BlockRead::block`]'s
/// list stays empty): the same bytes read, the same errors, the same fit. The records
/// are skipped, not built: building each on the stack to drop it was most of the cost
/// of counting a StateUpdate. Inlined into its caller, which then sees the lists are
/// empty and runs no drop of them.
#[inline]
pub fn walk_block(r: &mut Reader<'_>, class: &ShipClass) -> DecodeResult<BlockRead> {
    let start = start_index(r, class)?;
    let n = class.len();
    let mut i = start as usize;
    let mut wrapped = false;
    while !r.is_empty() {
        let Some(entry) = class.entry(i) else { break };
        skip_record(r, entry).map_err(|e| in_entry(e, entry))?;
        i = if i + 1 == n { 0 } else { i + 1 }; // no division per record
        if i == start as usize && !r.is_empty() {
            wrapped = true;
        }
    }
    Ok(BlockRead {
        block: SubsystemBlock {
            start,
            records: Vec::new(),
        },
        spans: Vec::new(),
        wrapped_past_start: wrapped,
        unread_bits: r.open_bits(),
    })
}

/// The block's start index byte, checked against `class`'s list.
#[inline]
fn start_index(r: &mut Reader<'_>, class: &ShipClass) -> DecodeResult<u8> {
    let start = r.u8("subsystem start index")?;
    let n = class.len();
    if start as usize >= n {
        return Err(start_beyond_list(r, class));
    }
    Ok(start)
}

/// The error of a start index past the end of `class`'s list, the index just read.
#[cold]
#[inline(never)]
fn start_beyond_list(r: &Reader<'_>, class: &ShipClass) -> Box<DecodeError> {
    let n = class.len();
    let mut e = r.error(
        "subsystem start index",
        format!(
            "an index below {n} ({} has {n} entries)",
            class.display_name
        ),
    );
    e.offset -= 1;
    e
}

/// A record's read error, its field named after the list entry being read.
#[cold]
fn in_entry(mut e: Box<DecodeError>, entry: &SubsystemLayout) -> Box<DecodeError> {
    // "Shield Generator (shield) has-power-data bit": joined by hand, sized once;
    // third-party hosts make this path common.
    let format = entry.format.as_str();
    let mut field = String::with_capacity(entry.name.len() + format.len() + e.field.len() + 4);
    for part in [entry.name.as_str(), " (", format, ") ", &e.field] {
        field.push_str(part);
    }
    e.field = field.into();
    e
}

/// One record, and where its parts are into `span`. The bytes before the
/// has-power-data bit (condition, children, batteries) are taken in one step when
/// they are all there, as [`skip_record`] does; a record cut short there takes the
/// reads one by one, for their error.
#[inline(always)]
fn read_record(
    r: &mut Reader<'_>,
    index: u8,
    entry: &SubsystemLayout,
    span: &mut RecordSpan,
) -> DecodeResult<SubsystemRecord> {
    let n = entry.children.len();
    let head = 1 + n + 2 * usize::from(entry.format == RecordFormat::Power);
    if r.remaining() < head {
        // The span is written here rather than handed to the cold read, so that a
        // read without spans keeps none in memory.
        let (rec, read) = read_record_reads(r, index, entry)?;
        *span = read;
        return Ok(rec);
    }
    span.start = r.pos();
    let b = r.bytes(head, "condition")?;
    let mut rec = SubsystemRecord {
        index,
        format: entry.format,
        condition: b[0],
        // Most records have no children: no copy then.
        children: if n == 0 {
            Children::new()
        } else {
            Children::from_slice(&b[1..1 + n])
        },
        power_pct: None,
        batteries: [0; 2],
        facings: [0; 6],
    };
    if entry.format == RecordFormat::Power {
        rec.batteries = [b[1 + n], b[2 + n]];
    }
    if matches!(entry.format, RecordFormat::Powered | RecordFormat::Shield) {
        read_power_data(r, entry, &mut rec, span)?;
    }
    span.end = r.pos();
    Ok(rec)
}

/// [`read_record`] read by read: the record's error where it is cut short.
#[cold]
#[inline(never)]
fn read_record_reads(
    r: &mut Reader<'_>,
    index: u8,
    entry: &SubsystemLayout,
) -> DecodeResult<(SubsystemRecord, RecordSpan)> {
    let mut span = RecordSpan {
        start: r.pos(),
        ..RecordSpan::default()
    };
    let condition = r.u8("condition")?;
    let children = Children::from_slice(r.bytes(entry.children.len(), "child conditions")?);
    let mut rec = SubsystemRecord {
        index,
        format: entry.format,
        condition,
        children,
        power_pct: None,
        batteries: [0; 2],
        facings: [0; 6],
    };
    match entry.format {
        RecordFormat::Base => {}
        RecordFormat::Power => {
            rec.batteries = [r.u8("main battery")?, r.u8("backup battery")?];
        }
        RecordFormat::Powered | RecordFormat::Shield => {
            read_power_data(r, entry, &mut rec, &mut span)?;
        }
    }
    span.end = r.pos();
    Ok((rec, span))
}

/// The has-power-data bit, the power percent it announces and a shield's facings,
/// into `rec`, their places into `span`.
#[inline(always)]
fn read_power_data(
    r: &mut Reader<'_>,
    entry: &SubsystemLayout,
    rec: &mut SubsystemRecord,
    span: &mut RecordSpan,
) -> DecodeResult<()> {
    let has = r.bit("has-power-data bit")?;
    span.bit_at = Some(r.last_bit_pos());
    if has {
        span.pct_at = Some(r.pos());
        rec.power_pct = Some(r.u8("power percent")?);
    }
    if entry.format == RecordFormat::Shield {
        rec.facings = r.take("shield facings")?;
    }
    Ok(())
}

/// Write a 0x20 block (start index and records) into the message's writer.
pub fn write_block(w: &mut Writer, block: &SubsystemBlock) {
    w.u8(block.start);
    for rec in &block.records {
        write_record(w, rec);
    }
}

fn write_record(w: &mut Writer, rec: &SubsystemRecord) {
    w.u8(rec.condition).bytes(&rec.children);
    match rec.format {
        RecordFormat::Base => {}
        RecordFormat::Power => {
            w.bytes(&rec.batteries);
        }
        RecordFormat::Powered | RecordFormat::Shield => {
            w.bit(rec.power_pct.is_some());
            if let Some(p) = rec.power_pct {
                w.u8(p);
            }
            if rec.format == RecordFormat::Shield {
                w.bytes(&rec.facings);
            }
        }
    }
}

/// The records the host puts in one block (§5.3), starting at `cursor`.
///
/// `open_bits` is how many booleans the message's open packed byte already holds when
/// the block starts (hash flag, cloak bit), because a bit joining that byte costs no
/// block byte. Returns the block and the cursor for the next message.
pub fn plan_host_block(
    class: &ShipClass,
    cursor: usize,
    open_bits: u8,
    mut record_for: impl FnMut(usize, &SubsystemLayout) -> SubsystemRecord,
) -> (SubsystemBlock, usize) {
    let n = class.len().max(1);
    let start = cursor % n;
    let mut records = Vec::new();
    let mut size = 1;
    let mut open = open_bits;
    let mut i = start;
    while let Some(entry) = class.entry(i) {
        let rec = record_for(i, entry);
        size += 1 + rec.children.len();
        match rec.format {
            RecordFormat::Base => {}
            RecordFormat::Power => size += 2,
            RecordFormat::Powered | RecordFormat::Shield => {
                if open == 0 || open == 5 {
                    size += 1;
                    open = 0;
                }
                open += 1;
                size += rec.power_pct.is_some() as usize;
                if rec.format == RecordFormat::Shield {
                    size += 6;
                }
            }
        }
        records.push(rec);
        i = if i + 1 == n { 0 } else { i + 1 }; // no division per record
        if i == start || size >= HOST_BLOCK_BUDGET {
            break;
        }
    }
    (
        SubsystemBlock {
            start: start as u8,
            records,
        },
        i,
    )
}

/// Every class whose layout reads the block at `r` (positioned at the start index)
/// exactly: all bytes, all bits, at most one cycle.
pub fn fitting_classes<'c>(r: &Reader<'_>, catalog: &'c ShipCatalog) -> Vec<&'c ShipClass> {
    catalog
        .classes()
        .iter()
        .filter(|c| block_fits(r, c))
        .collect()
}

/// The classes [`fitting_classes`] found for recent blocks, by the reader's state at
/// the block (its bytes included): a host whose blocks no layout reads sends the same
/// block again while a ship's state holds, and probing every class costs more than the
/// rest of the message. One memo serves one catalog (it forgets on another).
#[derive(Default)]
pub struct FitMemo {
    slots: Vec<FitSlot>,
    /// The catalog the slots were filled from, and its class count.
    catalog: Option<(usize, usize)>,
    key: Vec<u8>,
}

#[derive(Default)]
struct FitSlot {
    key: Vec<u8>,
    /// Indices into the catalog's classes.
    classes: Vec<u16>,
}

impl FitMemo {
    const SLOTS: usize = 256;
    /// Longest block kept (a block is at most a class's whole list, some 60 bytes).
    const MAX_KEY: usize = 256;

    /// [`fitting_classes`], remembered.
    pub fn fitting<'c>(&mut self, r: &Reader<'_>, catalog: &'c ShipCatalog) -> Vec<&'c ShipClass> {
        let classes = catalog.classes();
        let id = (catalog as *const ShipCatalog as usize, classes.len());
        if self.catalog != Some(id) {
            self.catalog = Some(id);
            self.slots.clear();
            self.slots.resize_with(FitMemo::SLOTS, FitSlot::default);
        }
        self.key.clear();
        r.state_key(&mut self.key);
        if self.key.len() > FitMemo::MAX_KEY {
            return fitting_classes(r, catalog);
        }
        let mut h = rustc_hash::FxHasher::default();
        std::hash::Hasher::write(&mut h, &self.key);
        let slot = &mut self.slots[(std::hash::Hasher::finish(&h) >> 48) as usize % FitMemo::SLOTS];
        if slot.key != self.key {
            slot.key.clear();
            slot.key.extend_from_slice(&self.key);
            slot.classes.clear();
            slot.classes.extend(
                (0..classes.len())
                    .filter(|&i| block_fits(r, &classes[i]))
                    .map(|i| i as u16),
            );
        }
        slot.classes
            .iter()
            .filter_map(|&i| classes.get(i as usize))
            .collect()
    }
}

/// `read_block(r, class).is_ok_and(|b| b.fits())` without building the records: this
/// runs once per catalog class for every block that is kept raw, so it must not
/// allocate.
pub fn block_fits(r: &Reader<'_>, class: &ShipClass) -> bool {
    let mut r = r.clone();
    let Ok(start) = r.u8("subsystem start index") else {
        return false;
    };
    let n = class.len();
    if start as usize >= n {
        return false;
    }
    let mut i = start as usize;
    while !r.is_empty() {
        let Some(entry) = class.entry(i) else { break };
        if skip_record(&mut r, entry).is_err() {
            return false;
        }
        i = if i + 1 == n { 0 } else { i + 1 }; // no division per record
        if i == start as usize && !r.is_empty() {
            // Wrapped past a full cycle: never a fit.
            return false;
        }
    }
    r.open_bits() == 0
}

/// The reads of [`read_record`], values dropped: a short or bad block fails at the
/// same offset with the same error.
#[inline(always)]
fn skip_record(r: &mut Reader<'_>, entry: &SubsystemLayout) -> DecodeResult<()> {
    // The bytes before the has-power-data bit (condition, children, batteries) in one
    // step when they are all there; a record cut short there takes the reads one by
    // one, for their error.
    let head = 1 + entry.children.len() + 2 * usize::from(entry.format == RecordFormat::Power);
    if r.remaining() < head {
        return skip_record_reads(r, entry);
    }
    r.bytes(head, "condition")?;
    if matches!(entry.format, RecordFormat::Powered | RecordFormat::Shield) {
        skip_power_data(r, entry)?;
    }
    Ok(())
}

/// [`skip_record`] read by read, as [`read_record`] reads.
#[cold]
fn skip_record_reads(r: &mut Reader<'_>, entry: &SubsystemLayout) -> DecodeResult<()> {
    r.u8("condition")?;
    r.bytes(entry.children.len(), "child conditions")?;
    match entry.format {
        RecordFormat::Base => {}
        RecordFormat::Power => {
            r.u8("main battery")?;
            r.u8("backup battery")?;
        }
        RecordFormat::Powered | RecordFormat::Shield => skip_power_data(r, entry)?,
    }
    Ok(())
}

/// The has-power-data bit, the power percent it announces and a shield's facings.
#[inline(always)]
fn skip_power_data(r: &mut Reader<'_>, entry: &SubsystemLayout) -> DecodeResult<()> {
    if r.bit("has-power-data bit")? {
        r.u8("power percent")?;
    }
    if entry.format == RecordFormat::Shield {
        r.bytes(6, "shield facings")?;
    }
    Ok(())
}

/// Condition-style byte as a percentage (× 100 / 255), one decimal.
pub fn byte_pct(b: u8) -> f64 {
    (b as f64 * 1000.0 / 255.0).round() / 10.0
}

fn pct_text(b: u8) -> u32 {
    (b as u32 * 100 + 127) / 255
}

/// Readable one-line state of one record, e.g.
/// `Phasers 100% (Ventral Phaser 3 98%, …), power 100%`.
pub fn record_summary(rec: &SubsystemRecord, entry: &SubsystemLayout) -> String {
    let mut s = String::with_capacity(64);
    push_record_summary(&mut s, rec, entry);
    s
}

/// A percentage (0–100 and up) without going through `core::fmt`: one is written for
/// every subsystem and child of every StateUpdate a full decode shows.
fn push_pct(s: &mut String, v: u32) {
    if v >= 100 {
        s.push(char::from(b'0' + (v / 100 % 10) as u8));
    }
    if v >= 10 {
        s.push(char::from(b'0' + (v / 10 % 10) as u8));
    }
    s.push(char::from(b'0' + (v % 10) as u8));
}

pub fn push_record_summary(s: &mut String, rec: &SubsystemRecord, entry: &SubsystemLayout) {
    s.push_str(&entry.name);
    s.push(' ');
    push_pct(s, pct_text(rec.condition));
    s.push('%');
    if !rec.children.is_empty() {
        s.push_str(" (");
        for (k, c) in rec.children.iter().enumerate() {
            if k > 0 {
                s.push_str(", ");
            }
            let name = entry.children.get(k).map_or("child", |c| c.name.as_str());
            s.push_str(name);
            s.push(' ');
            push_pct(s, pct_text(*c));
            s.push('%');
        }
        s.push(')');
    }
    match rec.format {
        RecordFormat::Base => {}
        RecordFormat::Power => {
            s.push_str(", batteries ");
            push_pct(s, pct_text(rec.batteries[0]));
            s.push_str("% / ");
            push_pct(s, pct_text(rec.batteries[1]));
            s.push('%');
        }
        RecordFormat::Powered | RecordFormat::Shield => {
            match rec.power_pct {
                Some(p) => {
                    s.push_str(", power ");
                    push_pct(s, p as u32);
                    s.push('%');
                }
                None => s.push_str(", no power data"),
            }
            if rec.format == RecordFormat::Shield {
                s.push_str(", facings ");
                for (k, f) in rec.facings.iter().enumerate() {
                    if k > 0 {
                        s.push('/');
                    }
                    push_pct(s, pct_text(*f));
                }
                s.push('%');
            }
        }
    }
}

/// The one-line summary of a decoded block (`Warp Core 100%, batteries 100% / 100%;
/// Shield Generator 98%, power 100%, facings …`), the same text as the
/// `subsystems_summary` field, made from the typed block for printers that have it.
pub fn block_summary(block: &SubsystemBlock, class: &ShipClass) -> String {
    let mut summary = String::with_capacity(64 * block.records.len());
    push_block_summary(&mut summary, block, class);
    summary
}

/// [`block_summary`], appended to `summary` (to reuse one text for many blocks).
pub fn push_block_summary(summary: &mut String, block: &SubsystemBlock, class: &ShipClass) {
    let start = summary.len();
    for rec in &block.records {
        let Some(entry) = class.entry(rec.index as usize) else {
            continue;
        };
        if summary.len() > start {
            summary.push_str("; ");
        }
        push_record_summary(summary, rec, entry);
    }
}

/// The key of entry `index` of `class`: [`snake_key`](super::class_layout::snake_key) of
/// its name, with `_2`, `_3`, … for the second, third, … entry of the list whose name
/// makes the same key, so that a key names one entry of the class whichever records a
/// block carries.
pub fn entry_key(class: &ShipClass, index: usize) -> String {
    match class.entry(index) {
        Some(e) => e.key.clone(),
        None => format!("index_{index}"),
    }
}

/// Hand the fields of a decoded block to `f`'s visitor, each with its registry entry
/// and span: the start index and its entry's name, the records as a list in wire order
/// (each a group with its `index`, `key` and display `name`, its condition, each child
/// of `children_pct` on its own under the layout's child key, and its format's fields),
/// and a summary. The block was read ahead (to see whether the layout fits it), so the
/// spans come from `read`; `block_start` is the start index byte.
pub fn walk_block_fields(
    f: &mut FieldReader<'_, '_>,
    read: &BlockRead,
    class: &ShipClass,
    block_start: usize,
) {
    let start_name = class
        .entry(read.block.start as usize)
        .map_or("?", |e| e.name.as_str());
    let start_span = Span::new(block_start, block_start + 1);
    f.push_value(
        field!("subsystems_start_index"),
        Value::Uint(read.block.start as u64),
        start_span,
    );
    f.push_value(
        field!("subsystems_start_name"),
        Value::Text(start_name.to_string()),
        start_span,
    );
    let list = f.mark();
    // A record's summary is ~50 bytes ("Warp Core 100%, batteries 100% / 100%; ").
    let mut summary = String::with_capacity(64 * read.block.records.len());
    for (rec, span) in read.block.records.iter().zip(&read.spans) {
        let Some(entry) = class.entry(rec.index as usize) else {
            continue;
        };
        walk_record(f, rec, span, entry, class);
        if !summary.is_empty() {
            summary.push_str("; ");
        }
        push_record_summary(&mut summary, rec, entry);
    }
    let end = read.spans.last().map_or(block_start + 1, |s| s.end);
    f.list_over(field!("subsystems"), list, Span::new(block_start + 1, end));
    f.push_value(
        field!("subsystems_summary"),
        Value::Text(summary),
        Span::new(block_start, end),
    );
}

/// One record of a decoded block, as a group of the list `subsystems`.
fn walk_record(
    f: &mut FieldReader<'_, '_>,
    rec: &SubsystemRecord,
    span: &RecordSpan,
    entry: &SubsystemLayout,
    class: &ShipClass,
) {
    let at = span.start;
    let group = f.mark();
    let here = Span::new(at, at);
    f.push_value(
        field!("subsystems.index"),
        Value::Uint(rec.index as u64),
        here,
    );
    f.push_value(
        field!("subsystems.key"),
        Value::Text(entry_key(class, rec.index as usize)),
        here,
    );
    f.push_value(
        field!("subsystems.name"),
        Value::Text(entry.name.clone()),
        here,
    );
    f.push_value(
        field!("subsystems.condition_pct"),
        Value::Float(byte_pct(rec.condition)),
        Span::new(at, at + 1),
    );
    if !rec.children.is_empty() {
        // A group keyed by the children's snake_case keys, in wire order: a child set
        // is fixed per class, and one field per child keeps a StateUpdate's tree
        // (written millions of times by `decode --format jsonl`) small. Each child is
        // its own field of the one entry that stands for every child, over its byte.
        let children = f.mark();
        for (k, c) in rec.children.iter().enumerate() {
            let key = entry
                .children
                .get(k)
                .map_or_else(|| format!("child_{k}"), |c| c.key.clone());
            let o = at + 1 + k;
            f.push_field(Field::keyed(
                field!("subsystems.children_pct.child").id,
                key,
                Value::Float(byte_pct(*c)),
                Span::new(o, o + 1),
            ));
        }
        f.group_over(
            field!("subsystems.children_pct"),
            children,
            Span::new(at + 1, at + 1 + rec.children.len()),
        );
    }
    let after_children = at + 1 + rec.children.len();
    match rec.format {
        RecordFormat::Base => {}
        RecordFormat::Power => {
            f.push_value(
                field!("subsystems.main_battery_pct"),
                Value::Float(byte_pct(rec.batteries[0])),
                Span::new(after_children, after_children + 1),
            );
            f.push_value(
                field!("subsystems.backup_battery_pct"),
                Value::Float(byte_pct(rec.batteries[1])),
                Span::new(after_children + 1, after_children + 2),
            );
        }
        RecordFormat::Powered | RecordFormat::Shield => {
            if let Some(b) = span.bit_at {
                f.push_value(
                    field!("subsystems.has_power_data"),
                    Value::Bool(rec.power_pct.is_some()),
                    Span::new(b, b + 1),
                );
            }
            if let (Some(p), Some(o)) = (rec.power_pct, span.pct_at) {
                f.push_value(
                    field!("subsystems.power_pct"),
                    Value::Uint(p as u64),
                    Span::new(o, o + 1),
                );
            }
            if rec.format == RecordFormat::Shield {
                f.push_value(
                    field!("subsystems.facings_pct"),
                    Value::List(
                        rec.facings
                            .iter()
                            .map(|f| Value::Float(byte_pct(*f)))
                            .collect(),
                    ),
                    Span::new(span.end.saturating_sub(6), span.end),
                );
            }
        }
    }
    f.group_over(
        field!("subsystems", "record"),
        group,
        Span::new(span.start, span.end),
    );
}

/// One pair of a 0x80 block: a list index and its value byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PowerSetting {
    pub index: u8,
    /// Raw value; 204 = 100 % under the §6 hypothesis.
    pub value: u8,
}

impl PowerSetting {
    /// The value as a percentage of 204 — an interpretation, not established.
    pub fn interpreted_pct(&self) -> f64 {
        (self.value as f64 * 1000.0 / POWER_BYTE_FULL).round() / 10.0
    }
}

/// Read 0x80 pairs to the end of the message. An odd last byte is an error located at
/// that byte; the pairs before it are returned with it.
pub fn read_power_block(r: &mut Reader<'_>) -> (Vec<PowerSetting>, Option<Box<DecodeError>>) {
    read_power_block_into(r, Vec::new())
}

/// [`read_power_block`], filling `out` (emptied first; passed in for its capacity).
pub fn read_power_block_into(
    r: &mut Reader<'_>,
    mut out: Vec<PowerSetting>,
) -> (Vec<PowerSetting>, Option<Box<DecodeError>>) {
    out.clear();
    out.reserve(r.remaining() / 2);
    let err = walk_power_block(r, |p| out.push(p));
    (out, err)
}

/// Read 0x80 pairs to the end of the message, handing each to `each` in wire order
/// instead of keeping them; the error is [`read_power_block`]'s.
pub fn walk_power_block(
    r: &mut Reader<'_>,
    mut each: impl FnMut(PowerSetting),
) -> Option<Box<DecodeError>> {
    while !r.is_empty() {
        if r.remaining() < 2 {
            return Some(r.error("power block pair", "2 bytes (list index, value)"));
        }
        // Both bytes are there (checked above): one read for the pair, where two
        // fallible reads left two results to drop per pair.
        let Ok(&[index, value]) = r.bytes(2, "power block pair") else {
            break;
        };
        each(PowerSetting { index, value });
    }
    None
}

pub fn write_power_block(w: &mut Writer, pairs: &[PowerSetting]) {
    for p in pairs {
        w.u8(p.index).u8(p.value);
    }
}

/// The entry a 0x80 pair names, or why it cannot be one.
pub fn power_entry(class: &ShipClass, index: u8) -> Result<&SubsystemLayout, String> {
    match class.entry(index as usize) {
        None => Err(format!(
            "power block index {index} is beyond the {} list ({} entries)",
            class.display_name,
            class.len()
        )),
        Some(e) if !e.powered_type => Err(format!(
            "power block index {index} is {} ({}), not a powered subsystem",
            e.name,
            e.format.as_str()
        )),
        Some(e) => Ok(e),
    }
}

/// Fields of a 0x80 block, a list of pairs in wire order (each with the `key` and
/// display `name` of the entry it names when the class is known); `start` is the
/// offset of its first byte.
pub fn power_fields(pairs: &[PowerSetting], class: Option<&ShipClass>, start: usize) -> Field {
    let mut g = Vec::with_capacity(pairs.len());
    for (k, p) in pairs.iter().enumerate() {
        let at = start + 2 * k;
        let i = Span::new(at, at + 1);
        // index, key, name, value, interpreted percentage.
        let mut pair = Vec::with_capacity(5);
        pair.push(Field::new(
            field!("power_block.index"),
            Value::Uint(p.index as u64),
            i,
        ));
        if let Some(c) = class.filter(|c| c.entry(p.index as usize).is_some()) {
            pair.push(Field::new(
                field!("power_block.key"),
                Value::Text(entry_key(c, p.index as usize)),
                i,
            ));
            if let Some(e) = c.entry(p.index as usize) {
                pair.push(Field::new(
                    field!("power_block.name"),
                    Value::Text(e.name.clone()),
                    i,
                ));
            }
        }
        pair.push(Field::new(
            field!("power_block.value"),
            Value::Uint(p.value as u64),
            Span::new(at + 1, at + 2),
        ));
        pair.push(Field::new(
            field!("power_block.power_pct_interpreted"),
            Value::Float(p.interpreted_pct()),
            Span::new(at + 1, at + 2),
        ));
        g.push(Value::Group(pair));
    }
    Field::new(
        field!("power_block"),
        Value::List(g),
        Span::new(start, start + 2 * pairs.len()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::class_layout::{key_among, snake_key};

    fn class(species: u16) -> ShipClass {
        ShipCatalog::stock().class(species).unwrap().clone()
    }

    /// Start indices of consecutive host blocks for a ship at full health.
    fn cycle(species: u16, owner: bool, n: usize) -> Vec<usize> {
        let c = class(species);
        let mut cursor = 0;
        let mut out = Vec::new();
        for _ in 0..n {
            out.push(cursor);
            let (_, next) = plan_host_block(&c, cursor, 0, |i, e| {
                SubsystemRecord::full(i as u8, e, if owner { None } else { Some(100) })
            });
            cursor = next;
        }
        out
    }

    // stateupdate.md §5.3 table.
    #[test]
    fn host_budget_reproduces_reference_cycles() {
        assert_eq!(cycle(5, true, 9), [0, 2, 6, 8, 10, 2, 6, 8, 10]);
        assert_eq!(cycle(5, false, 11), [0, 2, 5, 6, 8, 10, 2, 5, 6, 8, 10]);
        assert_eq!(cycle(1, true, 7), [0, 2, 6, 8, 2, 6, 8]);
        assert_eq!(cycle(1, false, 11), [0, 2, 5, 6, 8, 1, 2, 5, 6, 8, 1]);
        assert_eq!(cycle(3, true, 9), [0, 3, 5, 6, 9, 3, 5, 6, 9]);
        assert_eq!(cycle(3, false, 10), [0, 3, 5, 6, 8, 0, 3, 5, 6, 8]);
    }

    // Seed 001 example 2: the block after the flags byte, read with the Akira list.
    #[test]
    fn seed_block_reads_as_akira() {
        let msg = [
            0x08, 0xFF, 0x60, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
            0xFF,
        ];
        let akira = class(1);
        let mut r = Reader::new(&msg);
        let b = read_block(&mut r, &akira).unwrap();
        assert!(b.fits());
        let idx: Vec<u8> = b.block.records.iter().map(|r| r.index).collect();
        assert_eq!(idx, [8, 9, 10, 0, 1]);
        assert_eq!(b.spans[0].bit_at, Some(2));
        assert_eq!(b.spans[4].bit_at, Some(2));
        assert_eq!(b.block.records[1].children[..], [0xFF, 0xFF]);
        assert_eq!(b.block.records[4].facings, [0xFF; 6]);
        assert!(b.block.records.iter().all(|r| r.power_pct.is_none()));
        let mut w = Writer::new();
        write_block(&mut w, &b.block);
        assert_eq!(w.as_slice(), msg);
        let s = record_summary(&b.block.records[1], akira.entry(9).unwrap());
        assert_eq!(
            s,
            "Tractors 100% (Forward Tractor 100%, Aft Tractor 100%), no power data"
        );
    }

    #[test]
    fn keys_name_one_entry_of_a_class() {
        let mut c = class(1);
        let first = c.subsystems[0].clone();
        c.subsystems.push(first.clone());
        let n = c.subsystems.len() - 1;
        assert_eq!(
            key_among(&c.subsystems, n),
            format!("{}_2", snake_key(&first.name))
        );
        assert_eq!(key_among(&c.subsystems, 0), snake_key(&first.name));
        // The catalog keeps each entry's key, as computed from its list.
        for class in ShipCatalog::stock().classes() {
            for i in 0..class.len() {
                assert_eq!(entry_key(class, i), key_among(&class.subsystems, i));
                for ch in &class.subsystems[i].children {
                    assert_eq!(ch.key, snake_key(&ch.name));
                }
            }
        }
    }

    #[test]
    fn percentages_are_written_as_format_writes_them() {
        for v in 0..=999u32 {
            let mut s = String::new();
            push_pct(&mut s, v);
            assert_eq!(s, v.to_string());
        }
    }

    /// The allocation-free probe agrees with a full read on every stock class, for
    /// blocks the host would send, with an open packed byte before them, and for
    /// pseudo-random bytes of every length up to 24.
    /// Blocks the host would send on every stock class, with an open packed byte
    /// before them (its bit count), and pseudo-random bytes of every length up to 24.
    fn probe_inputs(catalog: &ShipCatalog) -> Vec<(Vec<u8>, u8)> {
        let mut inputs: Vec<(Vec<u8>, u8)> = Vec::new();
        for c in catalog.classes() {
            for cursor in 0..c.len() {
                for open in [0u8, 1, 2] {
                    let (block, _) = plan_host_block(c, cursor, open, |i, e| {
                        SubsystemRecord::full(i as u8, e, Some(100))
                    });
                    let mut w = Writer::new();
                    for _ in 0..open {
                        w.bit(true);
                    }
                    write_block(&mut w, &block);
                    inputs.push((w.as_slice().to_vec(), open));
                }
            }
        }
        let mut x = 0x1234_5678u32;
        for len in 0..24 {
            for _ in 0..20 {
                let bytes: Vec<u8> = (0..len)
                    .map(|k| {
                        x ^= x << 13;
                        x ^= x >> 17;
                        x ^= x << 5;
                        // Small start indices often, so records get read.
                        if k == 0 {
                            (x % 16) as u8
                        } else {
                            x as u8
                        }
                    })
                    .collect();
                inputs.push((bytes, 0));
            }
        }
        inputs
    }

    #[test]
    fn block_fits_agrees_with_read_block() {
        let catalog = ShipCatalog::stock();
        let inputs = probe_inputs(&catalog);
        let mut fits = 0;
        for (bytes, open) in &inputs {
            let mut base = Reader::new(bytes);
            for _ in 0..*open {
                base.bit("open").unwrap();
            }
            for c in catalog.classes() {
                let mut full = base.clone();
                let expected = read_block(&mut full, c).is_ok_and(|b| b.fits());
                assert_eq!(
                    block_fits(&base, c),
                    expected,
                    "{bytes:02x?} {}",
                    c.display_name
                );
                fits += expected as usize;
            }
        }
        assert!(fits > 100, "the inputs exercise fitting blocks ({fits})");
        // The memo answers as the probe does: filled on the first pass, and read back
        // (or refilled where two blocks share a slot) on the second.
        let mut memo = FitMemo::default();
        let names = |v: Vec<&ShipClass>| v.iter().map(|c| c.species_id).collect::<Vec<_>>();
        // Each block also behind a packed byte with bits left open (count 3, one read):
        // the same bytes to read, another state.
        let behind: Vec<Vec<u8>> = inputs
            .iter()
            .flat_map(|(bytes, _)| [0x60u8, 0x66].map(|g| [&[g][..], bytes].concat()))
            .collect();
        let readers = || {
            let plain = inputs.iter().map(|(bytes, open)| {
                let mut r = Reader::new(bytes);
                for _ in 0..*open {
                    r.bit("open").unwrap();
                }
                r
            });
            let behind = behind.iter().map(|bytes| {
                let mut r = Reader::new(bytes);
                r.bit("open").unwrap();
                r
            });
            plain.chain(behind).collect::<Vec<_>>()
        };
        for _ in 0..2 {
            for r in readers() {
                assert_eq!(
                    names(memo.fitting(&r, &catalog)),
                    names(fitting_classes(&r, &catalog)),
                    "{:02x?} open {}",
                    r.buffer(),
                    r.open_bits()
                );
            }
        }
    }

    /// The skipping walk reads what the full read reads: the same start, fit, wrap and
    /// unread bits, the same error (offset, field, expectation), and the reader left at
    /// the same place, on every probe input and every stock class.
    #[test]
    fn walk_block_agrees_with_read_block() {
        let catalog = ShipCatalog::stock();
        let mut inputs = probe_inputs(&catalog);
        // A whole cycle of the list and one record more: past the start.
        for c in catalog.classes() {
            let records = (0..=c.len())
                .map(|k| k % c.len())
                .map(|i| SubsystemRecord::full(i as u8, c.entry(i).unwrap(), Some(100)))
                .collect();
            let mut w = Writer::new();
            write_block(&mut w, &SubsystemBlock { start: 0, records });
            inputs.push((w.as_slice().to_vec(), 0));
        }
        let (mut errors, mut wraps, mut unread) = (0, 0, 0);
        for (bytes, open) in inputs {
            let mut base = Reader::new(&bytes);
            for _ in 0..open {
                base.bit("open").unwrap();
            }
            for c in catalog.classes() {
                let (mut full, mut walked) = (base.clone(), base.clone());
                let read = read_block(&mut full, c);
                let walk = walk_block(&mut walked, c);
                let at = format!("{bytes:02x?} {}", c.display_name);
                match (read, walk) {
                    (Ok(read), Ok(walk)) => {
                        assert_eq!(walk.block.start, read.block.start, "{at}");
                        assert_eq!(walk.wrapped_past_start, read.wrapped_past_start, "{at}");
                        assert_eq!(walk.unread_bits, read.unread_bits, "{at}");
                        assert!(walk.block.records.is_empty() && walk.spans.is_empty());
                        wraps += read.wrapped_past_start as usize;
                        unread += (read.unread_bits > 0) as usize;
                    }
                    (Err(read), Err(walk)) => {
                        assert_eq!(walk, read, "{at}");
                        errors += 1;
                    }
                    (read, walk) => panic!("{at}: read {read:?}, walked {walk:?}"),
                }
                assert_eq!(walked.pos(), full.pos(), "{at}");
                assert_eq!(walked.open_bits(), full.open_bits(), "{at}");
                assert_eq!(walked.last_bit_pos(), full.last_bit_pos(), "{at}");
            }
        }
        assert!(
            errors > 100 && wraps > 0 && unread > 0,
            "the inputs exercise errors ({errors}), wraps ({wraps}) and unread bits ({unread})"
        );
    }

    #[test]
    fn block_wrapping_past_the_end_of_the_list() {
        // Galaxy from Engineering (10, last entry): wraps to Hull and the Warp Core.
        let galaxy = class(3);
        let block = SubsystemBlock {
            start: 10,
            records: vec![
                SubsystemRecord::full(10, galaxy.entry(10).unwrap(), Some(90)),
                SubsystemRecord::full(0, galaxy.entry(0).unwrap(), None),
                SubsystemRecord {
                    batteries: [0x80, 0x40],
                    ..SubsystemRecord::full(1, galaxy.entry(1).unwrap(), None)
                },
            ],
        };
        let mut w = Writer::new();
        write_block(&mut w, &block);
        assert_eq!(w.as_slice(), [10, 0xFF, 0x21, 90, 0xFF, 0xFF, 0x80, 0x40]);
        let mut r = Reader::new(w.as_slice());
        let read = read_block(&mut r, &galaxy).unwrap();
        assert!(read.fits());
        assert_eq!(read.block, block);
    }

    #[test]
    fn bad_blocks_are_located_errors() {
        let akira = class(1);
        // Start index beyond the list.
        let e = read_block(&mut Reader::new(&[11, 0xFF]), &akira).unwrap_err();
        assert_eq!(e.offset, 0);
        assert!(e.expected.contains("below 11"), "{e}");
        // Ends inside the Phasers record (needs 9 bytes and a bit).
        let e = read_block(&mut Reader::new(&[5, 0xFF, 0xFF, 0xFF]), &akira).unwrap_err();
        assert_eq!(e.offset, 2);
        assert!(e.field.starts_with("Phasers (powered)"), "{e}");
        // A bit that joins nothing leaves the read with unread bits.
        let read = read_block(&mut Reader::new(&[8, 0xFF, 0x40]), &akira).unwrap();
        assert_eq!(read.unread_bits, 1);
        assert!(!read.fits());
    }

    #[test]
    fn power_block_pairs_and_odd_tail() {
        let (pairs, err) = read_power_block(&mut Reader::new(&[1, 0xCC, 2, 0xCC, 4]));
        assert_eq!(pairs.len(), 2);
        assert_eq!(
            pairs[1],
            PowerSetting {
                index: 2,
                value: 0xCC
            }
        );
        assert_eq!(pairs[0].interpreted_pct(), 100.0);
        assert_eq!(err.unwrap().offset, 4);
        let akira = class(1);
        assert!(power_entry(&akira, 3).unwrap_err().contains("Warp Core"));
        assert!(power_entry(&akira, 11).is_err());
        assert_eq!(power_entry(&akira, 4).unwrap().name, "Impulse Engines");
    }
}
