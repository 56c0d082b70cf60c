//! `bcwire wireshark`: bcwire's decode inside Wireshark.
//!
//! The plugin (`wireshark.lua`, filled in here with the field and expert tables) decodes
//! nothing: `prepare` runs the pipeline once and writes a copy of the capture whose
//! interface descriptions name a decode file beside it, one tab-separated line per
//! datagram, message, fact and decoded field with its byte span; the plugin reads that
//! file and builds Wireshark's tree, fields and expert items from it. So there is one
//! decoder, and the plugin stays a reader that cannot disagree with `bcwire show`.
//! docs/wireshark.md says why this path was chosen over the others.
//!
//! Why this file is long: about 950 lines; the decode file has one writer, which walks every part of a
//! record (datagram, facts, messages, game messages, nested fields, warnings) and
//! writes each value for its Wireshark type; the commands around it are short.
//!
//! The decode file, format 1 (every line tab-separated; text escaped as `\t`, `\n`,
//! `\r`, `\\`):
//!
//! ```text
//! bcwire-wireshark  1  bcwire VERSION  capture
//! P  frame  udp_length  kind  plain_hex  info  label       one per datagram
//! F  name  value                                           a fact of the datagram or message
//! M  offset  length  label                                 a transport message
//! A  reassembled_hex                                       the message a last fragment completes
//! G  tvb  start  length  opcode_field  value  label        a game message (tvb p or a)
//! D  depth  tvb  start  length  name  value  label  flags  a decoded field (flags: g, h)
//! W  code  tvb  start  length  message                     a warning (start `-`: the container)
//! ```
//!
//! Values are written for the Wireshark type of their name: `u64`/`i64` as hex digits
//! (two's complement for `i64`; exact beyond Lua's 2^53), `hex32` as a decimal, `double` as the shortest
//! decimal, `bool` as 1/0, `bytes` as hex.

use super::Output;
use crate::capture::writer::{user_application, InterfaceInfo};
use crate::capture::{CaptureReader, CaptureWriter, Endian, Frame, TsResolution};
use crate::cli::{InputArgs, ListArgs, ListWhat, TableOrJson, WiresharkArgs, WiresharkWhat};
use crate::diag::{Code, Kind, Warning};
use crate::game::field::{hex_string, Field, Value};
use crate::game::qualified;
use crate::game::registry::{self, GameField};
use crate::pipeline::facts::{self, Fact, FactValue, RecordCx, FACTS};
use crate::pipeline::field_names;
use crate::pipeline::names::Names;
use crate::pipeline::record::{MessageRecord, PacketBody, PacketRecord, TransportInfo};
use crate::pipeline::{Control, Sink};
use crate::report::decode::{packet_annotation, transport_summary};
use crate::report::text::{float_text, printable, value_text};
use anyhow::{Context, Result};
use std::borrow::Cow;
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

const TEMPLATE: &str = include_str!("wireshark.lua");

/// Version of the decode file's lines; the plugin refuses other versions.
const DECODE_FORMAT: &str = "1";

/// What the plugin looks for in a prepared capture's interface description.
const DESCRIPTION_PREFIX: &str = "bcwire decode: ";

pub fn wireshark(a: WiresharkArgs, out: Output, w: &mut dyn Write) -> Result<i32> {
    match a.what {
        WiresharkWhat::Plugin => {
            w.write_all(plugin(out)?.as_bytes())?;
            Ok(0)
        }
        WiresharkWhat::Install { dir } => {
            let dir = match dir {
                Some(d) => d,
                None => plugin_folder()?,
            };
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            let path = dir.join("bcwire.lua");
            crate::outfile::write_whole(&path, plugin(out)?.as_bytes())?;
            if !out.quiet {
                eprintln!(
                    "bcwire: wrote {}; Wireshark loads it at its next start \
                     (Help > About > Plugins lists it)",
                    path.display()
                );
            }
            Ok(0)
        }
        WiresharkWhat::Prepare {
            file,
            output,
            input,
        } => prepare(&file, &output, &input, out),
    }
}

