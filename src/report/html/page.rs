//! The page: sections, charts and tables for one or two captures.
//!
//! Charts are SVG written here; the inline script only adds hover read-outs and map
//! zoom, reading a JSON data block. Element counts are bounded by [`Budget`]: one
//! polyline or path per series (never one element per point), bucketed time series,
//! decimated tracks and thinned condition series.
//!
//! Why this file is long: it holds every section of the page (overview, rates, dirty
//! flags, ships and their charts, transport, chat, comparison) and the table and chart
//! helpers they share, about 1,590 lines before its tests; the page's CSS and script
//! are `page.css` and `page.js`, the battle sections `battle.rs`, `health.rs` and
//! `tally.rs`.

use super::collect::{CaptureReport, Event, EventKind, Ship};
use super::problems::file_name;
use super::series::{
    blank_after, column_layout, decimate_indices, rebucket, split_budget, thin_steps,
};
use super::svg::{colour, esc, json_for_script, num, opcode_colour, round, Plot, OTHER};
use crate::report::names::ShipIdentity;
use crate::report::timefmt::utc_datetime;

/// The opening `<svg>` of a chart and its axes. `attrs` are its `data-` attributes; the
/// series count is what the browser test reads back.
pub(super) fn open_chart(
    class: &str,
    attrs: &str,
    series: usize,
    plot: &Plot,
    x: &str,
    y: &str,
) -> String {
    // A time axis tells the script where its seconds are, for the page's time window:
    // pixels of the first and last second, those seconds, and the plot's top and bottom.
    let time = if x == "seconds" {
        format!(
            " data-time=\"{} {} {} {} {} {}\"",
            num(plot.px(plot.x0)),
            num(plot.px(plot.x1)),
            num(plot.x0),
            num(plot.x1),
            num(plot.top),
            num(plot.height - plot.bottom)
        )
    } else {
        String::new()
    };
    let mut svg = format!(
        "<svg class=\"{class}\" {attrs}{time} data-series-count=\"{series}\" viewBox=\"0 0 {} {}\">",
        num(plot.width),
        num(plot.height)
    );
    svg.push_str(&plot.axes(x, y));
    svg
}
use crate::diag::Direction;
use crate::game::dirty::flag_names;
use crate::game::opcodes::opcode_name;
use crate::pipeline::summary::ClientSummary;
use crate::report::diff::DiffResult;
use serde_json::{json, Map, Value as Json};
use std::collections::BTreeMap;
use std::fmt::Write as _;

const CSS: &str = include_str!("page.css");
const JS: &str = include_str!("page.js");

/// Drawing limits for one capture (halved for side-by-side pages).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Track points on the map.
    pub map_points: usize,
    /// Condition points over all per-ship charts.
    pub health_points: usize,
    /// Time columns of bucketed series.
    pub columns: usize,
    /// Per-ship charts.
    pub ship_charts: usize,
    /// Event marks on the map and the ship time lines.
    pub marks: usize,
    /// Opcodes drawn separately in the rate charts (the rest are "other").
    pub opcodes: usize,
}

impl Budget {
    pub fn for_captures(n: usize) -> Budget {
        let n = n.max(1);
        Budget {
            map_points: 12_000 / n,
            health_points: 6_000 / n,
            columns: 240 / n,
            ship_charts: 16,
            marks: 1_500 / n,
            opcodes: 10,
        }
    }
}

/// Collects the hover data of every chart and whether anything was thinned.
pub(super) struct Page {
    pub(super) data: Map<String, Json>,
    thinned: Vec<String>,
    pub(super) budget: Budget,
    pub(super) width: f64,
    /// The longest capture's duration: every time axis of the page spans it, so the
    /// two captures of a comparison line up.
    pub(super) t_max: f64,
    /// Largest value each chart (by its id without the capture prefix) wants on its
    /// y axis, and the ones fixed by a first pass: both captures' charts share them.
    y_wanted: std::collections::HashMap<String, f64>,
    y_fixed: std::collections::HashMap<String, f64>,
    /// Dirty-flag combinations per direction in the order every capture lists them.
    dirty_rows: [Vec<u8>; 2],
}

impl Page {
    /// The y-axis top of chart `id`: the largest over the captures once known.
    fn y_top(&mut self, id: &str, local: f64) -> f64 {
        let role = id.split_once('-').map_or(id, |(_, r)| r).to_string();
        let want = self.y_wanted.entry(role.clone()).or_insert(local);
        *want = want.max(local);
        self.y_fixed.get(&role).copied().unwrap_or(local).max(local)
    }
}

/// The page's sections: anchor and title.
const SECTIONS: [(&str, &str); 11] = [
    ("scoreboard", "Scoreboard and kill feed"),
    ("health", "Connection health per player"),
    ("overview", "Session overview"),
    (
        "problems",
        "Problems: warnings, unacknowledged messages, bursts, silences",
    ),
    ("rates", "Game messages per second by opcode"),
    ("dirty", "StateUpdate dirty flags"),
    ("map", "Map (top-down x/y)"),
    ("ships", "Ships: subsystem condition, weapon fire, damage"),
    ("transport", "Transport health"),
    (
        "players",
        "Per player: messages, bytes, retransmissions, ACK delay",
    ),
    ("chat", "Chat"),
];

/// Every section, each with a column per capture.
fn sections_html(pg: &mut Page, captures: &[CaptureReport]) -> String {
    let ids: Vec<&str> = ["a", "b"].into_iter().take(captures.len()).collect();
    let mut body = String::new();
    for (id, title) in SECTIONS {
        let _ = write!(body, "<section id=\"{id}\"><h2>{}</h2>", esc(title));
        let _ = write!(body, "<div class=\"cols n{}\">", captures.len().max(1));
        for (c, cid) in captures.iter().zip(&ids) {
            let _ = write!(body, "<div class=\"col\" data-capture=\"{cid}\">");
            if captures.len() > 1 {
                let _ = write!(
                    body,
                    "<h3>{}: {}</h3>",
                    cid.to_uppercase(),
                    esc(file_name(&c.name))
                );
            }
            let html = match id {
                "scoreboard" => super::battle::section(c),
                "health" => super::health::section(c),
                "overview" => overview(c),
                "problems" => super::problems::section(c),
                "rates" => rates(pg, c, cid),
                "dirty" => dirty(pg, c, cid),
                "map" => super::map::map(pg, c, cid),
                "ships" => ships(pg, c, cid),
                "transport" => transport(pg, c, cid),
                "players" => super::players::section(pg, c, cid),
                _ => chat(c),
            };
            body.push_str(&html);
            body.push_str("</div>");
        }
        body.push_str("</div></section>");
    }
    body
}

