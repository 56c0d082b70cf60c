//! `bcwire info` and `bcwire flows`: capture and session summaries.

use super::json::time_seconds;
use super::schema;
use super::table::{fit_or_blocks, kv_table, right, table};
use super::term::Palette;
use super::timefmt::{Clock, TimeFormat};
use crate::diag::Direction;
use crate::pipeline::summary::{CaptureSummary, ClientSummary, SessionSummary};
use comfy_table::Cell;
use std::fmt::Write as _;

fn span_seconds(a: Option<i64>, b: Option<i64>) -> f64 {
    match (a, b) {
        (Some(a), Some(b)) => (b - a) as f64 / 1e9,
        _ => 0.0,
    }
}

fn client_doc(c: &ClientSummary) -> schema::Client {
    schema::Client {
        index: c.index as u64,
        addr: c.addr.map(|a| a.to_string()),
        name: c.name.clone(),
        peer_id: c.peer_id,
        slot: c.slot,
        ships: c.ships.clone(),
        first_frame: c.first_frame,
        last_frame: c.last_frame,
        first_time: time_seconds(c.first_ts_ns),
        last_time: time_seconds(c.last_ts_ns),
        left: c.left.clone(),
        boot_reason: c.boot_reason,
        boot_reason_name: c
            .boot_reason
            .and_then(crate::transport::low::boot_reason_name)
            .map(String::from),
        phase: c.phase.clone(),
        query_only: c.is_query_only(),
        c2s: c.dir(Direction::C2S).clone(),
        s2c: c.dir(Direction::S2C).clone(),
    }
}

/// One session as `info`, `flows` and the decode summary list it.
pub fn session_doc(s: &SessionSummary) -> schema::Session {
    schema::Session {
        index: s.index as u64,
        server: s.server.map(|a| a.to_string()),
        first_frame: s.first_frame,
        last_frame: s.last_frame,
        first_time: time_seconds(s.first_ts_ns),
        last_time: time_seconds(s.last_ts_ns),
        clients: s.clients.iter().map(client_doc).collect(),
    }
}

/// One capture's facts; `file` (the path as given) comes first when known.
pub fn capture_doc(file: Option<&str>, c: &CaptureSummary) -> schema::CaptureInfo {
    schema::CaptureInfo {
        file: file.map(String::from),
        format: c.format.clone(),
        link_types: c.link_types.clone(),
        frames: c.frames,
        bytes: c.bytes,
        first_time: c.first_ts_ns.map(time_seconds),
        last_time: c.last_ts_ns.map(time_seconds),
        first_time_ns: c.first_ts_ns,
        last_time_ns: c.last_ts_ns,
        duration: span_seconds(c.first_ts_ns, c.last_ts_ns),
        game_frames: c.game_frames,
        damaged_frames: c.damaged_frames,
        gamespy_frames: c.gamespy_frames,
        ip_fragment_frames: c.ip_fragment_frames,
        object_id_conflicts: c.object_id_conflicts,
        not_bc: c.not_bc.clone(),
        other_udp_ports: c
            .top_udp_ports(TOP_PORTS)
            .into_iter()
            .map(|(port, datagrams)| schema::PortCount { port, datagrams })
            .collect(),
        problems: c.problems.iter().map(|p| p.text.clone()).collect(),
        problem_codes: c
            .problems
            .iter()
            .map(|p| schema::Problem {
                code: p.code.as_str().to_string(),
                severity: p.code.severity().as_str().to_string(),
                message: p.text.clone(),
            })
            .collect(),
        sessions: c.sessions.iter().map(session_doc).collect(),
        // Only compressed files carry the key, so records of plain files are unchanged.
        compression: c.compression.as_ref().map(|z| schema::Compression {
            method: z.method.to_string(),
            compressed_bytes: z.compressed_bytes,
            bytes: z.bytes,
            ratio: (z.ratio() * 100.0).round() / 100.0,
        }),
    }
}

/// Ports listed for datagrams off the game port.
const TOP_PORTS: usize = 5;

/// `53 ×1000, 10622 ×2, …` (the ellipsis when more ports were seen).
fn top_ports_text(c: &CaptureSummary) -> String {
    let top = c.top_udp_ports(TOP_PORTS);
    let mut parts: Vec<String> = top.iter().map(|(p, n)| format!("{p} ×{n}")).collect();
    if c.udp_ports.len() > top.len() {
        parts.push(format!("… ({} ports)", c.udp_ports.len()));
    }
    parts.join(", ")
}

fn client_label(c: &ClientSummary) -> String {
    let mut s = c.addr.map(|a| a.to_string()).unwrap_or_else(|| "?".into());
    if let Some(n) = &c.name {
        let _ = write!(s, " {n}");
    }
    if c.is_query_only() {
        s.push_str(" (GameSpy query)");
    }
    s
}

