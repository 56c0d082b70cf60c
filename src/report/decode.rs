//! `bcwire decode`: one line per game message (table / CSV), or JSON records.

use super::names::Names;
use super::term::Palette;
use super::text::fields_inline;
use crate::game::stateupdate::StateUpdate;
use crate::game::GameMessage;
use crate::pipeline::facts::Fact;
use crate::pipeline::record::{MessageRecord, PacketBody, PacketRecord, TransportInfo};
use std::fmt::Write as _;

/// Transport summary of a message: `R#12`, `U`, `R#3 frag 1/3`, `ACK #7`, then its
/// [`transport_flags`].
pub fn transport_summary(m: &MessageRecord) -> String {
    let mut s = transport_base(m);
    let flags = transport_flags(m);
    if !flags.is_empty() {
        s.push(' ');
        s.push_str(flags);
    }
    s
}

/// `RETX` for a resent copy that is not delivered again, `keepalive` for the host's
/// periodic echo of a peer info; empty otherwise.
pub fn transport_flags(m: &MessageRecord) -> &'static str {
    if m.retransmission {
        "RETX"
    } else if m.keepalive {
        "keepalive"
    } else {
        ""
    }
}

/// Width of the transport column of decode lines: `R#65535 frag 255/255` fits.
const TRANSPORT_WIDTH: usize = 20;
/// Width of the flags column: `keepalive` fits.
const FLAGS_WIDTH: usize = 9;

/// [`transport_summary`] without its flags.
fn transport_base(m: &MessageRecord) -> String {
    let mut s = String::new();
    match &m.transport {
        TransportInfo::Data {
            reliable,
            seq,
            fragment,
            ..
        } => {
            if *reliable {
                let _ = write!(s, "R#{}", seq.unwrap_or(0));
            } else {
                s.push('U');
            }
            if let Some(f) = fragment {
                match f.total {
                    Some(t) => {
                        let _ = write!(s, " frag {}/{t}", f.index);
                    }
                    None => {
                        let _ = write!(s, " frag {}", f.index);
                    }
                }
            }
        }
        TransportInfo::Ack {
            seq,
            fragment_index,
            ..
        } => {
            let _ = write!(s, "ACK #{seq}");
            if let Some(i) = fragment_index {
                let _ = write!(s, " frag {i}");
            }
        }
        TransportInfo::Low {
            name,
            reliable,
            seq,
            ..
        } => {
            let _ = write!(s, "{name}");
            if *reliable {
                let _ = write!(s, " R#{}", seq.unwrap_or(0));
            }
        }
        TransportInfo::Unknown => s.push_str(&format!("type 0x{:02X}", m.transport_type)),
    }
    s
}

/// The game message a line is about: whole, or reassembled on the last fragment.
fn message_game(m: &MessageRecord) -> Option<(&GameMessage, bool)> {
    if let Some(g) = &m.game {
        return Some((g, false));
    }
    m.assembled.as_ref().map(|a| (&a.game, true))
}

/// Context of one line: its time as `-t` asks, client names.
pub struct LineContext<'a> {
    pub time: &'a str,
    pub names: &'a dyn Names,
    pub palette: Palette,
}