/// Render the whole page for one capture, or two side by side with their comparison.
pub fn render(captures: &[CaptureReport], diff: Option<&DiffResult>) -> String {
    let budget = Budget::for_captures(captures.len());
    let mut pg = Page {
        data: Map::new(),
        thinned: Vec::new(),
        budget,
        // A column of a comparison is 638 px wide at a 1,400 px window: 620 keeps chart
        // text at 11 px or more.
        width: if captures.len() > 1 { 620.0 } else { 1000.0 },
        t_max: captures.iter().map(|c| c.duration).fold(0.0, f64::max),
        y_wanted: Default::default(),
        y_fixed: Default::default(),
        dirty_rows: dirty_rows(captures),
    };
    if captures.len() > 1 {
        // A first pass finds each chart's largest value over both captures; the page
        // is then drawn with those shared axes.
        let _ = sections_html(&mut pg, captures);
        pg.y_fixed = std::mem::take(&mut pg.y_wanted);
        pg.data.clear();
        pg.thinned.clear();
    }
    let mut body = sections_html(&mut pg, captures);
    if let (Some(d), [a, b]) = (diff, captures) {
        body.push_str(&diff_section(d, &a.name, &b.name));
    }

    let title = captures
        .iter()
        .map(|c| file_name(&c.name))
        .collect::<Vec<_>>()
        .join(" vs ");
    let mut out = String::with_capacity(body.len() + 64 * 1024);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">");
    let _ = write!(out, "<title>bcwire report: {}</title>", esc(&title));
    // First: error capture, so failures of the main script are recorded too.
    out.push_str("<script>window.__errors=[];window.addEventListener(\"error\",function(e){window.__errors.push(String(e.message||e));});</script>");
    let _ = write!(out, "<style>{CSS}</style></head><body><header>");
    let _ = write!(out, "<h1>bcwire report: {}</h1>", esc(&title));
    for c in captures {
        let start = match c.stats().first_ts_ns {
            Some(ts) => format!("started {} UTC, ", utc_datetime(ts)),
            None => String::new(),
        };
        let _ = write!(
            out,
            "<p class=\"facts\">{}: {start}{} long, {} frames, {} Bridge Commander datagrams</p>",
            esc(file_name(&c.name)),
            duration_text(c.duration),
            c.summary.frames,
            c.summary.game_frames,
        );
    }
    let _ = write!(
        out,
        "<p class=\"facts\">written by bcwire {}</p>",
        env!("CARGO_PKG_VERSION")
    );
    out.push_str("<nav>");
    for (id, title) in SECTIONS {
        let _ = write!(
            out,
            "<a href=\"#{id}\">{}</a>",
            esc(title.split(':').next().unwrap_or(title))
        );
    }
    if diff.is_some() {
        out.push_str("<a href=\"#diff\">Comparison</a>");
    }
    out.push_str("</nav></header>");
    out.push_str(&controls(captures));
    out.push_str("<main>");
    if !pg.thinned.is_empty() {
        let _ = write!(
            out,
            "<div class=\"banner\" id=\"downsampled\"><b>Large capture:</b> charts are \
             down-sampled for drawing ({}); every number in the tables is exact.</div>",
            esc(&pg.thinned.join("; "))
        );
    }
    out.push_str(&body);
    out.push_str(
        "<p class=\"note\">Hover a chart for values. Drag across any time chart to choose \
         a time window (double-click it to clear); on the map, scroll to zoom, drag to pan, \
         double-click to reset.</p></main><div id=\"tip\" class=\"tip\" hidden></div>",
    );
    let _ = write!(
        out,
        "<script type=\"application/json\" id=\"bcw-data\">{}</script>",
        json_for_script(&Json::Object(pg.data))
    );
    let _ = write!(out, "<script>{JS}</script>");
    // Last: report readiness and errors where a headless browser's DOM dump shows them.
    out.push_str("<pre id=\"bcw-errors\" hidden></pre><script>(function(){var e=window.__errors||[];document.getElementById(\"bcw-errors\").textContent=e.join(\"\\n\");document.body.dataset.errors=String(e.length);document.body.dataset.ready=\"1\";})();</script>");
    out.push_str("</body></html>\n");
    out
}

/// The bar that stays on top: the player the page follows and the time window.
fn controls(captures: &[CaptureReport]) -> String {
    let mut players: Vec<&str> = Vec::new();
    let known = captures.iter().flat_map(|c| {
        c.clients
            .iter()
            .map(|t| t.name.as_str())
            .chain(c.ships.iter().filter_map(|s| s.player.as_deref()))
    });
    for p in known {
        if !players.contains(&p) {
            players.push(p);
        }
    }
    let mut h = String::from(
        "<div class=\"controls\" id=\"controls\"><label>Player <select id=\"player\">\
         <option value=\"\">all players</option>",
    );
    for p in players {
        let _ = write!(h, "<option value=\"{0}\">{0}</option>", esc(p));
    }
    h.push_str(
        "</select></label><span id=\"window\">Time: whole capture</span> \
         <button type=\"button\" id=\"window-reset\" hidden>whole capture</button></div>",
    );
    h
}

/// "34 min 12.5 s", "12.500 s".
fn duration_text(secs: f64) -> String {
    if secs >= 3600.0 {
        format!(
            "{} h {} min",
            (secs / 3600.0).floor(),
            ((secs % 3600.0) / 60.0).floor()
        )
    } else if secs >= 60.0 {
        format!("{} min {:.1} s", (secs / 60.0).floor(), secs % 60.0)
    } else {
        format!("{secs:.3} s")
    }
}

pub(super) fn secs_since(c: &CaptureReport, ts_ns: i64) -> f64 {
    ts_ns.saturating_sub(c.t0_ns) as f64 / 1e9
}

pub(super) fn row(cells: &[String]) -> String {
    row_with("", cells)
}

/// A row whose `<tr>` carries attributes (` data-born="3" data-end="4"`), for the script's filters.
pub(super) fn row_with(attrs: &str, cells: &[String]) -> String {
    format!("<tr{attrs}>{}", self::cells(cells))
}

/// ` data-player="…"` for an element that belongs to a player (the script shows only
/// the chosen player's), or nothing.
pub(super) fn player_attr(player: Option<&str>) -> String {
    player
        .map(|p| format!(" data-player=\"{}\"", esc(p)))
        .unwrap_or_default()
}

/// The cells of a row and its end, after an opening `<tr>` with attributes.
fn cells(cells: &[String]) -> String {
    let mut s = String::new();
    for c in cells {
        s.push_str(c);
    }
    s.push_str("</tr>");
    s
}
pub(super) fn td(s: &str) -> String {
    format!("<td>{}</td>", esc(s))
}
pub(super) fn tn(v: impl std::fmt::Display) -> String {
    format!("<td class=\"n\">{v}</td>")
}
pub(super) fn thead(cols: &[&str]) -> String {
    let mut s = String::from("<tr>");
    for c in cols {
        let _ = write!(s, "<th>{}</th>", esc(c));
    }
    s.push_str("</tr>");
    s
}

pub(super) fn client_label(c: &ClientSummary) -> String {
    match (&c.name, c.addr) {
        (Some(n), _) => n.clone(),
        (None, Some(a)) => a.to_string(),
        _ => format!("client {}", c.index),
    }
}

fn overview(c: &CaptureReport) -> String {
    let s = &c.summary;
    let st = c.stats();
    let mut h = String::from("<table class=\"facts\">");
    let facts: [(&str, String); 7] = [
        ("file", file_name(&c.name).to_string()),
        ("format", s.format.clone()),
        ("frames", format!("{} ({} bytes)", s.frames, s.bytes)),
        ("duration", format!("{:.3} s", c.duration)),
        (
            "datagrams",
            format!("{} game, {} GameSpy", s.game_frames, s.gamespy_frames),
        ),
        ("sessions", s.sessions.len().to_string()),
        // The capture's own problems (reading, limits, conflicts), not the records'
        // warnings, which the Problems section counts by code.
        ("capture problems", s.problems.len().to_string()),
    ];
    for (k, v) in facts {
        h.push_str(&row(&[format!("<th>{}</th>", esc(k)), td(&v)]));
    }
    h.push_str("</table>");
    for p in s.problems.iter().take(20) {
        let _ = write!(h, "<p class=\"note warn\">{}</p>", esc(p));
    }
    h.push_str("<h4>Traffic per direction</h4><table class=\"traffic\">");
    h.push_str(&thead(&["", "client → host", "host → client"]));
    let [a, b] = &st.dirs;
    let rows: [(&str, u64, u64); 8] = [
        ("datagrams", a.datagrams, b.datagrams),
        ("UDP payload bytes", a.bytes, b.bytes),
        ("transport messages", a.messages, b.messages),
        (
            "game messages delivered",
            a.opcodes.values().sum(),
            b.opcodes.values().sum(),
        ),
        (
            "StateUpdates",
            a.dirty_flags.iter().sum(),
            b.dirty_flags.iter().sum(),
        ),
        ("retransmissions", a.retransmissions, b.retransmissions),
        ("unacknowledged at end", a.unacked, b.unacked),
        ("warnings", a.warnings, b.warnings),
    ];
    for (k, x, y) in rows {
        h.push_str(&row(&[td(k), tn(x), tn(y)]));
    }
    h.push_str("</table>");
    for sess in &s.sessions {
        let server = sess.server.map(|a| a.to_string()).unwrap_or_default();
        let _ = write!(
            h,
            "<h4>Session {} — server {}, {:.1}–{:.1} s</h4>",
            sess.index,
            esc(&server),
            secs_since(c, sess.first_ts_ns),
            secs_since(c, sess.last_ts_ns)
        );
        h.push_str("<table class=\"clients\">");
        h.push_str(&thead(&[
            "player",
            "peer",
            "slot",
            "ships (team)",
            "joined s",
            "left",
            "c2s pkts",
            "c2s bytes",
            "s2c pkts",
            "s2c bytes",
        ]));
        for cl in &sess.clients {
            let left = match cl.departure() {
                Some(how) => format!("{:.1} s ({how})", secs_since(c, cl.last_ts_ns)),
                // A port that only asked the server's status never joined.
                None if cl.is_query_only() => "GameSpy query only".into(),
                None => "still there".into(),
            };
            let (up, down) = (cl.dir(Direction::C2S), cl.dir(Direction::S2C));
            h.push_str(&row(&[
                td(&client_label(cl)),
                td(&cl.peer_id.map(|p| format!("0x{p:02X}")).unwrap_or_default()),
                td(&cl.slot.map(|p| p.to_string()).unwrap_or_default()),
                td(&cl.ships.join("; ")),
                tn(format!("{:.1}", secs_since(c, cl.first_ts_ns))),
                td(&left),
                tn(up.packets),
                tn(up.bytes),
                tn(down.packets),
                tn(down.bytes),
            ]));
        }
        h.push_str("</table>");
    }
    h
}

