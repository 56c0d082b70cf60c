//! The Ships section: per life, subsystem condition over time with weapon fire, damage
//! and death marks; the lives beyond the chart budget are listed under their player.

use super::collect::{CaptureReport, Event, EventKind, LifeKey, Ship, MAX_HEALTH_SERIES};
use super::drawing::{note_thinned, Page};
use super::life_axes::{life_axes, life_plot};
use super::series::{decimate_indices, split_budget, thin_steps};
use super::ship_names::{
    life_player, object_name, owner_heading, owner_key, ship_colour, ship_name,
};
use super::svg::{colour, esc, num, round};
use super::table::{cells, td, thead, tn};
use rustc_hash::FxHashMap as HashMap;
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Events of one ship life within the life (an event about a ship after its death is
/// counted, not drawn), and how many lie outside it.
fn ship_events<'a>(
    by_life: &HashMap<LifeKey, Vec<&'a Event>>,
    s: &Ship,
) -> (Vec<&'a Event>, usize) {
    let mine = by_life.get(&s.key()).map_or(&[][..], |v| &v[..]);
    let within: Vec<&Event> = mine.iter().copied().filter(|e| s.alive_at(e.t)).collect();
    let outside = mine.len() - within.len();
    (within, outside)
}

pub(super) fn section(pg: &mut Page, c: &CaptureReport, cid: &str) -> String {
    let by_life = c.events_by_life();
    let list: Vec<(&Ship, Vec<&Event>, usize)> = c
        .ships
        .iter()
        .map(|s| {
            let (ev, outside) = ship_events(&by_life, s);
            (s, ev, outside)
        })
        .collect();
    let mut h = String::new();
    // Every life is counted and listed; those with nothing to draw get no chart.
    let drawn = |i: &usize| !list[*i].0.health.is_empty() || !list[*i].1.is_empty();
    if !(0..list.len()).any(|i| drawn(&i)) {
        h.push_str(
            "<p class=\"note\">No subsystem blocks (0x20) and no weapon or damage events.</p>",
        );
        if list.is_empty() {
            return h;
        }
    }
    if c.health_dropped > 0 || c.health_thinned > 0 {
        let _ = write!(
            h,
            "<p class=\"note health-budget\">Condition series: {} thinned while reading to \
             share the point budget (dips kept){}.</p>",
            c.health_thinned,
            if c.health_dropped > 0 {
                format!(
                    "; {} condition value(s) of series beyond {MAX_HEALTH_SERIES} not kept",
                    c.health_dropped
                )
            } else {
                String::new()
            }
        );
        note_thinned(
            pg,
            format!(
                "{} condition series thinned while reading",
                c.health_thinned
            ),
        );
    }
    // The busiest lives get charts; the others are listed in a table per player.
    let mut by_updates: Vec<usize> = (0..list.len()).filter(drawn).collect();
    by_updates.sort_by(|&a, &b| {
        let (x, y) = (&list[a], &list[b]);
        (y.0.updates + y.1.len() as u64)
            .cmp(&(x.0.updates + x.1.len() as u64))
            .then(x.0.born.total_cmp(&y.0.born))
    });
    // The budget holds per session: the page shows one session at a time.
    let mut per_session: BTreeMap<usize, usize> = BTreeMap::new();
    let charted: std::collections::BTreeSet<usize> = by_updates
        .iter()
        .filter(|&&i| {
            let n = per_session.entry(list[i].0.session).or_default();
            *n += 1;
            *n <= pg.budget.ship_charts
        })
        .copied()
        .collect();
    if list.len() > charted.len() {
        let _ = write!(
            h,
            "<p class=\"note\">Charts for the {} ships with the most StateUpdates and events; \
             the other {} are listed under their player.</p>",
            charted.len(),
            list.len() - charted.len()
        );
    }
    if by_updates.len() > charted.len() {
        note_thinned(
            pg,
            format!("{} of {} ship charts", charted.len(), by_updates.len()),
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
            "<div class=\"owner\" data-owner=\"{}\" data-session=\"{}\"{player}><h4 class=\"owner\">{} — {} ship{}</h4>",
            esc(&owner),
            list[members[0]].0.session,
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
    let conditions = !s.health.is_empty();
    let plot = life_plot(pg.width, s.born, s.end, conditions);
    let fire_y = 16.0;
    let damage_y = 34.0;
    let life = match s.died {
        Some(d) => format!("{:.1}–{:.1} s, died", s.born, d),
        None => format!("{:.1}–{:.1} s", s.born, s.end),
    };
    let mut h = format!(
        "<h4 data-ship=\"{}\"><span class=\"sw\" style=\"background:{}\"></span> {} — {life}, {} StateUpdate{}, {} event{}</h4>",
        esc(&ship_name(s)),
        ship_colour(c, s, n),
        esc(&ship_name(s)),
        s.updates,
        if s.updates == 1 { "" } else { "s" },
        events.len(),
        if events.len() == 1 { "" } else { "s" }
    );
    // The frame written by hand (not `open_chart`): the time axis is the life's.
    let mut svg = format!(
        "<svg class=\"chart ship{}\" data-chart=\"{id}\"{} data-time=\"{} {} {} {} {} {}\" data-series-count=\"{}\" viewBox=\"0 0 {} {}\">",
        if conditions { "" } else { " lanes" },
        life_attrs(s),
        num(plot.px(plot.x0)),
        num(plot.px(plot.x1)),
        plot.x0,
        plot.x1,
        num(plot.top),
        num(plot.height - plot.bottom),
        s.health.len(),
        num(plot.width),
        num(plot.height)
    );
    // Lines and the death sit in a group the script stretches to a time window, inside
    // an inner frame that clips them to the plot (the lanes included, and half a mark's
    // width either side); the frame keeps the chart's coordinates.
    let (cx, cw, ch) = (
        num(plot.left - 6.0),
        num(plot.plot_right() - plot.left + 12.0),
        num(plot.height - plot.bottom),
    );
    let inner = format!(
        "<svg class=\"clip\" x=\"{cx}\" y=\"0\" width=\"{cw}\" height=\"{ch}\" viewBox=\"{cx} 0 {cw} {ch}\">"
    );
    svg.push_str(&life_axes(&plot, conditions));
    let _ = write!(
        svg,
        "<text class=\"lbl\" x=\"{}\" y=\"{}\" text-anchor=\"end\">fire</text><text class=\"lbl\" x=\"{}\" y=\"{}\" text-anchor=\"end\">damage</text>",
        num(plot.left - 4.0),
        num(fire_y + 4.0),
        num(plot.left - 4.0),
        num(damage_y + 4.0)
    );
    svg.push_str(&inner);
    svg.push_str("<g class=\"fit\">");
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
    svg.push_str("</g>");
    // Event lanes: one path per lane, decimated to the mark budget. Not stretched with
    // the lines: the script redraws them from the hover data (lane last) for a window.
    let kept = decimate_indices(events.len(), pg.budget.marks);
    let (mut fire, mut damage, mut kill) = (String::new(), String::new(), String::new());
    let mut ev_pts = Vec::new();
    for &j in &kept {
        let Some(e) = events.get(j) else { continue };
        let x = plot.px(e.t);
        let y = if e.kind.is_fire() { fire_y } else { damage_y };
        let lane = match e.kind {
            k if k.is_fire() => "f",
            EventKind::Destroyed | EventKind::ShipExploding => "k",
            _ => "d",
        };
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
            e.value.map(|v| round(v, 1)),
            lane
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
    svg.push_str("</svg></svg>");
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
    if !conditions {
        // No empty grid: the lanes and one line saying why there is no condition.
        h.push_str("<p class=\"note no-conditions\">No condition plot: no decoded subsystem block for this ship (class unknown or the host sent no 0x20).</p>");
        return h + &svg + &format!("<p class=\"note\">{}</p>", esc(&summary.join(", ")));
    }
    h + &svg + &legend + &format!("<p class=\"note\">{}</p>", esc(&summary.join(", ")))
}
