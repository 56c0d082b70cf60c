//! The map: ship tracks seen from above (x/y), grouped by player, with explosion and
//! kill marks.
//!
//! The SVG written here is complete on its own. The page's script redraws tracks and
//! marks for the page's time window and the chosen player, and the axes when zoomed,
//! from the hover data: every drawn point carries its pixel position and its time.
//! The point budget holds over all lives together, so an hour of fifteen players is
//! drawn with as many points as a short duel.

use super::chart::open_chart;
use super::collect::{CaptureReport, Event, EventKind, Ship};
use super::drawing::{note_thinned, Page};
use super::explosion_places::unplaced_explosions;
use super::series::{decimate_indices, split_budget};
use super::ship_names::{
    life_player, object_name, owner_heading, owner_key, ship_colour, ship_name,
};
use super::svg::{drawable, esc, num, points_attr, round, Plot};
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Points every non-empty life keeps before the shares of the budget (fewer when the
/// lives are many: the budget holds).
const MIN_POINTS_PER_LIFE: usize = 50;

/// The lives of one player (or one slot, or none), in the legend's order.
struct Group<'a> {
    label: String,
    /// ` data-player="…"` of the group (empty for lives of no known player).
    player: String,
    player_name: String,
    colour: &'static str,
    ships: Vec<(usize, &'a Ship)>,
}

/// One group per player of a session: the client who flew the lives, so a player is
/// one legend line whatever ids their ships had.
fn groups<'a>(c: &CaptureReport, ships: &[&'a Ship], sessions: usize) -> Vec<Group<'a>> {
    let mut by_owner: BTreeMap<(usize, u8, usize, String), Group<'a>> = BTreeMap::new();
    for (k, s) in ships.iter().enumerate() {
        let g = by_owner.entry(owner_key(s)).or_insert_with(|| Group {
            label: owner_heading(s, sessions),
            player: life_player(s),
            player_name: s.player.clone().unwrap_or_default(),
            colour: ship_colour(c, s, k),
            ships: Vec::new(),
        });
        g.ships.push((k, s));
    }
    by_owner.into_values().collect()
}

/// The box the tracks and marks span, padded, with one scale on both axes.
fn plot_for(pg: &Page, ships: &[&Ship], marks: &[&Event]) -> Plot {
    let mut bounds = [f64::MAX, f64::MAX, f64::MIN, f64::MIN];
    let mut grow = |p: [f32; 3]| {
        if drawable(p) {
            bounds[0] = bounds[0].min(p[0] as f64);
            bounds[1] = bounds[1].min(p[1] as f64);
            bounds[2] = bounds[2].max(p[0] as f64);
            bounds[3] = bounds[3].max(p[1] as f64);
        }
    };
    ships
        .iter()
        .flat_map(|s| &s.track)
        .for_each(|p| grow(p.pos));
    marks.iter().filter_map(|e| e.position).for_each(&mut grow);
    let pad = ((bounds[2] - bounds[0]).max(bounds[3] - bounds[1]) * 0.05).max(10.0);
    let (w, hgt) = (pg.width, pg.width * 0.62);
    let mut plot = Plot::new(
        w,
        hgt,
        (bounds[0] - pad, bounds[2] + pad),
        (bounds[1] - pad, bounds[3] + pad),
    );
    // Same scale on both axes: widen the shorter range.
    let (pw, ph) = (w - plot.left - plot.right, plot.plot_height());
    let k = (pw / (plot.x1 - plot.x0)).min(ph / (plot.y1 - plot.y0));
    let (cx, cy) = ((plot.x0 + plot.x1) / 2.0, (plot.y0 + plot.y1) / 2.0);
    plot.x0 = cx - pw / k / 2.0;
    plot.x1 = cx + pw / k / 2.0;
    plot.y0 = cy - ph / k / 2.0;
    plot.y1 = cy + ph / k / 2.0;
    plot
}