pub(super) fn dir_title(d: Direction) -> &'static str {
    match d {
        Direction::C2S => "client → host",
        Direction::S2C => "host → client",
    }
}

fn rates(pg: &mut Page, c: &CaptureReport, cid: &str) -> String {
    let mut h = String::new();
    for dir in [Direction::C2S, Direction::S2C] {
        let per_op = &c.rates[dir.index()];
        let _ = write!(h, "<h4>{}</h4>", dir_title(dir));
        if per_op.is_empty() {
            h.push_str("<p class=\"note\">No game messages.</p>");
            continue;
        }
        let mut totals: Vec<(u8, u64)> = per_op
            .iter()
            .map(|(op, m)| (*op, m.values().sum()))
            .collect();
        totals.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let top: Vec<u8> = totals.iter().take(pg.budget.opcodes).map(|t| t.0).collect();
        let mut series: Vec<(String, BTreeMap<i64, u64>)> = top
            .iter()
            .map(|op| {
                (
                    format!("0x{op:02X} {}", opcode_name(*op)),
                    per_op[op].clone(),
                )
            })
            .collect();
        let mut colours: Vec<&'static str> = top.iter().map(|op| opcode_colour(*op)).collect();
        if totals.len() > top.len() {
            let mut other: BTreeMap<i64, u64> = BTreeMap::new();
            for (op, m) in per_op {
                if !top.contains(op) {
                    for (s, n) in m {
                        *other.entry(*s).or_default() += n;
                    }
                }
            }
            series.push((
                format!("other ({} opcodes)", totals.len() - top.len()),
                other,
            ));
            colours.push(OTHER);
        }
        let (width, n) = column_layout(pg.t_max, pg.budget.columns);
        if (c.duration / width).ceil() as usize > n || width > 1.0 {
            note_thinned(pg, format!("message rates in {width:.0}-second columns"));
        }
        let cols: Vec<Vec<u64>> = series
            .iter()
            .map(|(_, m)| rebucket(m, pg.t_max, pg.budget.columns).1)
            .collect();
        let id = format!("{cid}-rates-{}", dir.as_str());
        h.push_str(&stacked_chart(pg, &id, &series, &colours, &cols, width, n));
    }
    h
}

pub(super) fn note_thinned(pg: &mut Page, what: String) {
    if !pg.thinned.contains(&what) {
        pg.thinned.push(what);
    }
}

/// Stacked step areas, one path per series, over time columns.
fn stacked_chart(
    pg: &mut Page,
    id: &str,
    series: &[(String, BTreeMap<i64, u64>)],
    colours: &[&str],
    cols: &[Vec<u64>],
    width: f64,
    n: usize,
) -> String {
    let mut stack = vec![0u64; n];
    for s in cols {
        for (i, v) in s.iter().enumerate() {
            stack[i] += v;
        }
    }
    let ymax = stack.iter().copied().max().unwrap_or(0) as f64 / width;
    let ymax = pg.y_top(id, ymax);
    let plot = Plot::new(
        pg.width,
        220.0,
        (0.0, width * n as f64),
        (0.0, ymax.max(1.0) * 1.05),
    );
    let mut svg = open_chart(
        "chart",
        &format!("data-chart=\"{id}\""),
        series.len(),
        &plot,
        "seconds",
        "messages/s",
    );
    let mut base = vec![0u64; n];
    let mut legend = String::from("<div class=\"legend\">");
    let mut hover = Vec::new();
    for (k, ((name, _), vals)) in series.iter().zip(cols).enumerate() {
        let top: Vec<u64> = base.iter().zip(vals).map(|(b, v)| b + v).collect();
        let mut d = String::new();
        for (i, v) in top.iter().enumerate() {
            let (x0, x1) = (plot.px(i as f64 * width), plot.px((i + 1) as f64 * width));
            let y = plot.py(*v as f64 / width);
            let _ = write!(
                d,
                "{}{},{}H{}",
                if i == 0 { "M" } else { "L" },
                num(x0),
                num(y),
                num(x1)
            );
        }
        for i in (0..n).rev() {
            let (x0, x1) = (plot.px(i as f64 * width), plot.px((i + 1) as f64 * width));
            let y = plot.py(base[i] as f64 / width);
            let _ = write!(d, "L{},{}H{}", num(x1), num(y), num(x0));
        }
        d.push('Z');
        let _ = write!(
            svg,
            "<path data-series=\"{}\" d=\"{d}\" fill=\"{}\" fill-opacity=\"0.85\"/>",
            esc(name),
            colours.get(k).copied().unwrap_or(OTHER)
        );
        let total: u64 = vals.iter().sum();
        let _ = write!(
            legend,
            "<span><span class=\"sw\" style=\"background:{}\"></span>{} ({total})</span>",
            colours.get(k).copied().unwrap_or(OTHER),
            esc(name)
        );
        hover.push(json!({"n": name, "v": vals}));
        base = top;
    }
    svg.push_str("</svg>");
    legend.push_str("</div>");
    pg.data.insert(
        id.to_string(),
        json!({"k": "cols", "x0": round(plot.px(0.0), 1), "x1": round(plot.px(width * n as f64), 1),
               "w": width, "n": n, "unit": "msg/s", "s": hover}),
    );
    svg + &legend
}

/// Dirty-flag combinations to show per direction, most frequent over every capture
/// first: both captures of a comparison list the same rows in the same order.
fn dirty_rows(captures: &[CaptureReport]) -> [Vec<u8>; 2] {
    [Direction::C2S, Direction::S2C].map(|dir| {
        let mut sum = [0u64; 256];
        for c in captures {
            for (f, n) in c.stats().dirs[dir.index()].dirty_flags.iter().enumerate() {
                sum[f] += n;
            }
        }
        let mut combos: Vec<u8> = (0..=255u8).filter(|f| sum[*f as usize] > 0).collect();
        combos.sort_by(|a, b| sum[*b as usize].cmp(&sum[*a as usize]).then(a.cmp(b)));
        combos
    })
}

/// Dirty-flag combinations shown as bars; the rest are summed in one row.
const DIRTY_ROWS: usize = 16;

