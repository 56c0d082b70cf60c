//! `-w FILE`: the frames a command selected, written out whole as a capture, so one
//! client, one time window or one opcode can be cut out of a long capture.
//!
//! The pipeline hands over decoded records, not frames, so the selection is noted
//! while the command runs (frame numbers, and the comments with `--annotate`) and the
//! capture is then read a second time to copy those frames with their timestamps,
//! link types and interfaces. Standard input is spooled to a temporary file first so
//! that it can be read twice.

use crate::capture::writer::{user_application, InterfaceInfo};
use crate::capture::{link_type, CaptureReader, CaptureWriter, Endian, Frame, TsResolution};
use crate::cli::WriteArgs;
use crate::pipeline::filter::Filter;
use crate::pipeline::record::{PacketBody, PacketRecord};
use crate::pipeline::{Control, FieldTrees, Sink};
use crate::report::decode::packet_annotation;
use crate::report::names::Names;
use anyhow::{Context, Result};
use std::collections::HashMap;
use std::io::Write;

/// Which records a command selects.
pub enum Rule {
    /// Those the filter keeps, with at least one kept message (as `decode` lists).
    Filter(Box<Filter>),
    /// The one datagram of this frame (`show --frame`).
    Frame(u64),
}

/// Wraps a command's sink: hands every record on, and notes the frames it selects.
pub struct Selecting<'a> {
    pub inner: &'a mut dyn Sink,
    rule: Rule,
    annotate: bool,
    first_ts_ns: Option<i64>,
    /// Selected frame numbers in capture order, with their comments.
    pub picked: Vec<(u64, Option<String>)>,
}

impl<'a> Selecting<'a> {
    pub fn new(inner: &'a mut dyn Sink, rule: Rule, annotate: bool) -> Selecting<'a> {
        Selecting {
            inner,
            rule,
            annotate,
            first_ts_ns: None,
            picked: Vec::new(),
        }
    }

    fn selects(&self, p: &PacketRecord, first: i64, names: &dyn Names) -> bool {
        match &self.rule {
            Rule::Frame(f) => p.frame == *f,
            Rule::Filter(filter) => filter.keeps_record(p, first, names),
        }
    }
}

impl Sink for Selecting<'_> {
    fn selects_by_player(&self) -> bool {
        matches!(&self.rule, Rule::Filter(f) if f.waits_for_names())
            || self.inner.selects_by_player()
    }

    fn end(&mut self, names: &dyn Names) -> Result<Control> {
        self.inner.end(names)
    }

    fn packet(&mut self, p: &PacketRecord, names: &dyn Names) -> Result<Control> {
        let first = *self.first_ts_ns.get_or_insert(p.ts_ns);
        if self.selects(p, first, names) {
            // The earlier IP fragments of the datagram go with it, uncommented, and so
            // do the datagrams that carried the earlier fragments of a message
            // reassembled here, so that it reassembles in the new file too.
            for &f in &p.fragment_frames {
                if f != p.frame {
                    self.picked.push((f, None));
                }
            }
            if let PacketBody::Game(g) = &p.body {
                for m in &g.messages {
                    let Some(a) = &m.assembled else { continue };
                    let kept = match &self.rule {
                        Rule::Filter(f) => f.keep_message(p, m, names),
                        Rule::Frame(_) => true,
                    };
                    if kept {
                        self.picked.extend(
                            a.frames
                                .iter()
                                .filter(|&&f| f != p.frame)
                                .map(|&f| (f, None)),
                        );
                    }
                }
            }
            let comment = self.annotate.then(|| {
                let keep = |m: &crate::pipeline::record::MessageRecord| match &self.rule {
                    Rule::Filter(f) => f.keep_message(p, m, names),
                    Rule::Frame(_) => true,
                };
                packet_annotation(p, &keep, names)
            });
            self.picked.push((p.frame, comment));
        }
        self.inner.packet(p, names)
    }

    /// Comments need the decoded fields even when the command itself does not.
    fn field_trees(&self) -> FieldTrees {
        if self.annotate {
            FieldTrees::All
        } else {
            self.inner.field_trees()
        }
    }

    fn links_relays(&self) -> bool {
        self.inner.links_relays()
    }

    fn reads_flow_counts(&self) -> bool {
        self.inner.reads_flow_counts()
    }

    fn session_ended(&mut self, session: usize) {
        self.inner.session_ended(session);
    }

    fn frame_read(&mut self, ts_ns: i64, ts_digits: u8) {
        self.inner.frame_read(ts_ns, ts_digits);
    }
}