pub(super) fn map(pg: &mut Page, c: &CaptureReport, cid: &str) -> String {
    // Relative tracks (deltas whose baseline was never seen) have no common origin:
    // drawn on their own map, never mixed with absolute positions.
    let any_absolute = c
        .ships
        .iter()
        .any(|s| !s.track.is_empty() && !s.track_relative);
    let ships: Vec<&Ship> = c
        .ships
        .iter()
        .filter(|s| !s.track.is_empty() && s.track_relative != any_absolute)
        .collect();
    let relative = !any_absolute && !ships.is_empty();
    // Explosions and kills with a position: drawn unless the tracks are relative, and
    // explosions only where their positions are places.
    let unplaced = unplaced_explosions(c);
    let direction = |e: &Event| {
        e.kind == EventKind::Explosion && unplaced.iter().any(|u| u.session == e.session)
    };
    let placed: Vec<&Event> = c
        .events
        .iter()
        .filter(|e| e.kind.on_map() && e.position.is_some_and(drawable) && !direction(e))
        .collect();
    let marks: &[&Event] = if relative { &[] } else { &placed };
    let id = format!("{cid}-map");
    if ships.is_empty() && marks.is_empty() {
        return format!(
            "<svg class=\"chart map\" data-chart=\"{id}\" data-series-count=\"0\" viewBox=\"0 0 10 1\" style=\"display:none\"></svg>\
             <p class=\"note\">No positions in this capture (no StateUpdate with a position or a \
             delta, no explosion).</p>"
        );
    }
    let plot = plot_for(pg, &ships, marks);
    let lengths: Vec<usize> = ships.iter().map(|s| s.track.len()).collect();
    let total_points: usize = lengths.iter().sum();
    let shares = split_budget(&lengths, pg.budget.map_points, MIN_POINTS_PER_LIFE);
    let kept_points: usize = shares.iter().sum();
    if kept_points < total_points {
        note_thinned(
            pg,
            format!("map: {kept_points} of {total_points} kept track points"),
        );
    }
    let mut svg = open_chart(
        if relative {
            "chart map relative"
        } else {
            "chart map"
        },
        &format!("data-chart=\"{id}\" data-zoom=\"1\""),
        ships.len(),
        &plot,
        if relative { "x (relative)" } else { "x" },
        if relative { "y (relative)" } else { "y" },
    );
    let groups = groups(c, &ships, c.summary.sessions.len());
    let mut hover = vec![Json::Null; ships.len()];
    for (gi, g) in groups.iter().enumerate() {
        for &(k, s) in &g.ships {
            let (tag, series) = track(&plot, s, k, shares[k], gi, g);
            svg.push_str(&tag);
            hover[k] = series;
        }
    }
    let (mark_svg, mark_hover) = event_marks(pg, c, &plot, marks);
    svg.push_str(&mark_svg);
    if let Some(m) = mark_hover {
        hover.push(m);
    }
    svg.push_str("</svg>");
    let frame = [
        plot.left,
        plot.top,
        plot.width - plot.left - plot.right,
        plot.plot_height(),
        plot.x0,
        plot.x1,
        plot.y0,
        plot.y1,
    ];
    pg.data.insert(
        id.clone(),
        json!({"k": "pts", "f": ["x", "y", "z", "speed"], "s": hover,
               "frame": frame.map(|v| round(v, 3))}),
    );
    let mut out = svg;
    let kinds = MarkKinds {
        explosions: marks.iter().any(|e| e.kind == EventKind::Explosion),
        kills: marks.iter().any(|e| e.kind != EventKind::Explosion),
    };
    out.push_str(&legend(&id, &groups, &shares, kinds));
    out.push_str(&slider(&id, pg.t_max));
    if relative {
        out.push_str(
            "<p class=\"note relative\">No absolute position was sent: each track is drawn \
             from its deltas, relative to an unknown origin (the baseline position that was \
             never seen). Shapes and distances are right; where tracks sit against each other \
             is not known.</p>",
        );
        if !placed.is_empty() {
            let _ = write!(
                out,
                "<p class=\"note\">{} explosion or kill mark(s) with absolute positions \
                 are not drawn against these relative tracks.</p>",
                placed.len()
            );
        }
    }
    for u in &unplaced {
        let _ = write!(
            out,
            "<p class=\"note unplaced\">{} explosion(s) of session {} are not drawn: every \
             explosion position of that session lies within about 1 unit of the origin \
             (a direction, not a place) while its ships move over {:.0} units (see \
             Problems).</p>",
            u.count, u.session, u.ship_span
        );
    }
    // The page shows one session on the map: say so for a session without a track.
    if c.summary.sessions.len() > 1 {
        for se in &c.summary.sessions {
            if !ships.iter().any(|s| s.session == se.index) {
                let _ = write!(
                    out,
                    "<p class=\"note map-note\" data-session=\"{0}\">No track in session {0}.</p>",
                    se.index
                );
            }
        }
    }
    let absent = c.ships.iter().filter(|s| s.track.is_empty()).count();
    if absent > 0 {
        let _ = write!(
            out,
            "<p class=\"note\">{absent} object(s) with StateUpdates but no position or delta \
             are not drawn.</p>"
        );
    }
    let unplaced = c.ships.len() - absent - ships.len();
    if unplaced > 0 {
        let _ = write!(
            out,
            "<p class=\"note\">{unplaced} object(s) known only from deltas without a baseline \
             are not drawn among absolute positions.</p>"
        );
    }
    out
}