fn dirty(pg: &mut Page, c: &CaptureReport, cid: &str) -> String {
    let mut h = String::new();
    for dir in [Direction::C2S, Direction::S2C] {
        let d = &c.stats().dirs[dir.index()];
        let total: u64 = d.dirty_flags.iter().sum();
        let _ = write!(h, "<h4>{} — {total} StateUpdates</h4>", dir_title(dir));
        if total == 0 {
            h.push_str("<p class=\"note\">No StateUpdates.</p>");
            continue;
        }
        let order = &pg.dirty_rows[dir.index()];
        let shown: Vec<u8> = order.iter().take(DIRTY_ROWS).copied().collect();
        let mut bars: Vec<(String, u64)> = shown
            .iter()
            .map(|f| {
                (
                    format!("0x{f:02X} {}", flag_names(*f)),
                    d.dirty_flags[*f as usize],
                )
            })
            .collect();
        let rest: u64 = order
            .iter()
            .skip(DIRTY_ROWS)
            .map(|f| d.dirty_flags[*f as usize])
            .sum();
        let rest_kinds = order
            .iter()
            .skip(DIRTY_ROWS)
            .filter(|f| d.dirty_flags[**f as usize] > 0)
            .count();
        if order.len() > DIRTY_ROWS {
            bars.push((format!("{rest_kinds} other combinations"), rest));
        }
        h.push_str("<div class=\"pairs\"><div>");
        h.push_str(&bar_chart(
            pg,
            &format!("{cid}-combinations-{}", dir.as_str()),
            &bars,
            total,
        ));
        h.push_str("</div><div>");
        let bits: Vec<(String, u64)> = (0..8)
            .map(|b| {
                (
                    format!("0x{:02X} {}", 1u8 << b, flag_names(1 << b)),
                    d.dirty_bits[b],
                )
            })
            .collect();
        h.push_str(&bar_chart(
            pg,
            &format!("{cid}-bits-{}", dir.as_str()),
            &bits,
            total,
        ));
        h.push_str("</div></div>");
    }
    h
}

/// Horizontal bars with names, counts and shares of `total`.
/// Bars are scaled by share of `total`, the longest share the same for both captures
/// of a comparison. `id` is "a-bits-c2s"; the `data-bars` kind drops the capture.
fn bar_chart(pg: &mut Page, id: &str, bars: &[(String, u64)], total: u64) -> String {
    let kind = id.split_once('-').map_or(id, |(_, k)| k);
    let row_h = 18.0;
    // Room for the longest label at 11 px: capitals in common sans fonts run up to
    // about 7.6 px a character, so none is cut.
    let longest = bars.iter().map(|b| b.0.chars().count()).max().unwrap_or(0);
    let label_w = (longest as f64 * 7.6 + 12.0).max(120.0);
    let (bar_w, value_w) = (240.0, 100.0);
    let w = label_w + bar_w + value_w;
    let height = row_h * bars.len() as f64 + 4.0;
    let share = |n: u64| n as f64 / total.max(1) as f64;
    let local = bars.iter().map(|b| share(b.1)).fold(0.0, f64::max);
    let max = pg.y_top(id, local).max(1e-12);
    let mut s = format!(
        "<svg class=\"chart bars\" data-bars=\"{kind}\" data-series-count=\"{}\" viewBox=\"0 0 {w} {}\" style=\"max-width:{w}px\">",
        bars.len(),
        num(height)
    );
    for (i, (name, n)) in bars.iter().enumerate() {
        let y = 2.0 + i as f64 * row_h;
        let bw = (share(*n) / max * bar_w).max(if *n > 0 { 1.0 } else { 0.0 });
        let pct = if total > 0 {
            *n as f64 * 100.0 / total as f64
        } else {
            0.0
        };
        let _ = write!(
            s,
            "<text class=\"lbl\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\
             <rect data-series=\"{}\" data-tip=\"{}\" x=\"{label_w}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>\
             <text class=\"lbl\" x=\"{}\" y=\"{}\">{n} ({pct:.1}%)</text>",
            num(label_w - 6.0),
            num(y + 12.0),
            esc(name),
            esc(name),
            esc(&format!(
                "{name}\n{n} update{}, {pct:.1}%",
                if *n == 1 { "" } else { "s" }
            )),
            num(y + 2.0),
            num(bw),
            num(row_h - 4.0),
            colour(0),
            num(label_w + bw + 6.0),
            num(y + 12.0)
        );
    }
    s.push_str("</svg>");
    s
}

/// Colour of a ship: by player slot when the id is in a player range.
pub(super) fn ship_colour(s: &Ship, i: usize) -> &'static str {
    colour(s.slot.map(|x| x as usize).unwrap_or(i + 16))
}

pub(super) fn ship_name(s: &Ship) -> String {
    // Named after its class and the player who flew it, as collected (the creation's
    // sender), not after the registry's label, which follows the id's slot.
    if let (Some(class), Some(_)) = (&s.class, s.created_frame) {
        let who = match (&s.player, s.slot) {
            (Some(p), Some(slot)) => format!(" ({p}, slot {slot})"),
            (Some(p), None) => format!(" ({p})"),
            (None, Some(slot)) => format!(" (slot {slot})"),
            (None, None) => String::new(),
        };
        return format!("{class}{who} 0x{:08X}", s.object_id);
    }
    if s.created_frame.is_some() && !s.label.starts_with("0x") {
        return format!("{} 0x{:08X}", s.label, s.object_id);
    }
    // No creation seen: the id and what its range says (slot, and that slot's player).
    let mut who: Vec<String> = Vec::new();
    if let Some(slot) = s.slot {
        who.push(format!("slot {slot}"));
    }
    who.extend(s.player.clone());
    if who.is_empty() {
        format!("object 0x{:08X}", s.object_id)
    } else {
        format!("object 0x{:08X} ({})", s.object_id, who.join(", "))
    }
}

/// The name of the ship life an event's object or target belonged to, else its id.
pub(super) fn object_name(
    c: &CaptureReport,
    session: usize,
    ship: Option<ShipIdentity>,
    id: Option<u32>,
) -> Option<String> {
    if let Some(s) = ship.and_then(|k| c.ships.iter().find(|s| s.is(session, k))) {
        return Some(ship_name(s));
    }
    id.map(|o| format!("0x{o:08X}"))
}

/// Events of one ship life: those whose object belonged to it when sent, within the
/// life (an event about a ship after its death is counted, not drawn).
fn ship_events<'a>(c: &'a CaptureReport, s: &Ship) -> (Vec<&'a Event>, usize) {
    let mine: Vec<&Event> = c
        .events
        .iter()
        .filter(|e| e.ship.is_some_and(|k| s.is(e.session, k)))
        .collect();
    let total = mine.len();
    let within: Vec<&Event> = mine.into_iter().filter(|e| s.alive_at(e.t)).collect();
    let outside = total - within.len();
    (within, outside)
}

/// Who a ship belongs to, for grouping: its player, else its slot.
pub(super) fn owner_label(s: &Ship) -> String {
    match (&s.player, s.slot) {
        (Some(p), Some(slot)) => format!("{p} (slot {slot})"),
        (Some(p), None) => p.clone(),
        (None, Some(slot)) => format!("slot {slot}"),
        (None, None) => "no player".to_string(),
    }
}

/// The key that groups a player's lives: session, slot (the legend's order), the
/// client who flew them (else none), and the label.
pub(super) fn owner_key(s: &Ship) -> (usize, u8, usize, String) {
    (
        s.session,
        s.slot.unwrap_or(u8::MAX),
        s.client.unwrap_or(usize::MAX),
        owner_label(s),
    )
}

/// A player group's heading: the owner, and the session when the capture has several.
pub(super) fn owner_heading(s: &Ship, sessions: usize) -> String {
    if sessions > 1 {
        format!("{} · session {}", owner_label(s), s.session)
    } else {
        owner_label(s)
    }
}

/// ` data-player="…"` of a life: its player, or empty (shown only with all players).
pub(super) fn life_player(s: &Ship) -> String {
    format!(
        " data-player=\"{}\"",
        esc(s.player.as_deref().unwrap_or(""))
    )
}