/// Digits of a second to print the capture's times with: its timestamps' precision
/// (microseconds when it is not known).
fn digits(c: &CaptureSummary) -> u8 {
    if c.ts_digits == 0 {
        6
    } else {
        c.ts_digits
    }
}

pub fn render_info(path: &str, c: &CaptureSummary, pal: Palette) -> String {
    let mut out = String::new();
    let mut t = kv_table();
    t.add_row(vec![Cell::new("file"), Cell::new(path)]);
    t.add_row(vec![Cell::new("format"), Cell::new(&c.format)]);
    if let Some(z) = &c.compression {
        t.add_row(vec![
            Cell::new("compression"),
            Cell::new(format!(
                "{}, {:.2}:1 ({} bytes stored, {} decompressed)",
                z.method,
                z.ratio(),
                z.compressed_bytes,
                z.bytes
            )),
        ]);
    }
    let links: Vec<String> = c
        .link_types
        .iter()
        .map(|(k, v)| format!("{k} ({v})"))
        .collect();
    t.add_row(vec![Cell::new("link types"), Cell::new(links.join(", "))]);
    t.add_row(vec![Cell::new("frames"), Cell::new(c.frames)]);
    t.add_row(vec![Cell::new("bytes"), Cell::new(c.bytes)]);
    if let (Some(a), Some(b)) = (c.first_ts_ns, c.last_ts_ns) {
        // As capinfos: dates in UTC, to the nanosecond a pcapng file may keep.
        t.add_row(vec![
            Cell::new("first packet"),
            Cell::new(super::timefmt::utc_datetime_ns(a)),
        ]);
        t.add_row(vec![
            Cell::new("last packet"),
            Cell::new(super::timefmt::utc_datetime_ns(b)),
        ]);
        t.add_row(vec![
            Cell::new("time span"),
            Cell::new(format!(
                "{:.*} s",
                usize::from(digits(c)),
                span_seconds(Some(a), Some(b))
            )),
        ]);
    }
    t.add_row(vec![Cell::new("game frames"), Cell::new(c.game_frames)]);
    if c.damaged_frames > 0 {
        t.add_row(vec![
            Cell::new("  damaged (decoded as far as they go)"),
            Cell::new(c.damaged_frames),
        ]);
    }
    t.add_row(vec![
        Cell::new("GameSpy frames"),
        Cell::new(c.gamespy_frames),
    ]);
    if c.ip_fragment_frames > 0 {
        t.add_row(vec![
            Cell::new("IP fragments held for reassembly"),
            Cell::new(c.ip_fragment_frames),
        ]);
    }
    let not_bc: u64 = c.not_bc.values().sum();
    t.add_row(vec![Cell::new("not Bridge Commander"), Cell::new(not_bc)]);
    for (why, n) in &c.not_bc {
        let text = if why == crate::pipeline::OTHER_UDP_PORTS {
            format!("{n} datagrams; top ports {}", top_ports_text(c))
        } else {
            n.to_string()
        };
        t.add_row(vec![Cell::new(format!("  {why}")), Cell::new(text)]);
    }
    t.add_row(vec![Cell::new("sessions"), Cell::new(c.session_count)]);
    if c.object_id_conflicts > 0 {
        t.add_row(vec![
            Cell::new("object id conflicts"),
            Cell::new(c.object_id_conflicts),
        ]);
    }
    let t = t.trim_fmt();
    let _ = writeln!(out, "{t}");
    for p in &c.problems {
        let _ = writeln!(out, "{}", pal.warn(&format!("⚠ {p}")));
    }
    for s in &c.sessions {
        let _ = writeln!(
            out,
            "\n{}",
            pal.heading(&format!(
                "Session {}: server {}, frames {}–{}, {:.*} s, {} client(s){}",
                s.index,
                s.server
                    .map(|a| a.to_string())
                    .unwrap_or_else(|| "?".into()),
                s.first_frame,
                s.last_frame,
                usize::from(digits(c)),
                (s.last_ts_ns - s.first_ts_ns) as f64 / 1e9,
                s.game_clients().count(),
                match s.clients.len() - s.game_clients().count() {
                    0 => String::new(),
                    n => format!(", {n} GameSpy query port(s)"),
                }
            ))
        );
        let mut t = table(&[
            "client",
            "peer",
            "frames",
            "c2s pkts",
            "s2c pkts",
            "c2s msgs",
            "s2c msgs",
            "retx c2s/s2c",
            "unacked c2s/s2c",
            "frag sets done/open",
            "seq gaps c2s/s2c",
            "late c2s/s2c",
            "warnings",
        ]);
        for c in &s.clients {
            let (a, b) = (c.dir(Direction::C2S), c.dir(Direction::S2C));
            t.add_row(vec![
                Cell::new(client_label(c)),
                Cell::new(
                    c.peer_id
                        .map(|p| format!("0x{p:02X}"))
                        .unwrap_or_else(|| "-".into()),
                ),
                Cell::new(format!("{}–{}", c.first_frame, c.last_frame)),
                right(a.packets.to_string()),
                right(b.packets.to_string()),
                right(a.messages.to_string()),
                right(b.messages.to_string()),
                right(format!("{}/{}", a.retransmissions, b.retransmissions)),
                right(format!("{}/{}", a.unacked, b.unacked)),
                right(format!(
                    "{}/{}",
                    a.fragment_sets_completed + b.fragment_sets_completed,
                    a.fragment_sets_incomplete + b.fragment_sets_incomplete
                )),
                right(format!("{}/{}", a.seq_gaps, b.seq_gaps)),
                right(format!("{}/{}", a.seq_late, b.seq_late)),
                right(if a.damaged + b.damaged > 0 {
                    format!(
                        "{} ({} non-stock, {} damaged frames)",
                        a.warnings + b.warnings,
                        a.non_stock + b.non_stock,
                        a.damaged + b.damaged
                    )
                } else {
                    format!(
                        "{} ({} non-stock)",
                        a.warnings + b.warnings,
                        a.non_stock + b.non_stock
                    )
                }),
            ]);
        }
        let _ = writeln!(out, "{}", fit_or_blocks(&t));
    }
    out
}

