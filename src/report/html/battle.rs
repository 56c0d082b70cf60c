//! What happened, first: the scoreboard (the game's own totals from 0x37 Score and 0x36
//! ScoreChange; counted from ObjectExploding events when a session has no score
//! message) and the kill feed, each kill a link that sets the page's time window
//! around it and shows the map.

use super::collect::{CaptureReport, Ship};
use super::ship_names::object_name;
use super::svg::esc;
use super::table::thead;
use super::tally::Kill;
use crate::pipeline::summary::{ClientSummary, SessionSummary};
use std::fmt::Write as _;

/// Kills listed in the feed, at most (the rest are counted).
const MAX_FEED: usize = 300;
/// Seconds of the time window before and after a kill that its link sets.
const BEFORE_KILL: f64 = 10.0;
const AFTER_KILL: f64 = 2.0;

/// One scoreboard row.
struct Line {
    name: String,
    kills: i64,
    deaths: i64,
    /// None when the game announced no score in the session.
    score: Option<i64>,
    alive: f64,
    ships: usize,
}

/// Players of a session: the clients that joined the game (a peer id or a name), not
/// server-list queries.
pub(super) fn players(s: &SessionSummary) -> impl Iterator<Item = &ClientSummary> {
    s.clients
        .iter()
        .filter(|c| c.peer_id.is_some() || c.name.is_some())
}

pub(super) fn player_name(c: &ClientSummary) -> String {
    c.name.clone().unwrap_or_else(|| match (c.peer_id, c.addr) {
        (Some(p), _) => format!("peer {p}"),
        (None, Some(a)) => a.to_string(),
        _ => format!("client {}", c.index),
    })
}

fn peer_name(s: &SessionSummary, peer: Option<i32>) -> Option<String> {
    let p = peer.filter(|p| *p != 0)?;
    Some(
        s.clients
            .iter()
            .find(|c| c.peer_id.map(i32::from) == Some(p))
            .map(player_name)
            .unwrap_or_else(|| format!("peer {p}")),
    )
}

fn lives(c: &CaptureReport, session: usize, client: usize) -> Vec<&Ship> {
    c.ships
        .iter()
        .filter(|s| s.session == session && s.client == Some(client))
        .collect()
}

/// The client a kill's victim ship belonged to.
fn victim_client(c: &CaptureReport, k: &Kill) -> Option<usize> {
    let v = k.victim_ship?;
    c.ships
        .iter()
        .find(|s| s.is(k.session, v))
        .and_then(|s| s.client)
}

fn lines(c: &CaptureReport, s: &SessionSummary) -> Vec<Line> {
    let kills: Vec<&Kill> = c.kills.iter().filter(|k| k.session == s.index).collect();
    let scored = scored(c, s.index);
    let mut out: Vec<Line> = players(s)
        .map(|cl| {
            let peer = cl.peer_id.map(i32::from);
            let mine = lives(c, s.index, cl.index);
            let (k, d, score) = if scored {
                let t = peer
                    .and_then(|p| c.scores.totals.get(&(s.index, p)))
                    .copied()
                    .unwrap_or_default();
                (t.kills as i64, t.deaths as i64, Some(t.score as i64))
            } else {
                let deaths = kills
                    .iter()
                    .filter(|k| victim_client(c, k) == Some(cl.index))
                    .count();
                let kills = kills
                    .iter()
                    .filter(|k| {
                        peer.is_some()
                            && k.killer_peer == peer
                            && victim_client(c, k) != Some(cl.index)
                    })
                    .count();
                (kills as i64, deaths as i64, None)
            };
            Line {
                name: player_name(cl),
                kills: k,
                deaths: d,
                score,
                alive: mine.iter().map(|s| (s.end - s.born).max(0.0)).sum::<f64>() + 0.0,
                ships: mine.len(),
            }
        })
        .collect();
    out.sort_by(|a, b| {
        (b.score, b.kills, -b.deaths)
            .cmp(&(a.score, a.kills, -a.deaths))
            .then(a.name.cmp(&b.name))
    });
    out
}

/// Whether the session's totals are the game's own: it announced a kill (ScoreChange),
/// or scores and no kill of any kind.
fn scored(c: &CaptureReport, session: usize) -> bool {
    let mut kills = c.kills.iter().filter(|k| k.session == session).peekable();
    let none = kills.peek().is_none();
    kills.any(|k| k.scored) || (none && c.scores.has(session))
}

fn alive_text(secs: f64) -> String {
    if secs >= 60.0 {
        format!("{} min {:02.0} s", (secs / 60.0).floor(), secs % 60.0)
    } else {
        format!("{secs:.1} s")
    }
}