fn ships(pg: &mut Page, c: &CaptureReport, cid: &str) -> String {
    let list: Vec<(&Ship, Vec<&Event>, usize)> = c
        .ships
        .iter()
        .map(|s| {
            let (ev, outside) = ship_events(c, s);
            (s, ev, outside)
        })
        .filter(|(s, ev, _)| !s.health.is_empty() || !ev.is_empty())
        .collect();
    let mut h = String::new();
    if list.is_empty() {
        return "<p class=\"note\">No subsystem blocks (0x20) and no weapon or damage events.</p>"
            .into();
    }
    // The busiest lives get charts; the others are listed in a table per player.
    let mut by_updates: Vec<usize> = (0..list.len()).collect();
    by_updates.sort_by(|&a, &b| {
        let (x, y) = (&list[a], &list[b]);
        (y.0.updates + y.1.len() as u64)
            .cmp(&(x.0.updates + x.1.len() as u64))
            .then(x.0.born.total_cmp(&y.0.born))
    });
    let charted: std::collections::BTreeSet<usize> = by_updates
        .iter()
        .take(pg.budget.ship_charts)
        .copied()
        .collect();
    if list.len() > pg.budget.ship_charts {
        let _ = write!(
            h,
            "<p class=\"note\">Charts for the {} ships with the most StateUpdates and events; \
             the other {} are listed under their player.</p>",
            pg.budget.ship_charts,
            list.len() - pg.budget.ship_charts
        );
        note_thinned(
            pg,
            format!("{} of {} ship charts", pg.budget.ship_charts, list.len()),
        );
    }
    let lengths: Vec<usize> = charted
        .iter()
        .flat_map(|&i| list[i].0.health.iter().map(|x| x.points.len()))
        .collect();
    let total: usize = lengths.iter().sum();
    let shares = split_budget(&lengths, pg.budget.health_points, 8);
    if shares.iter().sum::<usize>() < total {
        note_thinned(
            pg,
            format!(
                "subsystem condition: {} of {} change points",
                shares.iter().sum::<usize>(),
                total
            ),
        );
    }
    let mut share = shares.into_iter();
    let mut keeps: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for &i in &charted {
        let k = list[i]
            .0
            .health
            .iter()
            .map(|_| share.next().unwrap_or(0))
            .collect();
        keeps.insert(i, k);
    }
    // Grouped by player, each player's lives in the order they flew.
    let mut groups: BTreeMap<(usize, u8, usize, String), Vec<usize>> = BTreeMap::new();
    for (i, (s, _, _)) in list.iter().enumerate() {
        groups.entry(owner_key(s)).or_default().push(i);
    }
    let sessions = c.summary.sessions.len();
    let mut n = 0;
    for (_, mut members) in groups {
        members.sort_by(|&a, &b| list[a].0.born.total_cmp(&list[b].0.born));
        let player = life_player(list[members[0]].0);
        let owner = owner_heading(list[members[0]].0, sessions);
        let _ = write!(
            h,
            "<div class=\"owner\" data-owner=\"{}\"{player}><h4 class=\"owner\">{} — {} ship{}</h4>",
            esc(&owner),
            esc(&owner),
            members.len(),
            if members.len() == 1 { "" } else { "s" }
        );
        let mut folded = Vec::new();
        for i in members {
            let (s, events, outside) = &list[i];
            match keeps.get(&i) {
                Some(keep) => {
                    let id = format!("{cid}-ship-{n}");
                    let _ = write!(h, "<div class=\"ship\"{}>", life_attrs(s));
                    h.push_str(&ship_chart(pg, c, s, events, *outside, keep, &id, n));
                    h.push_str("</div>");
                    n += 1;
                }
                None => folded.push(i),
            }
        }
        if !folded.is_empty() {
            let _ = write!(
                h,
                "<details class=\"lives\"><summary>{} more ship{} of {} (no chart)</summary><table>{}",
                folded.len(),
                if folded.len() == 1 { "" } else { "s" },
                esc(&owner),
                thead(&["ship", "from (s)", "to (s)", "died", "StateUpdates", "events"])
            );
            for i in folded {
                let (s, events, _) = &list[i];
                let _ = write!(h, "<tr{}>", life_attrs(s));
                h.push_str(&cells(&[
                    td(&ship_name(s)),
                    tn(format!("{:.1}", s.born)),
                    tn(format!("{:.1}", s.end)),
                    td(if s.died.is_some() { "yes" } else { "" }),
                    tn(s.updates),
                    tn(events.len()),
                ]));
            }
            h.push_str("</table></details>");
        }
        h.push_str("</div>");
    }
    h
}

/// `data-born` and `data-end` of a life: the script hides it outside the time window.
fn life_attrs(s: &Ship) -> String {
    format!(
        " data-born=\"{}\" data-end=\"{}\"",
        round(s.born, 3),
        round(s.end, 3)
    )
}

#[allow(clippy::too_many_arguments)]
fn ship_chart(
    pg: &mut Page,
    c: &CaptureReport,
    s: &Ship,
    events: &[&Event],
    outside: usize,
    keep: &[usize],
    id: &str,
    n: usize,
) -> String {
    let mut plot = Plot::new(pg.width, 230.0, (0.0, pg.t_max.max(1.0)), (0.0, 100.0));
    plot.top = 50.0;
    let fire_y = 16.0;
    let damage_y = 34.0;
    let life = match s.died {
        Some(d) => format!("{:.1}–{:.1} s, died", s.born, d),
        None => format!("{:.1}–{:.1} s", s.born, s.end),
    };
    let mut h = format!(
        "<h4 data-ship=\"{}\"><span class=\"sw\" style=\"background:{}\"></span> {} — {life}, {} StateUpdate{}, {} event{}</h4>",
        esc(&ship_name(s)),
        ship_colour(s, n),
        esc(&ship_name(s)),
        s.updates,
        if s.updates == 1 { "" } else { "s" },
        events.len(),
        if events.len() == 1 { "" } else { "s" }
    );
    let mut svg = open_chart(
        "chart ship",
        &format!("data-chart=\"{id}\"{}", life_attrs(s)),
        s.health.len(),
        &plot,
        "seconds",
        "condition %",
    );
    let _ = write!(
        svg,
        "<text class=\"lbl\" x=\"{}\" y=\"{}\" text-anchor=\"end\">fire</text><text class=\"lbl\" x=\"{}\" y=\"{}\" text-anchor=\"end\">damage</text>",
        num(plot.left - 4.0),
        num(fire_y + 4.0),
        num(plot.left - 4.0),
        num(damage_y + 4.0)
    );
    // The death first, so that the condition lines and marks are drawn over it.
    if let Some(d) = s.died {
        let _ = write!(
            svg,
            "<path class=\"line death\" data-marks=\"death\" d=\"M{},{}V{}\" stroke=\"#ff3b30\" stroke-width=\"1\" stroke-dasharray=\"4 3\"/>",
            num(plot.px(d)),
            num(damage_y + 8.0),
            num(plot.height - plot.bottom)
        );
    }
    let mut legend = String::from("<div class=\"legend\">");
    let mut hover = Vec::new();
    for (k, (series, keep)) in s.health.iter().zip(keep).enumerate() {
        let pts = thin_steps(&series.points, *keep);
        let mut xy: Vec<(f64, f64)> = Vec::with_capacity(pts.len() * 2 + 1);
        for (i, p) in pts.iter().enumerate() {
            let y = plot.py(p.1 as f64);
            if i > 0 {
                xy.push((plot.px(p.0), xy.last().map(|l| l.1).unwrap_or(y)));
            }
            xy.push((plot.px(p.0), y));
        }
        // A condition holds until the ship's life ends, not to the end of the capture.
        if let Some(last) = xy.last().copied() {
            xy.push((plot.px(s.end).max(last.0), last.1));
        }
        let col = colour(k);
        svg.push_str(&super::svg::series_element(
            &format!(" data-series=\"{}\"", esc(&series.name)),
            col,
            &xy,
        ));
        let min = series.points.iter().map(|p| p.1).fold(f32::MAX, f32::min);
        let _ = write!(
            legend,
            "<span><span class=\"sw\" style=\"background:{col}\"></span>{} (min {:.0}%)</span>",
            esc(&series.name),
            if min == f32::MAX { 100.0 } else { min }
        );
        let p: Vec<Json> = pts
            .iter()
            .map(|p| {
                json!([
                    round(plot.px(p.0), 1),
                    round(plot.py(p.1 as f64), 1),
                    round(p.0, 2),
                    p.1
                ])
            })
            .collect();
        hover.push(json!({"n": series.name, "p": p, "f": ["condition %"]}));
    }
    // Event lanes: one path per lane, decimated to the mark budget.
    let kept = decimate_indices(events.len(), pg.budget.marks);
    let (mut fire, mut damage, mut kill) = (String::new(), String::new(), String::new());
    let mut ev_pts = Vec::new();
    for &j in &kept {
        let Some(e) = events.get(j) else { continue };
        let x = plot.px(e.t);
        let y = if e.kind.is_fire() { fire_y } else { damage_y };
        match e.kind {
            k if k.is_fire() => {
                let _ = write!(fire, "M{},{}v12", num(x), num(fire_y - 6.0));
            }
            EventKind::Destroyed | EventKind::ShipExploding => {
                // A cross in the damage lane: the damage ticks beside it stay visible.
                let _ = write!(
                    kill,
                    "M{},{}l8,8m0,-8l-8,8",
                    num(x - 4.0),
                    num(damage_y - 4.0)
                );
            }
            _ => {
                let _ = write!(damage, "M{},{}v12", num(x), num(damage_y - 6.0));
            }
        }
        ev_pts.push(json!([
            round(x, 1),
            y,
            round(e.t, 2),
            e.kind.name(),
            object_name(c, e.session, e.target_ship, e.target),
            e.value.map(|v| round(v, 1))
        ]));
    }
    for (d, col, what) in [
        (fire, "#0072b2", "fire"),
        (damage, "#d55e00", "damage"),
        (kill, "#ff3b30", "kill"),
    ] {
        if !d.is_empty() {
            let _ = write!(svg, "<path class=\"line\" data-marks=\"{what}\" d=\"{d}\" stroke=\"{col}\" stroke-width=\"2\"/>");
        }
    }
    if !ev_pts.is_empty() {
        hover.push(json!({"n": "event", "p": ev_pts, "f": ["kind", "target", "damage/force"]}));
    }
    svg.push_str("</svg>");
    legend.push_str("</div>");
    pg.data
        .insert(id.to_string(), json!({"k": "pts", "s": hover}));
    // Event counts by kind (exact).
    let mut counts: BTreeMap<&str, u64> = BTreeMap::new();
    for e in events {
        *counts.entry(e.kind.name()).or_default() += 1;
    }
    let mut summary: Vec<String> = counts.iter().map(|(k, v)| format!("{k} {v}")).collect();
    if outside > 0 {
        summary.push(format!(
            "{outside} event{} after its death not drawn",
            if outside == 1 { "" } else { "s" }
        ));
    }
    if s.health.is_empty() {
        h.push_str("<p class=\"note\">No decoded subsystem block for this ship (class unknown or host did not send 0x20).</p>");
    }
    h + &svg + &legend + &format!("<p class=\"note\">{}</p>", esc(&summary.join(", ")))
}