/// Standard input copied to a temporary file, so it can be read twice; removed when
/// dropped.
pub struct Spool(tempfile::NamedTempFile);

impl Spool {
    pub fn path(&self) -> String {
        self.0.path().to_string_lossy().into_owned()
    }
}

/// For `-w` on standard input: the input as a file that can be read twice.
pub fn spool_stdin() -> Result<Spool> {
    let mut f = tempfile::NamedTempFile::new().context("creating a temporary file for -w")?;
    std::io::copy(&mut std::io::stdin().lock(), f.as_file_mut())
        .context("copying standard input to a temporary file for -w")?;
    f.as_file_mut().flush()?;
    Ok(Spool(f))
}

/// What `-w` needs before a command reads its inputs: the first input checked against
/// the target, and spooled when it is standard input (it is read twice).
pub struct Cutting {
    first: String,
    spool: Option<Spool>,
}

impl Cutting {
    pub fn prepare(
        files: &[String],
        ships: Option<&std::path::Path>,
        a: &WriteArgs,
    ) -> Result<Cutting> {
        let first = files.first().cloned().unwrap_or_default();
        let spool = if a.write.is_some() && !first.is_empty() {
            prepare(&first, ships, a)?
        } else {
            None
        };
        Ok(Cutting { first, spool })
    }

    /// The first input, as the command line names it.
    pub fn first(&self) -> &str {
        &self.first
    }

    /// Where to read `path` from: the spool in place of standard input.
    pub fn read_path(&self, path: &str) -> String {
        self.spool
            .as_ref()
            .map_or_else(|| path.to_string(), |s| s.path())
    }
}

/// Where a command's report goes: nowhere with `-w -` (the capture takes standard
/// output), else `w`.
pub fn report_writer<'a>(
    a: &WriteArgs,
    w: &'a mut dyn Write,
    nowhere: &'a mut std::io::Sink,
) -> &'a mut dyn Write {
    if to_stdout(a) {
        nowhere
    } else {
        w
    }
}

/// True when `-w -` sends the capture to standard output (and the report nowhere).
pub fn to_stdout(a: &WriteArgs) -> bool {
    a.write.as_deref() == Some("-")
}

/// Classic pcap when the name says so; pcapng otherwise (and for `-`).
fn wants_pcap(path: &str) -> bool {
    path.to_ascii_lowercase().ends_with(".pcap")
}

/// Checks `-w` before any reading (never the capture being read, nor the ships file);
/// with standard input as the capture, spools it.
pub fn prepare(
    file: &str,
    ships: Option<&std::path::Path>,
    a: &WriteArgs,
) -> Result<Option<Spool>> {
    let Some(target) = &a.write else {
        return Ok(None);
    };
    if a.annotate && wants_pcap(target) {
        anyhow::bail!(
            "--annotate needs a pcapng file: classic pcap has no packet comments ({target})"
        );
    }
    let inputs: Vec<&std::path::Path> = std::iter::once(std::path::Path::new(file))
        .chain(ships)
        .collect();
    crate::outfile::refuse_inputs("-w", std::path::Path::new(target), &inputs)?;
    if file == "-" {
        return spool_stdin().map(Some);
    }
    Ok(None)
}

/// After the command ran: writes the picked frames to the `-w` target (`w`, the
/// standard output, for `-`).
pub fn finish(
    input: &str,
    shown_name: &str,
    a: &WriteArgs,
    picked: &mut Vec<(u64, Option<String>)>,
    w: &mut dyn Write,
    quiet: bool,
) -> Result<()> {
    let Some(target) = &a.write else {
        return Ok(());
    };
    let n = if target == "-" {
        write_selected(input, shown_name, picked, target, w)?
    } else {
        let file = crate::outfile::OutputFile::create(std::path::Path::new(target))?;
        let mut out = std::io::BufWriter::with_capacity(1 << 16, file);
        let n = write_selected(input, shown_name, picked, target, &mut out)?;
        out.into_inner()
            .map_err(|e| e.into_error())
            .with_context(|| format!("writing {target}"))?
            .commit()?;
        n
    };
    if !quiet {
        eprintln!("bcwire: wrote {n} frames to {target}");
    }
    Ok(())
}