/// The personal Lua plugin folder of Wireshark on this system.
fn plugin_folder() -> Result<PathBuf> {
    if cfg!(windows) {
        let appdata = std::env::var_os("APPDATA")
            .context("APPDATA is not set; give the folder with --dir")?;
        Ok(PathBuf::from(appdata).join("Wireshark").join("plugins"))
    } else {
        let home =
            std::env::var_os("HOME").context("HOME is not set; give the folder with --dir")?;
        Ok(PathBuf::from(home).join(".local/lib/wireshark/plugins"))
    }
}

/// The Wireshark type a name is registered with (the keys of the plugin's `FTYPES`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WsType {
    U64,
    I64,
    Hex32,
    Double,
    Bool,
    Str,
    Bytes,
    /// Vectors, lists and groups: a node whose presence can be tested; its values are
    /// its children.
    None,
}

impl WsType {
    fn key(self) -> &'static str {
        match self {
            WsType::U64 => "u64",
            WsType::I64 => "i64",
            WsType::Hex32 => "hex32",
            WsType::Double => "double",
            WsType::Bool => "bool",
            WsType::Str => "str",
            WsType::Bytes => "bytes",
            WsType::None => "none",
        }
    }

    /// The type of `bcwire list fields`' `type`.
    fn of_listed(ty: &str) -> WsType {
        match ty {
            "uint" => WsType::U64,
            "int" => WsType::I64,
            // Object ids are 32 bits; hex values (flags, codes, class ids) are read
            // from at most 32 bits.
            "hex" | "object_id" => WsType::Hex32,
            "float" => WsType::Double,
            "bool" => WsType::Bool,
            "bytes" => WsType::Bytes,
            "vec3" | "list" | "group" => WsType::None,
            _ => WsType::Str,
        }
    }

    /// One type for a name listed twice (a fact and a decoded field of the same name):
    /// one Wireshark field can hold both.
    fn merge(self, other: WsType) -> WsType {
        use WsType::*;
        match (self, other) {
            (a, b) if a == b => a,
            (Str, _) | (_, Str) => Str,
            (None, x) | (x, None) => x,
            (Double, U64 | I64 | Hex32) | (U64 | I64 | Hex32, Double) => Double,
            (I64, U64 | Hex32) | (U64 | Hex32, I64) => I64,
            (U64, Hex32) | (Hex32, U64) => U64,
            _ => Str,
        }
    }
}

/// One Wireshark field of the plugin.
#[derive(Debug, Clone)]
struct WsField {
    name: String,
    ty: WsType,
    description: String,
}

/// Every name of `bcwire list fields --format json` once (tshark's own names, which the
/// facts take as aliases, left out: Wireshark has them already), with the type its
/// Wireshark field gets.
fn ws_fields(out: Output) -> Result<Vec<WsField>> {
    let mut listed = Vec::new();
    let quiet = Output {
        color: false,
        quiet: true,
        progress: false,
        ..out
    };
    super::list::list(
        ListArgs {
            what: ListWhat::Fields {
                format: TableOrJson::Json,
            },
        },
        quiet,
        &mut listed,
    )?;
    let entries: Vec<serde_json::Value> = serde_json::from_slice(&listed)?;
    let mut fields: Vec<WsField> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for e in &entries {
        let text = |k: &str| e.get(k).and_then(|v| v.as_str()).unwrap_or_default();
        let name = text("name");
        if text("kind") == "fact" && facts::lookup(name).is_some_and(|f| f.name != name) {
            continue;
        }
        let ty = WsType::of_listed(text("type"));
        let mut description = text("description").to_string();
        let unit = text("unit");
        if !unit.is_empty() {
            description = format!("{description} [{unit}]");
        }
        match index.get(name) {
            Some(&i) => {
                let f = &mut fields[i];
                f.ty = f.ty.merge(ty);
                f.description = format!("{}; also: {description}", f.description);
            }
            None => {
                index.insert(name.to_string(), fields.len());
                fields.push(WsField {
                    name: name.to_string(),
                    ty,
                    description,
                });
            }
        }
    }
    Ok(fields)
}

/// The Wireshark expert group of a kind of warning.
fn expert_group(kind: Kind) -> &'static str {
    match kind {
        Kind::Malformed => "malformed",
        Kind::NonStock => "protocol",
        Kind::Sequence => "sequence",
        Kind::Limit => "undecoded",
    }
}