/// Line chart over time columns: one polyline per series.
fn line_chart(
    pg: &mut Page,
    id: &str,
    series: &[(String, Vec<f64>)],
    width: f64,
    y_title: &str,
    unit: &str,
    rate: bool,
) -> String {
    let style = |k: usize| (colour(k), None);
    line_chart_styled(pg, id, series, width, (y_title, unit, rate), &style)
}

/// How a series is drawn: its colour and, for a player's series, the player (the
/// script shows only the chosen player's).
pub(super) type SeriesStyle<'a> = dyn Fn(usize) -> (&'static str, Option<String>) + 'a;

/// Lines over time columns; `y` is the axis title, the unit of the read-out and whether
/// values are rates (read out per column as counts).
pub(super) fn line_chart_styled(
    pg: &mut Page,
    id: &str,
    series: &[(String, Vec<f64>)],
    width: f64,
    y: (&str, &str, bool),
    style: &SeriesStyle,
) -> String {
    let (y_title, unit, rate) = y;
    let n = series.first().map(|s| s.1.len()).unwrap_or(0).max(1);
    let ymax = series
        .iter()
        .flat_map(|s| s.1.iter().copied())
        .fold(0.0f64, f64::max);
    let ymax = pg.y_top(id, ymax);
    let plot = Plot::new(
        pg.width,
        180.0,
        (0.0, width * n as f64),
        (0.0, ymax.max(1.0) * 1.1),
    );
    let mut svg = open_chart(
        "chart",
        &format!("data-chart=\"{id}\""),
        series.len(),
        &plot,
        "seconds",
        y_title,
    );
    let mut legend = String::from("<div class=\"legend\">");
    let mut hover = Vec::new();
    for (k, (name, vals)) in series.iter().enumerate() {
        let (col, player) = style(k);
        let pl = player_attr(player.as_deref());
        // A column without a value (NaN: nothing measured there, such as an ACK delay
        // in a second without ACKs) breaks the line rather than drawing it at zero.
        let runs = vals
            .iter()
            .enumerate()
            .collect::<Vec<_>>()
            .split(|(_, v)| !v.is_finite())
            .filter(|run| !run.is_empty())
            .map(|run| {
                run.iter()
                    .map(|(i, v)| (plot.px((*i as f64 + 0.5) * width), plot.py(**v)))
                    .collect::<Vec<_>>()
            })
            .collect::<Vec<_>>();
        for pts in runs {
            svg.push_str(&super::svg::series_element(
                &format!(" data-series=\"{}\"{pl}", esc(name)),
                col,
                &pts,
            ));
        }
        let _ = write!(
            legend,
            "<span{pl}><span class=\"sw\" style=\"background:{col}\"></span>{}</span>",
            esc(name)
        );
        // Rates are read out per column as counts (the script divides by the width).
        let k = if rate { width } else { 1.0 };
        let v: Vec<f64> = vals.iter().map(|v| round(*v * k, 3)).collect();
        let mut series = json!({"n": name, "v": v});
        if let Some(p) = player {
            series["pl"] = json!(p);
        }
        hover.push(series);
    }
    svg.push_str("</svg>");
    legend.push_str("</div>");
    pg.data.insert(
        id.to_string(),
        json!({"k": "cols", "x0": round(plot.px(0.0), 1), "x1": round(plot.px(width * n as f64), 1),
               "w": width, "n": n, "unit": unit, "rate": rate, "s": hover}),
    );
    svg + &legend
}

fn ms(ns: i64) -> String {
    format!("{:.1}", ns as f64 / 1e6)
}