/// `flows`: one table per session. `time` is how the join and leave times are written
/// (`-t`): seconds since the first frame (the default, also for the delta formats,
/// which mean nothing for a list of clients), epoch seconds, or dates.
pub fn render_flows(c: &CaptureSummary, pal: Palette, time: TimeFormat) -> String {
    let mut out = String::new();
    let t0 = c.first_ts_ns.unwrap_or(0);
    let mut clock = Clock::new(time);
    let (when, unit) = match time {
        TimeFormat::E => (true, " (s)"),
        TimeFormat::U | TimeFormat::Ud | TimeFormat::Udoy => (true, " (UTC)"),
        TimeFormat::A | TimeFormat::Ad | TimeFormat::Adoy => (true, ""),
        TimeFormat::R | TimeFormat::D | TimeFormat::Dd => (false, " (s)"),
    };
    let mut at = |ns: i64| {
        if when {
            clock.render(ns)
        } else {
            format!("{:.*}", usize::from(digits(c)), (ns - t0) as f64 / 1e9)
        }
    };
    for s in &c.sessions {
        let _ = writeln!(
            out,
            "{}",
            pal.heading(&format!(
                "Session {}: server {}",
                s.index,
                s.server
                    .map(|a| a.to_string())
                    .unwrap_or_else(|| "?".into())
            ))
        );
        let mut t = table(&[
            "client",
            "name",
            "peer",
            "slot",
            "ships",
            &format!("joined{unit}"),
            &format!("left{unit}"),
            "how",
            "phase",
            "c2s pkts/bytes",
            "s2c pkts/bytes",
            "retx",
            "unacked",
        ]);
        for cl in &s.clients {
            let (a, b) = (cl.dir(Direction::C2S), cl.dir(Direction::S2C));
            t.add_row(vec![
                Cell::new(cl.addr.map(|x| x.to_string()).unwrap_or_default()),
                Cell::new(cl.name.clone().unwrap_or_else(|| "-".into())),
                Cell::new(
                    cl.peer_id
                        .map(|p| format!("0x{p:02X}"))
                        .unwrap_or_else(|| "-".into()),
                ),
                Cell::new(cl.slot.map(|p| p.to_string()).unwrap_or_else(|| "-".into())),
                Cell::new(if cl.ships.is_empty() {
                    "-".into()
                } else {
                    cl.ships.join("\n")
                }),
                right(at(cl.first_ts_ns)),
                // The time of the last datagram, for a player who left; empty for
                // one still there when the capture ends.
                right(if cl.left.is_some() {
                    at(cl.last_ts_ns)
                } else {
                    "-".into()
                }),
                Cell::new(cl.departure().unwrap_or_else(|| "-".into())),
                Cell::new(cl.phase.clone().unwrap_or_else(|| "-".into())),
                right(format!("{}/{}", a.packets, a.bytes)),
                right(format!("{}/{}", b.packets, b.bytes)),
                right(format!("{}/{}", a.retransmissions, b.retransmissions)),
                right(format!("{}/{}", a.unacked, b.unacked)),
            ]);
        }
        let _ = writeln!(out, "{}\n", fit_or_blocks(&t));
    }
    out
}

pub fn flows_doc(c: &CaptureSummary) -> schema::FlowsDocument {
    schema::FlowsDocument {
        schema_version: super::json::SCHEMA_VERSION,
        sessions: c.sessions.iter().map(session_doc).collect(),
    }
}