/// A Lua string literal.
fn lua_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\{:03}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The plugin's text: the template with this bcwire's field and expert tables.
fn plugin(out: Output) -> Result<String> {
    let mut fields = String::new();
    for f in ws_fields(out)? {
        fields.push_str(&format!(
            "    {{ {}, {}, {} }},\n",
            lua_string(&f.name),
            lua_string(f.ty.key()),
            lua_string(&f.description)
        ));
    }
    let mut experts = String::new();
    for &code in Code::ALL {
        experts.push_str(&format!(
            "    {{ {}, {}, {}, {} }},\n",
            lua_string(code.as_str()),
            lua_string(expert_group(code.kind())),
            lua_string(code.severity().as_str()),
            lua_string(code.description())
        ));
    }
    Ok(TEMPLATE
        .replace("@@VERSION@@", env!("CARGO_PKG_VERSION"))
        .replace("--@@FIELDS@@\n", &fields)
        .replace("--@@EXPERTS@@\n", &experts))
}

/// `prepare`: the copy of the capture, then its decode read from that copy (so the
/// decode's frame numbers are the copy's, which Wireshark numbers the same way).
fn prepare(file: &str, output: &Path, input: &InputArgs, out: Output) -> Result<i32> {
    let cfg = super::run::config(input)?;
    if output
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("pcap"))
    {
        anyhow::bail!(
            "{}: prepare writes pcapng (its interface descriptions name the decode file); \
             give a name ending in .pcapng",
            output.display()
        );
    }
    let decode_path = PathBuf::from(format!("{}.bcwire", output.display()));
    let inputs: Vec<&Path> = std::iter::once(Path::new(file))
        .chain(input.ships.as_deref())
        .collect();
    crate::outfile::refuse_inputs("-o", output, &inputs)?;
    crate::outfile::refuse_inputs("-o", &decode_path, &inputs)?;
    let absolute = std::path::absolute(&decode_path)
        .with_context(|| format!("resolving {}", decode_path.display()))?;
    let shown = if file == "-" { "stdin" } else { file };
    let frames = copy_capture(file, shown, output, &absolute)?;

    let out_str = output.to_string_lossy().into_owned();
    let types: HashMap<String, WsType> = ws_fields(out)?
        .into_iter()
        .map(|f| (f.name, f.ty))
        .collect();
    let target = crate::outfile::OutputFile::create(&decode_path)?;
    let mut buf = std::io::BufWriter::with_capacity(1 << 16, target);
    writeln!(
        buf,
        "bcwire-wireshark\t{DECODE_FORMAT}\tbcwire {}\t{}",
        env!("CARGO_PKG_VERSION"),
        escape(shown)
    )?;
    let mut sink = DecodeWriter {
        out: &mut buf,
        types: &types,
        first_ts_ns: None,
        datagrams: 0,
        scope: (None, None),
    };
    let summary = super::run::run_file(&out_str, &cfg, &mut sink, out)?;
    let datagrams = sink.datagrams;
    buf.into_inner()
        .map_err(|e| e.into_error())
        .with_context(|| format!("writing {}", decode_path.display()))?
        .commit()?;
    super::run::warn_problems(shown, &summary, &cfg, out);
    if !out.quiet {
        eprintln!(
            "bcwire: wrote {} ({frames} frames) and {} ({datagrams} datagrams decoded); \
             open {} in Wireshark with the plugin (`bcwire wireshark install`)",
            output.display(),
            decode_path.display(),
            output.display()
        );
    }
    Ok(0)
}