fn transport(pg: &mut Page, c: &CaptureReport, cid: &str) -> String {
    let t = &c.transport;
    let st = c.stats();
    let (width, n) = column_layout(pg.t_max, pg.budget.columns);
    let mut h = String::from("<table class=\"transport\">");
    h.push_str(&thead(&["", "client → host", "host → client"]));
    let both =
        |f: &dyn Fn(Direction) -> String| -> [String; 2] { [f(Direction::C2S), f(Direction::S2C)] };
    let incomplete = |d: Direction| -> u64 {
        c.summary
            .sessions
            .iter()
            .flat_map(|s| &s.clients)
            .map(|cl| cl.dir(d).fragment_sets_incomplete)
            .sum()
    };
    let rows: Vec<(&str, [String; 2])> = vec![
        (
            "reliable retransmissions",
            both(&|d| st.dirs[d.index()].retransmissions.to_string()),
        ),
        (
            "ACKs (duplicate)",
            both(&|d| {
                format!(
                    "{} ({})",
                    st.dirs[d.index()].acks,
                    st.dirs[d.index()].duplicate_acks
                )
            }),
        ),
        (
            "ACKs matched to a message",
            both(&|d| t.ack_delays[d.index()].to_string()),
        ),
        (
            "ACK delay mean ms",
            both(&|d| {
                let i = d.index();
                if t.ack_delays[i] == 0 {
                    "-".into()
                } else {
                    ms((t.ack_delay_sum_ns[i] / t.ack_delays[i] as i128) as i64)
                }
            }),
        ),
        (
            "ACK delay p50 / p95 ms (≤)",
            both(&|d| match (
                t.ack_delay_quantile_ns(d, 0.5),
                t.ack_delay_quantile_ns(d, 0.95),
            ) {
                (Some(a), Some(b)) => format!("{} / {}", ms(a), ms(b)),
                _ => "-".into(),
            }),
        ),
        (
            "ACK delay max ms",
            both(&|d| {
                if t.ack_delays[d.index()] == 0 {
                    "-".into()
                } else {
                    ms(t.ack_delay_max_ns[d.index()])
                }
            }),
        ),
        (
            "unacknowledged at end",
            both(&|d| st.dirs[d.index()].unacked.to_string()),
        ),
        (
            "fragment sets never completed",
            both(&|d| incomplete(d).to_string()),
        ),
        (
            "gaps > 1 s",
            both(&|d| {
                t.gaps
                    .iter()
                    .filter(|g| g.direction == d)
                    .count()
                    .to_string()
            }),
        ),
    ];
    for (k, [a, b]) in rows {
        h.push_str(&row(&[
            td(k),
            format!("<td class=\"n\">{}</td>", esc(&a)),
            format!("<td class=\"n\">{}</td>", esc(&b)),
        ]));
    }
    h.push_str("</table>");
    // Direction of an ACK is the direction it travels; its delay belongs to the other
    // direction's messages. Labels say which.
    let retx: Vec<(String, Vec<f64>)> = [Direction::C2S, Direction::S2C]
        .into_iter()
        .map(|d| {
            let cols = rebucket(&t.retransmissions[d.index()], pg.t_max, pg.budget.columns).1;
            let mut rate: Vec<f64> = cols.iter().map(|v| *v as f64 / width).collect();
            blank_after(&mut rate, width, c.duration);
            (format!("retransmissions {}", dir_title(d)), rate)
        })
        .collect();
    h.push_str("<h4>Retransmissions per second</h4>");
    h.push_str(&line_chart(
        pg,
        &format!("{cid}-retx"),
        &retx,
        width,
        "retransmissions/s",
        "/s",
        true,
    ));
    let mut delay: Vec<(String, Vec<f64>)> = Vec::new();
    for d in [Direction::C2S, Direction::S2C] {
        // NaN where no ACK was matched: the chart draws a gap, not a delay of 0 ms.
        let mut mean = vec![f64::NAN; n];
        let mut max = vec![f64::NAN; n];
        let mut cnt = vec![0u64; n];
        let mut sum = vec![0i128; n];
        for (sec, a) in &t.acks[d.index()] {
            let i = super::series::column_of(*sec as f64, width, n);
            cnt[i] += a.count;
            sum[i] += a.sum_ns;
            max[i] = f64::max(max[i], a.max_ns as f64 / 1e6); // NaN.max(x) is x
        }
        for i in 0..n {
            if cnt[i] > 0 {
                mean[i] = (sum[i] / cnt[i] as i128) as f64 / 1e6;
            }
        }
        delay.push((format!("mean ACK delay, ACKs {}", dir_title(d)), mean));
        delay.push((format!("max ACK delay, ACKs {}", dir_title(d)), max));
    }
    if t.ack_delays.iter().sum::<u64>() > 0 {
        h.push_str("<h4>ACK delay (ms)</h4>");
        h.push_str(&line_chart(
            pg,
            &format!("{cid}-ackdelay"),
            &delay,
            width,
            "ms",
            "ms",
            false,
        ));
    }
    if !t.gaps.is_empty() {
        let _ = write!(
            h,
            "<h4>Longest silences ({} gaps over 1 s in all)</h4>",
            t.gap_count
        );
        h.push_str("<table class=\"gaps\">");
        h.push_str(&thead(&[
            "session",
            "client",
            "direction",
            "from s",
            "length s",
        ]));
        for g in t.gaps.iter().take(10) {
            let name = c
                .summary
                .client(g.session, g.client)
                .map(client_label)
                .unwrap_or_else(|| format!("client {}", g.client));
            h.push_str(&row(&[
                tn(g.session),
                td(&name),
                td(dir_title(g.direction)),
                tn(format!("{:.2}", g.start)),
                tn(format!("{:.2}", g.length)),
            ]));
        }
        h.push_str("</table>");
    }
    h
}

fn chat(c: &CaptureReport) -> String {
    if c.chat.is_empty() {
        return "<p class=\"note\">No chat messages.</p>".into();
    }
    let mut h = String::from("<div class=\"scroll\"><table class=\"chat\">");
    h.push_str(&thead(&["s", "session", "from", "", "text"]));
    for l in &c.chat {
        h.push_str(&row(&[
            tn(format!("{:.1}", l.t)),
            tn(l.session),
            td(&l.sender),
            td(if l.team { "team" } else { "" }),
            td(&l.text),
        ]));
    }
    h.push_str("</table></div>");
    if c.chat_dropped > 0 {
        let _ = write!(
            h,
            "<p class=\"note\">{} more chat lines not listed.</p>",
            c.chat_dropped
        );
    }
    h
}

fn diff_section(r: &DiffResult, a: &str, b: &str) -> String {
    let mut h = String::from("<section id=\"diff\"><h2>Comparison (A → B)</h2><div class=\"col\">");
    let _ = write!(
        h,
        "<p>A = {}<br>B = {}</p><p class=\"{}\">{}</p>",
        esc(file_name(a)),
        esc(file_name(b)),
        if r.is_same() { "same" } else { "differ" },
        if r.is_same() {
            "The captures are equivalent."
        } else {
            "The captures differ."
        }
    );
    let delta = |x: u64, y: u64| {
        let d = y as i64 - x as i64;
        if d == 0 {
            "=".to_string()
        } else {
            format!("{d:+}")
        }
    };
    h.push_str("<h4>Game messages by opcode</h4><table class=\"diff-opcodes\">");
    h.push_str(&thead(&["direction", "opcode", "name", "A", "B", "Δ"]));
    for (d, op, x, y) in &r.opcode_rows {
        h.push_str(&row(&[
            td(d.as_str()),
            td(&format!("0x{op:02X}")),
            td(opcode_name(*op)),
            tn(x),
            tn(y),
            tn(delta(*x, *y)),
        ]));
    }
    h.push_str("</table>");
    if !r.flag_rows.is_empty() {
        h.push_str("<h4>StateUpdate dirty flags</h4><table class=\"diff-flags\">");
        h.push_str(&thead(&["direction", "flags", "fields", "A", "B", "Δ"]));
        for (d, f, x, y) in &r.flag_rows {
            h.push_str(&row(&[
                td(d.as_str()),
                td(&format!("0x{f:02X}")),
                td(&flag_names(*f)),
                tn(x),
                tn(y),
                tn(delta(*x, *y)),
            ]));
        }
        h.push_str("</table>");
    }
    for k in &r.only_in_a {
        let _ = write!(
            h,
            "<p class=\"warn\">flow only in A: {}</p>",
            esc(&k.to_string())
        );
    }
    for k in &r.only_in_b {
        let _ = write!(
            h,
            "<p class=\"warn\">flow only in B: {}</p>",
            esc(&k.to_string())
        );
    }
    if !r.unmatched.is_empty() {
        h.push_str("<h4>Messages without an equal twin in the other capture</h4><table>");
        h.push_str(&thead(&[
            "direction",
            "opcode",
            "name",
            "only in A",
            "only in B",
        ]));
        for (d, op, x, y) in &r.unmatched {
            h.push_str(&row(&[
                td(d.as_str()),
                td(&format!("0x{op:02X}")),
                td(opcode_name(*op)),
                tn(x),
                tn(y),
            ]));
        }
        h.push_str("</table>");
    }
    if !r.divergences.is_empty() {
        h.push_str("<h4>First divergence per flow</h4><table>");
        h.push_str(&thead(&["flow", "message #", "A", "B"]));
        let name = |o: Option<u8>| {
            o.map(|o| format!("0x{o:02X} {}", opcode_name(o)))
                .unwrap_or_else(|| "(end)".into())
        };
        for d in &r.divergences {
            h.push_str(&row(&[
                td(&d.flow.to_string()),
                tn(d.index),
                td(&name(d.a_opcode)),
                td(&name(d.b_opcode)),
            ]));
        }
        h.push_str("</table>");
    }
    for m in &r.mismatches {
        let _ = write!(
            h,
            "<h4>{} message #{} 0x{:02X} {} (A frame {}, B frame {})</h4><table>",
            esc(&m.flow.to_string()),
            m.index,
            m.opcode,
            opcode_name(m.opcode),
            m.a_frame,
            m.b_frame
        );
        h.push_str(&thead(&["field", "A", "B"]));
        for d in &m.differences {
            let side = |v: &Option<String>| v.clone().unwrap_or_else(|| "(absent)".into());
            h.push_str(&row(&[td(&d.path), td(&side(&d.a)), td(&side(&d.b))]));
        }
        h.push_str("</table>");
    }
    h.push_str("<p class=\"note\">Volatile fields (game time, timestamps) are ignored, as in <code>bcwire diff</code>.</p></div></section>");
    h
}