pub(super) fn section(c: &CaptureReport) -> String {
    let sessions: Vec<&SessionSummary> = c
        .summary
        .sessions
        .iter()
        .filter(|s| players(s).next().is_some())
        .collect();
    if sessions.is_empty() {
        return "<h3 class=\"sb\">Scoreboard</h3><p class=\"note\">No player joined a game in this capture.</p>".into();
    }
    let many = sessions.len() > 1;
    let mut h = String::from("<h3 class=\"sb\">Scoreboard</h3>");
    for s in &sessions {
        let scored = scored(c, s.index);
        let _ = write!(h, "<div data-session=\"{}\">", s.index);
        if many {
            let _ = write!(h, "<h4>Session {}</h4>", s.index);
        }
        let _ = write!(
            h,
            "<table class=\"scoreboard sortable\" data-session=\"{}\">",
            s.index
        );
        h.push_str(&thead(&[
            "Player",
            "Kills",
            "Deaths",
            "Score",
            "Time alive",
            "Ships flown",
        ]));
        for l in lines(c, s) {
            let score = match l.score {
                Some(v) => format!("<td class=\"n\" data-v=\"{v}\">{v}</td>"),
                None => "<td class=\"n\" data-v=\"\">–</td>".to_string(),
            };
            let _ = write!(
                h,
                "<tr data-player=\"{0}\"><td>{0}</td><td class=\"n\" data-v=\"{1}\">{1}</td>\
                 <td class=\"n\" data-v=\"{2}\">{2}</td>{score}<td class=\"n\" data-v=\"{3:.3}\">{4}</td>\
                 <td class=\"n\" data-v=\"{5}\">{5}</td></tr>",
                esc(&l.name),
                l.kills,
                l.deaths,
                l.alive,
                alive_text(l.alive),
                l.ships
            );
        }
        h.push_str("</table>");
        if !scored {
            h.push_str(
                "<p class=\"note\">The game sent no score in this session: kills and deaths \
                 are counted from its ObjectExploding events, and there is no score.</p>",
            );
        }
        h.push_str("</div>");
    }
    h.push_str(&kill_feed(c, many));
    h
}

fn kill_feed(c: &CaptureReport, many: bool) -> String {
    let mut h = format!("<h3 class=\"sb\">Kill feed ({})</h3>", c.kills.len());
    if c.kills.is_empty() {
        h.push_str("<p class=\"note\">No kill: no ScoreChange and no ObjectExploding event.</p>");
        return h;
    }
    h.push_str("<div class=\"scroll\"><table class=\"kills\">");
    let mut cols = vec!["time s"];
    if many {
        cols.push("session");
    }
    cols.extend(["killer", "victim", "victim's ship", ""]);
    h.push_str(&thead(&cols));
    for k in c.kills.iter().take(MAX_FEED) {
        let Some(s) = c.summary.sessions.iter().find(|s| s.index == k.session) else {
            continue;
        };
        let killer = peer_name(s, k.killer_peer).unwrap_or_else(|| "(none)".into());
        let victim = peer_name(s, k.victim_peer)
            .or_else(|| {
                victim_client(c, k)
                    .and_then(|i| s.clients.iter().find(|x| x.index == i))
                    .map(player_name)
            })
            .unwrap_or_else(|| "?".into());
        let ship = object_name(c, k.session, k.victim_ship, None).unwrap_or_else(|| "–".into());
        let (t0, t1) = ((k.t - BEFORE_KILL).max(0.0), k.t + AFTER_KILL);
        let _ = write!(
            h,
            "<tr data-t=\"{:.3}\" data-frame=\"{}\" data-session=\"{}\"><td class=\"n\">{:.1}</td>",
            k.t, k.frame, k.session, k.t
        );
        if many {
            let _ = write!(h, "<td class=\"n\">{}</td>", k.session);
        }
        let _ = write!(
            h,
            "<td>{}</td><td>{}</td><td>{}</td><td><a class=\"kill-link\" href=\"#map\" \
             data-t0=\"{t0:.3}\" data-t1=\"{t1:.3}\" title=\"show {t0:.1}–{t1:.1} s on the map\">on the map</a></td></tr>",
            esc(&killer),
            esc(&victim),
            esc(&ship)
        );
    }
    h.push_str("</table></div>");
    let more = c.kills.len().saturating_sub(MAX_FEED) as u64 + c.kills_dropped;
    if more > 0 {
        let _ = write!(h, "<p class=\"note\">{more} more kills not listed.</p>");
    }
    h
}