/// Table lines for the selected messages of a packet.
pub fn packet_lines(
    p: &PacketRecord,
    keep: &dyn Fn(&MessageRecord) -> bool,
    cx: &LineContext,
) -> String {
    let mut out = String::new();
    let rel = cx.time;
    let client = cx
        .names
        .client_name(p.session, p.client)
        .unwrap_or_else(|| format!("port {}", client_port(p)));
    let dir = match p.direction {
        crate::diag::Direction::C2S => cx.palette.c2s("c2s"),
        crate::diag::Direction::S2C => cx.palette.s2c("s2c"),
    };
    match &p.body {
        PacketBody::GameSpy { text } => {
            let _ = writeln!(
                out,
                "{:>7} {:>10} {:<12} {} GameSpy {}",
                p.frame,
                rel,
                client,
                dir,
                super::text::printable(text)
            );
        }
        // No message to give a line to (none announced, or the first one unreadable):
        // one line for the datagram, so that every record is in the table, with what
        // went wrong.
        PacketBody::Game(g) if g.messages.is_empty() => {
            let mut detail = format!("peer_id=0x{:02X} msg_count={}", g.peer_id, g.msg_count);
            if !g.warnings.is_empty() {
                detail.push_str(&cx.palette.warn(" ⚠"));
                for (i, w) in g.warnings.iter().enumerate() {
                    detail.push_str(if i == 0 { " " } else { "; " });
                    let _ = write!(detail, "{w}");
                }
            }
            let line = format!(
                "{:>7} {:>10} {:<12} {} {:<tw$} {:<fw$} {}",
                p.frame,
                rel,
                client,
                dir,
                "(no message)",
                "",
                detail,
                tw = TRANSPORT_WIDTH,
                fw = FLAGS_WIDTH
            );
            out.push_str(line.trim_end());
            out.push('\n');
        }
        PacketBody::Game(g) => {
            for m in g.messages.iter().filter(|m| keep(m)) {
                let ts = transport_base(m);
                let flags = transport_flags(m);
                let (what, detail) = match message_game(m) {
                    Some((game, assembled)) => {
                        let mut name = format!("0x{:02X} {}", game.opcode, game.name);
                        if assembled {
                            name.push_str(" (reassembled)");
                        }
                        let mut detail = String::new();
                        if let Some(obj) = super::json::object_of(game) {
                            if let Some(n) = cx.names.describe_object(p.session, obj) {
                                let _ = write!(detail, "[{n}] ");
                            }
                        }
                        match game.opcode {
                            0x1C => detail.push_str(&state_update_detail(game, cx.names)),
                            _ => detail.push_str(&fields_inline(&game.fields, 8)),
                        }
                        (cx.palette.opcode(&name), detail)
                    }
                    None => match &m.transport {
                        TransportInfo::Low { fields, .. } => {
                            (String::new(), fields_inline(fields, 8))
                        }
                        _ => (String::new(), String::new()),
                    },
                };
                let warn = if m.warnings.is_empty()
                    && message_game(m).is_none_or(|(g, _)| g.warnings.is_empty())
                {
                    String::new()
                } else {
                    cx.palette.warn(" ⚠")
                };
                let line = format!(
                    "{:>7} {:>10} {:<12} {} {:<tw$} {:<fw$} {} {}{}",
                    p.frame,
                    rel,
                    client,
                    dir,
                    ts,
                    flags,
                    what,
                    detail,
                    warn,
                    tw = TRANSPORT_WIDTH,
                    fw = FLAGS_WIDTH
                );
                out.push_str(line.trim_end());
                out.push('\n');
            }
        }
    }
    out
}

/// Longest packet comment written by `--annotate` (characters); a datagram of many
/// messages is cut there with `…`.
pub const MAX_ANNOTATION_CHARS: usize = 2000;