#[cfg(test)]
mod tests {
    use super::super::collect::{ChatLine, HealthSeries, ShipPoint};
    use super::*;
    use crate::pipeline::summary::{ClientSummary, SessionSummary};

    const HOSTILE: &str = "<img src=x onerror=\"document.body.dataset.pwned=1\">'</script>";

    /// A long battle: 20 ships × 10,000 positions, 10 subsystems each, 50,000 events.
    fn big_report() -> CaptureReport {
        let mut r = CaptureReport {
            name: format!("battle {HOSTILE}.pcap"),
            duration: 2040.0,
            ..CaptureReport::default()
        };
        for s in 0..20u32 {
            let track = (0..10_000)
                .map(|i| {
                    let a = i as f32 / 500.0 + s as f32;
                    ShipPoint {
                        t: i as f64 * 0.204,
                        pos: [a.cos() * 1000.0, a.sin() * 800.0, s as f32],
                        speed: Some(5.0),
                    }
                })
                .collect();
            let health = (0..10u8)
                .map(|k| HealthSeries {
                    index: k,
                    name: format!("{HOSTILE} {k}"),
                    points: (0..2000)
                        .map(|i| (i as f64, ((i * 7 + k as usize) % 101) as f32))
                        .collect(),
                    updates: 10_000,
                })
                .collect();
            r.ships.push(Ship {
                session: 0,
                object_id: 0x3FFF_FFFF + s * 0x40000,
                created_frame: Some(1),
                label: format!("Galaxy ({HOSTILE}, slot {s})"),
                class: Some("Galaxy".into()),
                player: Some(HOSTILE.into()),
                born: 0.0,
                died: None,
                end: 2040.0,
                slot: Some(s as u8),
                track_direction: Some(Direction::C2S),
                track,
                track_relative: false,
                client: None,
                updates: 10_000,
                health,
            });
        }
        for i in 0..50_000u32 {
            r.events.push(Event {
                t: i as f64 * 0.04,
                frame: i as u64,
                session: 0,
                kind: if i % 2 == 0 {
                    EventKind::BeamFire
                } else {
                    EventKind::Explosion
                },
                object: Some(0x3FFF_FFFF + (i % 20) * 0x40000),
                target: None,
                ship: Some(ShipIdentity {
                    object_id: 0x3FFF_FFFF + (i % 20) * 0x40000,
                    created_frame: 1,
                }),
                target_ship: None,
                position: Some([i as f32 % 900.0, 0.0, 0.0]),
                value: Some(10.0),
            });
        }
        r.chat.push(ChatLine {
            t: 1.0,
            session: 0,
            sender: HOSTILE.into(),
            team: false,
            text: format!("gg {HOSTILE}"),
        });
        r.summary.sessions.push(SessionSummary {
            clients: vec![ClientSummary {
                name: Some(HOSTILE.into()),
                ships: vec![format!("Galaxy {HOSTILE}")],
                ..ClientSummary::default()
            }],
            ..SessionSummary::default()
        });
        for sec in 0..2040 {
            r.rates[0].entry(0x1C).or_default().insert(sec, 100);
            r.rates[1]
                .entry((sec % 30) as u8)
                .or_default()
                .insert(sec, 3);
        }
        r
    }

    /// Coordinate pairs in every `points="…"` attribute.
    fn drawn_points(page: &str) -> usize {
        page.split(" points=\"")
            .skip(1)
            .map(|s| s.split('"').next().unwrap_or("").split(' ').count())
            .sum()
    }

    #[test]
    fn capture_text_is_escaped_everywhere() {
        let page = render(&[big_report()], None);
        assert!(!page.contains("<img"), "raw markup from the capture");
        assert!(!page.contains("onerror=\""));
        // The only closing script tags are the page's own (error hook, data, main, ready).
        assert_eq!(page.matches("</script>").count(), 4);
        assert!(page.contains(
            "&lt;img src=x onerror=&quot;document.body.dataset.pwned=1&quot;&gt;&#39;&lt;/script&gt;"
        ));
        assert!(page.contains("\\u003cimg"), "JSON data escapes <");
    }

    #[test]
    fn big_captures_are_drawn_within_the_budget() {
        let page = render(&[big_report()], None);
        let b = Budget::for_captures(1);
        let points = drawn_points(&page);
        // Condition steps double the points (plus an end point per series).
        assert!(
            points <= b.map_points + 2 * b.health_points + 400 + 6 * b.columns,
            "{points} points drawn"
        );
        let elements = page.matches('<').count();
        assert!(elements < 20_000, "{elements} elements");
        assert!(page.len() < 4 << 20, "{} bytes", page.len());
        assert!(page.contains("id=\"downsampled\""));
        // One series per ship on the map, one per subsystem on each ship chart.
        assert!(page.contains("data-chart=\"a-map\" data-zoom=\"1\" data-series-count=\"20\""));
        assert_eq!(page.matches("class=\"chart ship\"").count(), b.ship_charts);
        let ship0 = &page[page.find("data-chart=\"a-ship-0\"").unwrap()..];
        let ship0 = &ship0[..ship0.find('>').unwrap()];
        assert!(
            ship0.contains("data-born=\"0\" data-end=\"2040\""),
            "{ship0}"
        );
        assert!(ship0.contains("data-series-count=\"10\""), "{ship0}");
        // Rates: one opcode one way, the top 10 plus "other" the other way.
        let tag = |id: &str| {
            let t = &page[page.find(&format!("data-chart=\"{id}\"")).unwrap()..];
            t[..t.find('>').unwrap()].to_string()
        };
        assert!(tag("a-rates-c2s").contains("data-series-count=\"1\""));
        assert!(tag("a-rates-s2c").contains("data-series-count=\"11\""));
        // Legends and tables keep exact numbers.
        assert!(page.contains("0x1C StateUpdate (204000)"));
        assert!(page.contains(" of 10000 points</li>"));
    }

    #[test]
    fn small_captures_are_not_thinned() {
        let mut r = big_report();
        r.ships.truncate(2);
        for s in &mut r.ships {
            s.track.truncate(100);
            s.health.truncate(2);
            for h in &mut s.health {
                h.points.truncate(50);
            }
        }
        r.events.truncate(10);
        r.duration = 100.0;
        r.rates = Default::default();
        let page = render(&[r], None);
        assert!(
            !page.contains("id=\"downsampled\""),
            "nothing needed thinning"
        );
        assert!(page.contains("100 of 100 points</li>"));
        // Tracks, condition steps (two points per change, one end point), and the two
        // retransmission lines in one-second columns.
        assert_eq!(drawn_points(&page), 2 * 100 + 2 * 2 * (2 * 50) + 2 * 100);
    }

    #[test]
    fn two_captures_side_by_side_with_a_comparison() {
        let a = big_report();
        let mut b = big_report();
        b.name = "other.pcap".into();
        let page = render(&[a, b], Some(&DiffResult::default()));
        assert!(page.contains("class=\"cols n2\""));
        assert!(page.contains("data-chart=\"a-map\"") && page.contains("data-chart=\"b-map\""));
        assert!(page.contains("<section id=\"diff\">"));
        assert!(page.contains("The captures are equivalent."));
        let b2 = Budget::for_captures(2);
        let limit = 2 * (b2.map_points + 2 * b2.health_points + 400 + 6 * b2.columns);
        assert!(drawn_points(&page) <= limit);
    }
}