/// Copies every frame of `file` to `output` (pcapng), each interface described by the
/// decode file's path. Returns the number of frames.
fn copy_capture(file: &str, shown: &str, output: &Path, decode: &Path) -> Result<u64> {
    let mut reader = CaptureReader::open(file).map_err(|e| anyhow::anyhow!("{shown}: {e}"))?;
    let target = crate::outfile::OutputFile::create(output)?;
    let mut buf = std::io::BufWriter::with_capacity(1 << 16, target);
    let mut writer =
        CaptureWriter::pcapng_with(&mut buf, Endian::Little, Some(&user_application()))?;
    let mut interfaces: HashMap<u32, u32> = HashMap::new();
    let mut frame = Frame::default();
    let mut written = 0u64;
    let description = format!("{DESCRIPTION_PREFIX}{}", decode.display());
    loop {
        match reader.read_into(&mut frame) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) if e.is_fatal() => break,
            Err(_) => continue,
        }
        let id = match interfaces.get(&frame.interface) {
            Some(&id) => id,
            None => {
                let lt = u16::try_from(frame.link_type).unwrap_or(u16::MAX);
                let info = InterfaceInfo {
                    name: Some(format!("{shown}#{}", frame.interface)),
                    description: Some(description.clone()),
                };
                let id = writer.add_interface_with(lt, 0, TsResolution::NANO, 0, &info)?;
                interfaces.insert(frame.interface, id);
                id
            }
        };
        writer
            .write_frame_comments(
                id,
                frame.ts_ns,
                frame.orig_len,
                &frame.data,
                &frame
                    .comments
                    .iter()
                    .map(String::as_str)
                    .collect::<Vec<_>>(),
            )
            .with_context(|| format!("writing frame {} to {}", frame.number, output.display()))?;
        written += 1;
    }
    if interfaces.is_empty() {
        let lt = reader
            .link_types()
            .first()
            .copied()
            .unwrap_or(crate::capture::link_type::ETHERNET);
        let info = InterfaceInfo {
            name: Some(shown.to_string()),
            description: Some(description),
        };
        writer.add_interface_with(
            u16::try_from(lt).unwrap_or(u16::MAX),
            0,
            TsResolution::NANO,
            0,
            &info,
        )?;
    }
    writer.flush()?;
    drop(writer);
    buf.into_inner()
        .map_err(|e| e.into_error())
        .with_context(|| format!("writing {}", output.display()))?
        .commit()?;
    Ok(written)
}

/// Text for one tab-separated cell.
fn escape(s: &str) -> Cow<'_, str> {
    if !s.contains(['\t', '\n', '\r', '\\']) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// A float as the shortest decimal that reads back as the value (as an f32 when it
/// came from one, as the JSON records write it).
fn float_cell(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.into();
    }
    if (v as f32) as f64 == v {
        format!("{}", v as f32)
    } else {
        format!("{v}")
    }
}

/// A scalar on its way to a cell.
enum Scalar<'a> {
    U(u64),
    I(i64),
    F(f64),
    B(bool),
    T(&'a str),
    Bytes(&'a [u8]),
}

/// The cell of `v` for a field of type `ty`, or None where that field cannot hold it
/// (the item is then text only).
fn encode(ty: WsType, v: &Scalar<'_>) -> Option<String> {
    let int = match v {
        Scalar::U(n) => Some(i128::from(*n)),
        Scalar::I(n) => Some(i128::from(*n)),
        _ => None,
    };
    match ty {
        WsType::U64 => int
            .and_then(|n| u64::try_from(n).ok())
            .map(|n| format!("{n:x}")),
        WsType::I64 => int
            .and_then(|n| i64::try_from(n).ok())
            .map(|n| format!("{:x}", n as u64)),
        WsType::Hex32 => int
            .and_then(|n| u32::try_from(n).ok())
            .map(|n| n.to_string()),
        WsType::Double => match v {
            Scalar::F(f) => Some(float_cell(*f)),
            _ => int.map(|n| n.to_string()),
        },
        WsType::Bool => match v {
            Scalar::B(b) => Some(if *b { "1" } else { "0" }.into()),
            _ => None,
        },
        WsType::Str => Some(match v {
            Scalar::U(n) => n.to_string(),
            Scalar::I(n) => n.to_string(),
            Scalar::F(f) => float_cell(*f),
            Scalar::B(b) => b.to_string(),
            Scalar::T(t) => escape(t).into_owned(),
            Scalar::Bytes(b) => hex_string(b),
        }),
        WsType::Bytes => match v {
            Scalar::Bytes(b) => Some(hex_string(b)),
            _ => None,
        },
        WsType::None => None,
    }
}

/// `start`, `len` within a buffer of `total` bytes.
fn clip(start: usize, len: usize, total: usize) -> (usize, usize) {
    let start = start.min(total);
    (start, len.min(total - start))
}

/// The sink of `prepare`: every record as lines of the decode file.
struct DecodeWriter<'a> {
    out: &'a mut dyn Write,
    types: &'a HashMap<String, WsType>,
    first_ts_ns: Option<i64>,
    datagrams: u64,
    /// The game opcode or connection-management type whose fields are being written,
    /// which picks a field's qualified name (`stateupdate.flags`).
    scope: (Option<u8>, Option<&'static str>),
}

/// Where a field's bytes are: the decrypted datagram (`p`) or a reassembled message
/// (`a`), its length, and the offset its spans count from.
#[derive(Clone, Copy)]
struct Place {
    tvb: char,
    total: usize,
    base: usize,
}

impl Sink for DecodeWriter<'_> {
    fn packet(&mut self, p: &PacketRecord, names: &dyn Names) -> Result<Control> {
        let first = *self.first_ts_ns.get_or_insert(p.ts_ns);
        self.datagrams += 1;
        self.write_packet(p, names, first)?;
        Ok(Control::Continue)
    }
}

