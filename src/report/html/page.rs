//! The page: its head, navigation, controls and sections, for one or two captures.
//!
//! Charts are SVG written by the sections; the inline script only adds hover read-outs,
//! the time window and map zoom, reading a JSON data block. Element counts are bounded
//! by [`Budget`]: one polyline or path per series (never one element per point),
//! bucketed time series, decimated tracks and thinned condition series.
//!
//! Each section is its own module (`battle`, `health`, `overview`, `problems`, `rates`,
//! `dirty`, `map`, `ships`, `transport_health`, `players`, `chat`, `compare`); they share
//! the table helpers of `table`, the chart primitives of `chart`, the ship names of
//! `ship_names` and the drawing state of `drawing`. The CSS and script are `page.css`
//! and `page.js`.

use super::collect::CaptureReport;
use super::drawing::{Budget, Page};
use super::problems::file_name;
use super::svg::{esc, json_for_script};
use crate::report::diff::DiffResult;
use crate::report::timefmt::utc_datetime;
use serde_json::{Map, Value as Json};
use std::fmt::Write as _;

const CSS: &str = include_str!("page.css");
const JS: &str = include_str!("page.js");
const SHIP_JS: &str = include_str!("ship_view.js");
/// The map's canvas, used by `page.js`: included before it.
const MAP_CANVAS_JS: &str = include_str!("map_canvas.js");
/// The zoom that re-bins the rate and transport charts, and the marks on them.
const REBIN_JS: &str = include_str!("rebin.js");

/// The page's sections: anchor and title.
const SECTIONS: [(&str, &str); 12] = [
    ("scoreboard", "Scoreboard and kill feed"),
    ("fire", "Who fired at whom: shots and kills"),
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
                "fire" => super::fire_matrix::section(c),
                "health" => super::health::section(c),
                "overview" => super::overview::section(c),
                "problems" => super::problems::section(c),
                "rates" => super::rates::section(pg, c, cid),
                "dirty" => super::dirty::section(pg, c, cid),
                "map" => super::map::map(pg, c, cid),
                "ships" => super::ships::section(pg, c, cid),
                "transport" => super::transport_health::section(pg, c, cid),
                "players" => super::players::section(pg, c, cid),
                _ => super::chat::section(c),
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
        dirty_rows: super::dirty::dirty_rows(captures),
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
        body.push_str(&super::compare::section(d, &a.name, &b.name));
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
         a time window (double-click it to clear): the rate and transport charts are drawn \
         again over it, in bins of the interval chosen at the top; on the map, scroll to \
         zoom, drag to pan, double-click to reset.</p></main><div id=\"tip\" class=\"tip\" hidden></div>",
    );
    let _ = write!(
        out,
        "<script type=\"application/json\" id=\"bcw-data\">{}</script>",
        json_for_script(&Json::Object(pg.data))
    );
    let _ = write!(
        out,
        "<script>{MAP_CANVAS_JS}</script><script>{JS}\n{SHIP_JS}\n{REBIN_JS}</script>"
    );
    // Last: report readiness and errors where a headless browser's DOM dump shows them.
    out.push_str("<pre id=\"bcw-errors\" hidden></pre><script>(function(){var e=window.__errors||[];document.getElementById(\"bcw-errors\").textContent=e.join(\"\\n\");document.body.dataset.errors=String(e.length);document.body.dataset.readyMs=String(Math.round(performance.now()));document.body.dataset.ready=\"1\";})();</script>");
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
    h.push_str("</select></label>");
    h.push_str(&super::sessions::choice(captures));
    h.push_str(
        "<span id=\"window\">Time: whole capture</span> \
         <button type=\"button\" id=\"window-reset\" hidden>whole capture</button>\
         <label>Interval <select id=\"interval\"><option value=\"auto\">auto</option>\
         <option value=\"0.1\">0.1 s</option><option value=\"1\">1 s</option>\
         <option value=\"10\">10 s</option><option value=\"60\">1 min</option></select></label>\
         <span id=\"interval-note\"></span></div>",
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

#[cfg(test)]
mod tests {
    use super::super::collect::{ChatLine, Event, EventKind, HealthSeries, Ship, ShipPoint};
    use super::*;
    use crate::diag::Direction;
    use crate::pipeline::summary::{ClientSummary, SessionSummary};
    use crate::report::names::ShipIdentity;

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
        // The only closing script tags are the page's own (error hook, data, map canvas,
        // main, ready).
        assert_eq!(page.matches("</script>").count(), 5);
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
        assert!(page.contains(">100</span> of 100 points</li>"));
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

    #[test]
    fn each_client_is_its_own_series_with_its_player() {
        use super::super::collect::{ClientSecond, ClientTraffic};
        let mut c = CaptureReport {
            duration: 10.0,
            ..CaptureReport::default()
        };
        for (i, name) in ["Kira", "Worf"].into_iter().enumerate() {
            let mut seconds = std::collections::BTreeMap::new();
            seconds.insert(
                i as i64 * 5,
                ClientSecond {
                    messages: [3, 4],
                    ..ClientSecond::default()
                },
            );
            c.clients.push(ClientTraffic {
                session: 0,
                client: i,
                name: name.to_string(),
                seconds,
            });
        }
        let page = render(std::slice::from_ref(&c), None);
        let sec = &page[page.find("<section id=\"players\">").unwrap()..];
        let sec = &sec[..sec.find("</section>").unwrap()];
        for name in ["Kira", "Worf"] {
            assert!(
                sec.contains(&format!("data-series=\"{name}\" data-player=\"{name}\"")),
                "{name} has no series of their own"
            );
        }
        // Nothing measured: no ACK-delay chart rather than a line at 0 ms.
        assert!(!sec.contains("player-ackdelay"));
    }
}