/// One life's track: a group holding its polyline and its last-position dot, tagged
/// with its legend group and player for the script's toggles.
fn track(plot: &Plot, s: &Ship, k: usize, keep: usize, gi: usize, g: &Group) -> (String, Json) {
    let col = g.colour;
    let pts: Vec<_> = decimate_indices(s.track.len(), keep)
        .into_iter()
        .filter_map(|j| s.track.get(j))
        .filter(|p| drawable(p.pos))
        .collect();
    let name = ship_name(s);
    let player = &g.player;
    let mut tag = format!(
        "<g data-k=\"{k}\" data-group=\"{gi}\" data-session=\"{}\"{player}><polyline data-series=\"{}\" stroke=\"{col}\" points=\"{}\"/>",
        s.session,
        esc(&name),
        points_attr(
            pts.iter()
                .map(|p| (plot.px(p.pos[0] as f64), plot.py(p.pos[1] as f64)))
        )
    );
    if let Some(last) = pts.last() {
        let _ = write!(
            tag,
            "<circle class=\"mark\" cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"{col}\"/>",
            num(plot.px(last.pos[0] as f64)),
            num(plot.py(last.pos[1] as f64))
        );
    }
    tag.push_str("</g>");
    let p: Vec<Json> = pts
        .iter()
        .map(|p| {
            json!([
                round(plot.px(p.pos[0] as f64), 1),
                round(plot.py(p.pos[1] as f64), 1),
                round(p.t, 2),
                round(p.pos[0] as f64, 1),
                round(p.pos[1] as f64, 1),
                round(p.pos[2] as f64, 1),
                p.speed.map(|v| round(v as f64, 2))
            ])
        })
        .collect();
    (
        tag,
        json!({"n": name, "p": p, "g": gi, "pl": g.player_name, "c": col, "se": s.session}),
    )
}