/// Copies the `picked` frames of the capture at `input` to `out` (the `-w` target
/// named `target`). Returns the number of frames written.
pub fn write_selected(
    input: &str,
    shown_name: &str,
    picked: &mut Vec<(u64, Option<String>)>,
    target: &str,
    out: &mut dyn Write,
) -> Result<u64> {
    // Records come in capture order, but a datagram's fragments may precede frames
    // already picked.
    // A frame picked twice keeps its comment.
    picked.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.is_some().cmp(&a.1.is_some())));
    picked.dedup_by_key(|p| p.0);
    let mut reader = CaptureReader::open(input).map_err(|e| anyhow::anyhow!("{input}: {e}"))?;
    let mut frame = Frame::default();
    let mut next = 0;
    let mut sink = Target::new(target, shown_name, out);
    while next < picked.len() {
        match reader.read_into(&mut frame) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) if e.is_fatal() => break,
            Err(_) => continue,
        }
        while next < picked.len() && picked[next].0 < frame.number {
            next += 1;
        }
        if next == picked.len() || picked[next].0 != frame.number {
            continue;
        }
        // The frame's own comments stay, each its own; `--annotate` adds its line after
        // them.
        let comments: Vec<&str> = frame
            .comments
            .iter()
            .map(String::as_str)
            .chain(picked[next].1.as_deref())
            .collect();
        next += 1;
        sink.write(&frame, &comments)
            .with_context(|| format!("writing frame {} to {target}", frame.number))?;
    }
    let written = sink.written;
    if !sink.started() {
        // Nothing selected: still a valid, empty capture.
        let lt = reader
            .link_types()
            .first()
            .copied()
            .unwrap_or(link_type::ETHERNET);
        sink.start(lt)?;
    }
    sink.finish()?;
    Ok(written)
}

/// The capture being written, opened at the first frame (a classic pcap header needs
/// its link type).
struct Target<'w> {
    pcap: bool,
    input_name: String,
    out: Option<&'w mut dyn Write>,
    writer: Option<CaptureWriter<&'w mut dyn Write>>,
    /// Source interface (file-wide index) → interface id written.
    interfaces: HashMap<u32, u32>,
    pcap_link: u32,
    written: u64,
}

impl<'w> Target<'w> {
    fn new(target: &str, input_name: &str, out: &'w mut dyn Write) -> Target<'w> {
        Target {
            pcap: wants_pcap(target),
            input_name: input_name.to_string(),
            out: Some(out),
            writer: None,
            interfaces: HashMap::new(),
            pcap_link: 0,
            written: 0,
        }
    }

    fn started(&self) -> bool {
        self.writer.is_some()
    }

    fn start(&mut self, link: u32) -> Result<()> {
        let Some(out) = self.out.take() else {
            return Ok(());
        };
        self.writer = Some(if self.pcap {
            self.pcap_link = link;
            // Nanoseconds keep every timestamp exact, whatever the input's unit.
            CaptureWriter::pcap(out, link, TsResolution::NANO, Endian::Little, 262_144)?
        } else {
            CaptureWriter::pcapng_with(out, Endian::Little, Some(&user_application()))?
        });
        Ok(())
    }

    fn write(&mut self, f: &Frame, comments: &[&str]) -> Result<()> {
        if !self.started() {
            self.start(f.link_type)?;
        }
        let pcap = self.pcap;
        let pcap_link = self.pcap_link;
        let Some(w) = self.writer.as_mut() else {
            return Ok(());
        };
        let iface = if pcap {
            if f.link_type != pcap_link {
                anyhow::bail!(
                    "frame {} is {} but the pcap file holds {} frames; a pcapng file (any name not ending in .pcap) can hold both",
                    f.number,
                    link_type::name(f.link_type),
                    link_type::name(pcap_link)
                );
            }
            0
        } else {
            match self.interfaces.get(&f.interface) {
                Some(&id) => id,
                None => {
                    let lt = u16::try_from(f.link_type).unwrap_or(u16::MAX);
                    let info = InterfaceInfo {
                        name: Some(format!("{}#{}", self.input_name, f.interface)),
                        description: Some(format!(
                            "{} frames of interface {} of {}, selected by bcwire",
                            link_type::name(f.link_type),
                            f.interface,
                            self.input_name
                        )),
                    };
                    let id = w.add_interface_with(lt, 0, TsResolution::NANO, 0, &info)?;
                    self.interfaces.insert(f.interface, id);
                    id
                }
            }
        };
        w.write_frame_comments(iface, f.ts_ns, f.orig_len, &f.data, comments)?;
        self.written += 1;
        Ok(())
    }

    fn finish(self) -> Result<()> {
        if let Some(mut w) = self.writer {
            w.flush()?;
        }
        Ok(())
    }
}