impl DecodeWriter<'_> {
    fn ty(&self, name: &str) -> Option<WsType> {
        self.types.get(name).copied()
    }

    fn write_packet(&mut self, p: &PacketRecord, names: &dyn Names, first: i64) -> Result<()> {
        let game = match &p.body {
            PacketBody::Game(g) => Some(g),
            PacketBody::GameSpy { .. } => None,
        };
        let info = packet_annotation(p, &|_| true, names);
        let info = info.strip_prefix("bcwire: ").unwrap_or(&info);
        let client = names
            .client_name(p.session, p.client)
            .unwrap_or_else(|| format!("client {}", p.client));
        let label = match game {
            Some(g) => format!(
                "{} {client}, session {}, peer id 0x{:02X}, {} message(s), {} bytes",
                p.direction.as_str(),
                p.session,
                g.peer_id,
                g.messages.len(),
                p.udp_len
            ),
            None => format!(
                "{} {client}, session {}, GameSpy query, {} bytes",
                p.direction.as_str(),
                p.session,
                p.udp_len
            ),
        };
        writeln!(
            self.out,
            "P\t{}\t{}\t{}\t{}\t{}\t{}",
            p.frame,
            p.udp_len,
            if game.is_some() { "game" } else { "gamespy" },
            game.map(|g| hex_string(&g.plain)).unwrap_or_default(),
            escape(info),
            escape(&label)
        )?;
        let cx = RecordCx {
            packet: p,
            message: None,
            names,
            client_names: None,
            first_ts_ns: first,
        };
        for f in FACTS.iter().filter(|f| !f.per_message) {
            self.facts(f.fact, &cx)?;
        }
        let Some(g) = game else {
            return Ok(());
        };
        let datagram = Place {
            tvb: 'p',
            total: g.plain.len(),
            base: 0,
        };
        for w in &g.warnings {
            self.warning(w, datagram)?;
        }
        for m in &g.messages {
            self.message(p, m, names, first, datagram)?;
        }
        Ok(())
    }

    fn facts(&mut self, fact: Fact, cx: &RecordCx<'_>) -> Result<()> {
        let info = facts::info(fact);
        let Some(ty) = self.ty(info.name) else {
            return Ok(());
        };
        let mut values = facts::FactValues::new();
        facts::values(fact, cx, &mut values);
        for v in values {
            let scalar = match &v {
                FactValue::Uint(n) | FactValue::Hex(n) => Scalar::U(*n),
                FactValue::Float(f) => Scalar::F(*f),
                FactValue::Bool(b) => Scalar::B(*b),
                FactValue::Text(t) => Scalar::T(t),
            };
            if let Some(cell) = encode(ty, &scalar) {
                writeln!(self.out, "F\t{}\t{cell}", info.name)?;
            }
        }
        Ok(())
    }

    fn warning(&mut self, w: &Warning, at: Place) -> Result<()> {
        let (start, len) = match w.offset {
            Some(o) => {
                let (s, l) = clip(at.base + o, 1, at.total);
                (s.to_string(), l.to_string())
            }
            None => ("-".to_string(), "0".to_string()),
        };
        writeln!(
            self.out,
            "W\t{}\t{}\t{start}\t{len}\t{}",
            w.code.as_str(),
            at.tvb,
            escape(&format!("{}: {}", w.code.as_str(), w.message))
        )?;
        Ok(())
    }

    fn message(
        &mut self,
        p: &PacketRecord,
        m: &MessageRecord,
        names: &dyn Names,
        first: i64,
        datagram: Place,
    ) -> Result<()> {
        let transport_name = match &m.transport {
            TransportInfo::Data { .. } => "data",
            TransportInfo::Ack { .. } => "ack",
            TransportInfo::Low { name, .. } => name,
            TransportInfo::Unknown => "unknown",
        };
        let (start, len) = clip(m.offset, m.length, datagram.total);
        let mut label = format!(
            "Transport message 0x{:02X} {transport_name} [{}..{}] {}",
            m.transport_type,
            start,
            start + len,
            transport_summary(m)
        );
        if let Some(f) = m.original_frame {
            label.push_str(&format!(" (first copy: frame {f})"));
        }
        writeln!(self.out, "M\t{start}\t{len}\t{}", escape(&label))?;
        let cx = RecordCx {
            packet: p,
            message: Some(m),
            names,
            client_names: None,
            first_ts_ns: first,
        };
        for f in FACTS
            .iter()
            .filter(|f| f.per_message && f.fact != Fact::Opcode)
        {
            self.facts(f.fact, &cx)?;
        }
        for w in &m.warnings {
            self.warning(w, datagram)?;
        }
        let payload = Place {
            base: m.payload_offset.unwrap_or(m.offset),
            ..datagram
        };
        if let TransportInfo::Low { fields, name, .. } = &m.transport {
            self.scope = (None, Some(name));
            self.fields(fields, 1, payload)?;
        }
        let object = |g: &crate::game::GameMessage| {
            g.object_id()
                .and_then(|o| names.describe_object(p.session, o))
                .map(|d| format!("  [{d}]"))
                .unwrap_or_default()
        };
        if let Some(g) = &m.game {
            let (s, l) = clip(payload.base, g.length, payload.total);
            let mut label = format!(
                "0x{:02X} {} ({} bytes){}",
                g.opcode,
                g.name,
                g.length,
                object(g)
            );
            if m.retransmission {
                label.push_str(" (retransmission, not delivered again)");
            }
            writeln!(
                self.out,
                "G\tp\t{s}\t{l}\t1\t{}\t{}",
                g.opcode,
                escape(&label)
            )?;
            self.scope = (Some(g.opcode), None);
            self.fields(&g.fields, 1, payload)?;
            for w in &g.warnings {
                self.warning(w, payload)?;
            }
        }
        if let Some(a) = &m.assembled {
            let frames: Vec<String> = a.frames.iter().map(u64::to_string).collect();
            writeln!(self.out, "A\t{}", hex_string(&a.bytes))?;
            let label = format!(
                "0x{:02X} {} ({} bytes, reassembled from frames {}){}",
                a.game.opcode,
                a.game.name,
                a.game.length,
                frames.join(", "),
                object(&a.game)
            );
            let whole = Place {
                tvb: 'a',
                total: a.bytes.len(),
                base: 0,
            };
            let (s, l) = clip(0, a.game.length, whole.total);
            writeln!(
                self.out,
                "G\ta\t{s}\t{l}\t{}\t{}\t{}",
                if m.game.is_none() { 1 } else { 0 },
                a.game.opcode,
                escape(&label)
            )?;
            self.scope = (Some(a.game.opcode), None);
            self.fields(&a.game.fields, 1, whole)?;
            for w in &a.game.warnings {
                self.warning(w, whole)?;
            }
        }
        Ok(())
    }

    /// One `D` line.
    #[allow(clippy::too_many_arguments)]
    fn item(
        &mut self,
        depth: u32,
        at: Place,
        span: (usize, usize),
        name: &str,
        value: &str,
        label: &str,
        flags: &str,
    ) -> Result<()> {
        let (s, l) = clip(at.base.saturating_add(span.0), span.1, at.total);
        writeln!(
            self.out,
            "D\t{depth}\t{}\t{s}\t{l}\t{name}\t{value}\t{}\t{flags}",
            at.tvb,
            escape(label)
        )?;
        Ok(())
    }

    /// The decoded fields at tree depth `depth`, each found in the registry by the
    /// entry it carries.
    fn fields(&mut self, fields: &[Field], depth: u32, at: Place) -> Result<()> {
        for f in fields {
            let span = (f.span.start as usize, f.span.len as usize);
            self.value(&f.name, &f.value, f.id.entry(), span, depth, at)?;
        }
        Ok(())
    }

    /// The registered name of a field's entry and its type, if it has one: its
    /// qualified name where the bare one is shared or a record fact's
    /// (`crate::game::qualified`), with the bare name when that still stands for it.
    fn registered(
        &self,
        entry: Option<&'static GameField>,
    ) -> Option<((&'static str, WsType), Option<&'static str>)> {
        let entry = entry?;
        let bare = Some(entry.name).filter(|n| !field_names::is_shadowed(n));
        match qualified::entry_for(entry.name, self.scope.0, self.scope.1) {
            Some(q) => Some(((q.name, self.ty(q.name)?), bare)),
            None => Some(((entry.name, self.ty(entry.name)?), None)),
        }
    }

    fn value(
        &mut self,
        leaf: &str,
        value: &Value,
        entry: Option<&'static GameField>,
        span: (usize, usize),
        depth: u32,
        at: Place,
    ) -> Result<()> {
        let (reg, also) = match self.registered(entry) {
            Some((reg, also)) => (Some(reg), also),
            None => (None, None),
        };
        // A node (vector, list, group) is its field where that is registered as one.
        let node_name = reg
            .filter(|(_, ty)| *ty == WsType::None)
            .map_or("", |(n, _)| n);
        match value {
            Value::Group(inner) => {
                self.item(depth, at, span, node_name, "", leaf, "")?;
                self.fields(inner, depth + 1, at)
            }
            Value::List(items) => {
                let label = format!("{leaf}: {} entries", items.len());
                self.item(depth, at, span, node_name, "", &label, "")?;
                for (i, item) in items.iter().enumerate() {
                    match item {
                        Value::Group(inner) => {
                            let label = element_label(leaf, i, inner);
                            let span = union(inner).unwrap_or(span);
                            self.item(depth + 1, at, span, "", "", &label, "")?;
                            self.fields(inner, depth + 2, at)?;
                        }
                        other => {
                            let label = format!("{leaf}[{i}]: {}", value_text(other));
                            self.item(depth + 1, at, span, "", "", &label, "")?;
                        }
                    }
                }
                Ok(())
            }
            Value::Vec3(v) => {
                let label = format!("{leaf}: {}", value_text(value));
                self.item(depth, at, span, node_name, "", &label, "")?;
                for (k, (c, comp)) in registry::VECTOR_COMPONENTS.iter().zip(v).enumerate() {
                    let comp_entry = entry.and_then(|e| registry::component(e, k));
                    let comp_value = Value::Float(f64::from(*comp));
                    self.value(c, &comp_value, comp_entry, span, depth + 1, at)?;
                }
                Ok(())
            }
            scalar => {
                let s = match scalar {
                    Value::Bool(b) => Scalar::B(*b),
                    Value::Uint(n) => Scalar::U(*n),
                    Value::Int(n) => Scalar::I(*n),
                    Value::Float(f) => Scalar::F(*f),
                    Value::ObjectId(n) => Scalar::U(u64::from(*n)),
                    Value::Hex(n) => Scalar::U(*n),
                    Value::Text(t) => Scalar::T(t),
                    Value::Bytes(b) => Scalar::Bytes(b),
                    _ => Scalar::T(""),
                };
                let shown = match scalar {
                    Value::Text(t) => printable(t),
                    Value::Float(f) => float_text(*f),
                    other => value_text(other),
                };
                let label = format!("{leaf}: {shown}");
                let (name, cell) = match reg {
                    Some((name, ty)) => match encode(ty, &s) {
                        // Raw bytes are a field only where they are the bytes they
                        // stand on (the plugin hands Wireshark the value and the span).
                        Some(cell)
                            if !(ty == WsType::Bytes
                                && matches!(scalar, Value::Bytes(b) if b.len() != clip(at.base.saturating_add(span.0), span.1, at.total).1)) =>
                        {
                            (name, cell)
                        }
                        _ => ("", String::new()),
                    },
                    None => ("", String::new()),
                };
                self.item(depth, at, span, name, &cell, &label, "")?;
                // The bare name that stands for every message's field of that name
                // (`flags`), hidden beside the qualified one, for filters.
                if let Some(bare) = also.filter(|_| !name.is_empty()) {
                    if let Some(cell) = self.ty(bare).and_then(|ty| encode(ty, &s)) {
                        self.item(depth, at, span, bare, &cell, &label, "h")?;
                    }
                }
                // The JSON records' `_hex` twin, as a hidden field for filters, under
                // each name the field has.
                if let Some(twin) = scalar.hex_twin() {
                    for base in [Some(name), also].into_iter().flatten() {
                        let twin_name = format!("{base}_hex");
                        let Some(entry) = registry::lookup(&twin_name)
                            .or_else(|| qualified::lookup_qualified(&twin_name))
                            .filter(|e| e.is_json_twin() && e.name == twin_name)
                        else {
                            continue;
                        };
                        if let Some(cell) = self
                            .ty(entry.name)
                            .and_then(|ty| encode(ty, &Scalar::T(&twin)))
                        {
                            let label = format!("{leaf}_hex: {twin}");
                            self.item(depth, at, span, entry.name, &cell, &label, "h")?;
                        }
                    }
                }
                Ok(())
            }
        }
    }
}