/// Explosions and kills: one thin path per kind, decimated to the mark budget.
fn event_marks(
    pg: &mut Page,
    c: &CaptureReport,
    plot: &Plot,
    marks: &[&Event],
) -> (String, Option<Json>) {
    let kept = decimate_indices(marks.len(), pg.budget.marks);
    if kept.len() < marks.len() {
        note_thinned(
            pg,
            format!("map: {} of {} explosion marks", kept.len(), marks.len()),
        );
    }
    let (mut explosions, mut kills, mut pts) = (String::new(), String::new(), Vec::new());
    for e in kept.iter().filter_map(|&j| marks.get(j)) {
        let Some(p) = e.position else { continue };
        let (x, y) = (plot.px(p[0] as f64), plot.py(p[1] as f64));
        if e.kind == EventKind::Explosion {
            let _ = write!(
                explosions,
                "M{},{}m-3,0a3,3 0 1,0 6,0a3,3 0 1,0 -6,0",
                num(x),
                num(y)
            );
        } else {
            let _ = write!(kills, "M{},{}m-4,-4l8,8m0,-8l-8,8", num(x), num(y));
        }
        pts.push(json!([
            round(x, 1),
            round(y, 1),
            round(e.t, 2),
            e.kind.name(),
            object_name(c, e.session, e.ship, e.object),
            e.value.map(|v| round(v, 1)),
            e.session
        ]));
    }
    let mut svg = String::new();
    if !explosions.is_empty() {
        let _ = write!(svg, "<path class=\"mark\" data-marks=\"explosion\" d=\"{explosions}\" fill=\"none\" stroke=\"#e09a00\" stroke-width=\"1.2\"/>");
    }
    if !kills.is_empty() {
        let _ = write!(svg, "<path class=\"mark\" data-marks=\"kill\" d=\"{kills}\" fill=\"none\" stroke=\"#d62728\" stroke-width=\"1.6\"/>");
    }
    let hover = (!pts.is_empty())
        .then(|| json!({"n": "event", "p": pts, "f": ["kind", "object", "damage"], "m": 1}));
    (svg, hover)
}

/// The legend: one line per player with a toggle and the count of lives, the lives
/// folded under it; then the mark kinds.
/// Which kinds of event mark the map draws: the legend explains only those.
#[derive(Debug, Clone, Copy)]
struct MarkKinds {
    explosions: bool,
    kills: bool,
}

fn legend(id: &str, groups: &[Group], shares: &[usize], marks: MarkKinds) -> String {
    let mut h = format!("<div class=\"legend map-legend\" data-map=\"{id}\">");
    for (gi, g) in groups.iter().enumerate() {
        let player = &g.player;
        let points: usize = g.ships.iter().map(|(k, _)| shares[*k]).sum();
        let lives = g.ships.len();
        let _ = write!(
            h,
            "<div class=\"group\" data-group=\"{gi}\" data-session=\"{}\"{player}><label><input type=\"checkbox\" checked \
             data-toggle-group=\"{gi}\"><span class=\"sw\" style=\"background:{}\"></span>{} · {lives} \
             {}</label><details><summary><span class=\"win-points\">{points}</span> points drawn</summary><ul>",
            g.ships.first().map_or(0, |(_, s)| s.session),
            g.colour,
            esc(&g.label),
            if lives == 1 { "ship" } else { "ships" }
        );
        for (k, s) in &g.ships {
            let _ = write!(
                h,
                "<li data-k=\"{k}\">{} · {:.1}–{:.1} s{} · <span class=\"win-points\">{}</span> of {} points</li>",
                esc(&ship_name(s)),
                s.born,
                s.end,
                if s.died.is_some() { " (destroyed)" } else { "" },
                shares[*k].min(s.track.len()),
                s.track.len()
            );
        }
        h.push_str("</ul></details></div>");
    }
    if marks.explosions || marks.kills {
        h.push_str("<div class=\"group\">");
        if marks.explosions {
            h.push_str("<span class=\"sw ring\"></span>explosion (0x29) ");
        }
        if marks.kills {
            h.push_str("<span class=\"sw cross\"></span>ship destroyed / exploding");
        }
        h.push_str("</div>");
    }
    h.push_str("</div>");
    h
}

/// The map's time slider: the two ends of the page's time window.
fn slider(id: &str, t_max: f64) -> String {
    let max = (t_max.max(1.0) * 10.0).ceil() / 10.0;
    format!(
        "<div class=\"slider\" data-map=\"{id}\"><label>from <input type=\"range\" min=\"0\" \
         max=\"{max}\" step=\"0.1\" value=\"0\" data-edge=\"0\"></label><label>to <input \
         type=\"range\" min=\"0\" max=\"{max}\" step=\"0.1\" value=\"{max}\" data-edge=\"1\"></label>\
         <span class=\"win-text\">whole capture, 0–{max} s</span></div>"
    )
}