/// One line for a whole datagram, as a pcapng packet comment: direction and client,
/// then each selected message as the table shows it, separated by ` | `.
pub fn packet_annotation(
    p: &PacketRecord,
    keep: &dyn Fn(&MessageRecord) -> bool,
    names: &dyn Names,
) -> String {
    let client = names
        .client_name(p.session, p.client)
        .unwrap_or_else(|| format!("port {}", client_port(p)));
    let mut out = format!("bcwire: {} {client}", p.direction.as_str());
    match &p.body {
        PacketBody::GameSpy { text } => {
            let _ = write!(out, " | GameSpy {}", text.escape_debug());
        }
        PacketBody::Game(g) => {
            for m in g.messages.iter().filter(|m| keep(m)) {
                let _ = write!(out, " | {}", transport_summary(m));
                match message_game(m) {
                    Some((game, assembled)) => {
                        let _ = write!(out, " 0x{:02X} {}", game.opcode, game.name);
                        if assembled {
                            out.push_str(" (reassembled)");
                        }
                        let detail = match game.opcode {
                            0x1C => state_update_detail(game, names),
                            _ => fields_inline(&game.fields, 8),
                        };
                        if !detail.is_empty() {
                            let _ = write!(out, " {detail}");
                        }
                        if !game.warnings.is_empty() {
                            out.push_str(" ⚠");
                        }
                    }
                    None => {
                        if let TransportInfo::Low { fields, .. } = &m.transport {
                            let detail = fields_inline(fields, 8);
                            if !detail.is_empty() {
                                let _ = write!(out, " {detail}");
                            }
                        }
                    }
                }
                if !m.warnings.is_empty() {
                    out.push_str(" ⚠");
                }
            }
            if !g.warnings.is_empty() {
                out.push_str(" | ⚠ ");
                out.push_str(
                    &g.warnings
                        .iter()
                        .map(|w| w.code.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                );
            }
        }
    }
    if out.chars().count() > MAX_ANNOTATION_CHARS {
        out = out.chars().take(MAX_ANNOTATION_CHARS - 1).collect();
        out.push('…');
    }
    out
}

/// The client's UDP port of a datagram.
pub fn client_port(p: &PacketRecord) -> u16 {
    p.client_port()
}

/// The fields of a StateUpdate worth a line: which fields it carries, where and how fast
/// the ship is, the cloak, and the one-line subsystem and power summaries. Everything
/// else (vectors, game clock, raw parts) is in `show` and the JSON.
/// A StateUpdate's one-line view, or its fields when it has no typed value (a
/// message cut before its flags).
fn state_update_detail(game: &GameMessage, names: &dyn Names) -> String {
    match game.state_update() {
        Some(su) => state_update_line(su, names),
        None => fields_inline(&game.fields, 8),
    }
}

/// The one-line view of a StateUpdate, from its typed value: flags, motion, the
/// subsystem summary and power settings named through the class layout the decoder
/// used, and how many bytes stayed raw.
fn state_update_line(su: &StateUpdate, names: &dyn Names) -> String {
    use super::text::value_text;
    use crate::game::stateupdate::SubsystemData;
    use crate::game::Value;
    let class = su.species.and_then(|s| names.ship_class(s));
    let mut parts: Vec<String> = vec![crate::game::dirty::flag_names(su.flags)];
    if let Some(p) = su.position {
        parts.push(format!("position={}", value_text(&Value::Vec3(p))));
    }
    if let Some(d) = &su.delta {
        parts.push(format!("delta={}", value_text(&Value::Vec3(d.vector()))));
    }
    if let Some(s) = su.speed {
        parts.push(format!(
            "speed={}",
            value_text(&Value::Float(s.value() as f64))
        ));
    }
    if let Some(c) = su.cloak {
        parts.push(format!("cloak={c}"));
    }
    match (&su.subsystems, class) {
        (Some(SubsystemData::Decoded(block)), Some(class)) => parts.push(format!(
            "subsystems: {}",
            crate::game::subsys::block_summary(block, class)
        )),
        (Some(SubsystemData::Raw { bytes, .. }), _) => {
            parts.push(format!("subsystem_block_raw: {} bytes", bytes.len()))
        }
        _ => {}
    }
    if let Some(power) = &su.power {
        let settings: Vec<String> = power
            .iter()
            .map(|p| match class.and_then(|c| c.entry(p.index as usize)) {
                Some(e) => format!("{} {}", e.name, p.value),
                None => format!("index {} {}", p.index, p.value),
            })
            .collect();
        parts.push(format!("power: {}", settings.join(", ")));
    }
    parts.join(" ")
}

/// A column of [`packet_csv`]: a record fact, or one of the two columns of its own.
enum CsvColumn {
    Fact(Fact),
    /// The fragment's index, or for an ACK the index of the fragment it acknowledges.
    FragmentIndex,
    /// The decoded fields as one `name=value` line.
    Fields,
}

/// The columns of [`packet_csv`], in order.
const CSV_COLUMNS: [CsvColumn; 18] = [
    CsvColumn::Fact(Fact::Frame),
    CsvColumn::Fact(Fact::Time),
    CsvColumn::Fact(Fact::Direction),
    CsvColumn::Fact(Fact::Session),
    CsvColumn::Fact(Fact::Client),
    CsvColumn::Fact(Fact::Src),
    CsvColumn::Fact(Fact::Dst),
    CsvColumn::Fact(Fact::TransportType),
    CsvColumn::Fact(Fact::Reliable),
    CsvColumn::Fact(Fact::Seq),
    CsvColumn::FragmentIndex,
    CsvColumn::Fact(Fact::FragmentTotal),
    CsvColumn::Fact(Fact::Retransmission),
    CsvColumn::Fact(Fact::Opcode),
    CsvColumn::Fact(Fact::Name),
    CsvColumn::Fact(Fact::ObjectId),
    CsvColumn::Fact(Fact::Object),
    CsvColumn::Fields,
];

/// The header of [`packet_csv`]: the facts' names, and `fragment_index` and `fields`.
fn csv_columns() -> String {
    let names: Vec<&str> = CSV_COLUMNS
        .iter()
        .map(|c| match c {
            CsvColumn::Fact(f) => f.name(),
            CsvColumn::FragmentIndex => "fragment_index",
            CsvColumn::Fields => "fields",
        })
        .collect();
    names.join(",")
}

/// RFC 4180 quoting.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// CSV rows of the messages `keep` accepts; `describe` names objects as the other
/// views do (`Kessok Light (Cady2, slot 0)`); `hex` adds the decrypted datagram.
/// `time` is the epoch time as the capture's precision gives it; `file`, with several
/// inputs, the first column.
pub fn packet_csv(
    p: &PacketRecord,
    keep: &dyn Fn(&MessageRecord) -> bool,
    hex: bool,
    describe: &dyn Fn(u32) -> Option<std::rc::Rc<str>>,
    time: &str,
    file: Option<&str>,
) -> String {
    let mut out = String::new();
    let PacketBody::Game(g) = &p.body else {
        return out;
    };
    for m in g.messages.iter().filter(|m| keep(m)) {
        let game = message_game(m).map(|x| x.0);
        let frag = m.fragment();
        // An ACK names the fragment it acknowledges: without it, the ACKs of one
        // set's fragments would be identical rows.
        let frag_index = match &m.transport {
            crate::pipeline::record::TransportInfo::Ack { fragment_index, .. } => {
                fragment_index.map(|i| i as u64)
            }
            _ => frag.map(|f| f.index as u64),
        };
        let object = game.and_then(super::json::object_of);
        if let Some(f) = file {
            out.push_str(&csv_field(f));
            out.push(',');
        }
        for (k, column) in CSV_COLUMNS.iter().enumerate() {
            if k > 0 {
                out.push(',');
            }
            let _ = match column {
                CsvColumn::Fact(Fact::Frame) => write!(out, "{}", p.frame),
                CsvColumn::Fact(Fact::Time) => write!(out, "{time}"),
                CsvColumn::Fact(Fact::Direction) => write!(out, "{}", p.direction),
                CsvColumn::Fact(Fact::Session) => write!(out, "{}", p.session),
                CsvColumn::Fact(Fact::Client) => write!(out, "{}", p.client),
                CsvColumn::Fact(Fact::Src) => write!(out, "{}", p.src),
                CsvColumn::Fact(Fact::Dst) => write!(out, "{}", p.dst),
                CsvColumn::Fact(Fact::TransportType) => write!(out, "{}", m.transport_type),
                CsvColumn::Fact(Fact::Reliable) => write!(out, "{}", m.reliable()),
                CsvColumn::Fact(Fact::Seq) => match m.seq() {
                    Some(s) => write!(out, "{s}"),
                    None => Ok(()),
                },
                CsvColumn::FragmentIndex => match frag_index {
                    Some(i) => write!(out, "{i}"),
                    None => Ok(()),
                },
                CsvColumn::Fact(Fact::FragmentTotal) => match frag.and_then(|f| f.total) {
                    Some(t) => write!(out, "{t}"),
                    None => Ok(()),
                },
                CsvColumn::Fact(Fact::Retransmission) => write!(out, "{}", m.retransmission),
                CsvColumn::Fact(Fact::Opcode) => match game {
                    Some(g) => write!(out, "0x{:02X}", g.opcode),
                    None => Ok(()),
                },
                CsvColumn::Fact(Fact::Name) => write!(out, "{}", game.map_or("", |g| g.name)),
                CsvColumn::Fact(Fact::ObjectId) => match object {
                    Some(o) => write!(out, "0x{o:08X}"),
                    None => Ok(()),
                },
                CsvColumn::Fact(Fact::Object) => {
                    write!(
                        out,
                        "{}",
                        csv_field(&object.and_then(describe).unwrap_or_default())
                    )
                }
                CsvColumn::Fields => write!(
                    out,
                    "{}",
                    csv_field(
                        &game
                            .map(|g| fields_inline(&g.fields, usize::MAX))
                            .unwrap_or_default()
                    )
                ),
                CsvColumn::Fact(other) => unreachable!("{other:?} is not a CSV column"),
            };
        }
        if hex {
            // The whole decrypted datagram, repeated on each of its messages' rows so
            // every row stands alone.
            out.push(',');
            out.push_str(&crate::game::field::hex_string(&g.plain));
        }
        out.push('\n');
    }
    out
}

/// The header of [`packet_csv`] with the `plain_hex` column of `--hex`, after a `file`
/// column when several inputs are read.
pub fn csv_header(hex: bool, file: bool) -> String {
    let head = if file { "file," } else { "" };
    let columns = csv_columns();
    if hex {
        format!("{head}{columns},plain_hex")
    } else {
        format!("{head}{columns}")
    }
}

/// The decrypted datagram under its lines (`--hex`), indented past the frame number.
pub fn packet_hex(p: &PacketRecord) -> String {
    let bytes = match &p.body {
        PacketBody::Game(g) => &g.plain[..],
        PacketBody::GameSpy { text } => text.as_bytes(),
    };
    let mut out = String::new();
    for line in super::hexdump::plain_hex_dump(bytes).lines() {
        let _ = writeln!(out, "        {}", line.trim_end());
    }
    out
}