/// `subsystems[2] Torpedoes`: a list element, named by its `name` or `key` field.
fn element_label(list: &str, i: usize, fields: &[Field]) -> String {
    let named = ["name", "key"].iter().find_map(|k| {
        fields.iter().find_map(|f| match &f.value {
            Value::Text(t) if f.name == *k => Some(t.as_str()),
            _ => None,
        })
    });
    match named {
        Some(n) => format!("{list}[{i}] {}", printable(n)),
        None => format!("{list}[{i}]"),
    }
}

/// The bytes the fields of a group cover, first to last (None when they cover none).
fn union(fields: &[Field]) -> Option<(usize, usize)> {
    let spans = fields.iter().filter(|f| f.span.len > 0).map(|f| f.span);
    let start = spans.clone().map(|s| s.start).min()?;
    let end = spans.map(|s| s.end()).max()?;
    Some((start as usize, (end - start) as usize))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_merge_to_one_that_holds_both() {
        assert_eq!(WsType::Str.merge(WsType::None), WsType::Str);
        assert_eq!(WsType::U64.merge(WsType::I64), WsType::I64);
        assert_eq!(WsType::Hex32.merge(WsType::Hex32), WsType::Hex32);
        assert_eq!(WsType::None.merge(WsType::Double), WsType::Double);
    }

    #[test]
    fn cells_are_exact_and_escaped() {
        assert_eq!(
            encode(WsType::U64, &Scalar::U(u64::MAX)).as_deref(),
            Some("ffffffffffffffff")
        );
        assert_eq!(
            encode(WsType::I64, &Scalar::I(-1)).as_deref(),
            Some("ffffffffffffffff")
        );
        assert_eq!(encode(WsType::U64, &Scalar::I(-1)), None);
        assert_eq!(
            encode(WsType::Hex32, &Scalar::U(0x1C)).as_deref(),
            Some("28")
        );
        assert_eq!(
            encode(WsType::Double, &Scalar::F(f64::from(98.04662f32))).as_deref(),
            Some("98.04662")
        );
        assert_eq!(
            encode(WsType::Str, &Scalar::T("a\tb\\")).as_deref(),
            Some("a\\tb\\\\")
        );
        assert_eq!(lua_string("a\"b\n\u{1}"), "\"a\\\"b\\n\\001\"");
    }

    #[test]
    fn every_listed_name_is_a_field_once() {
        let out = Output {
            color: false,
            quiet: true,
            verbose: 0,
            progress: false,
            line_buffered: false,
        };
        let fields = ws_fields(out).unwrap();
        let mut seen = std::collections::HashSet::new();
        for f in &fields {
            assert!(seen.insert(f.name.clone()), "{} twice", f.name);
            assert!(
                f.name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "_.".contains(c)),
                "{}",
                f.name
            );
        }
        for g in field_names::listed_fields().chain(qualified::QUALIFIED) {
            assert!(seen.contains(g.name), "{}", g.name);
        }
        assert!(!seen.contains("frame.number"));
    }
}
