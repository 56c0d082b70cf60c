//! The session choice: a capture of several sessions (games one after another, or on
//! several hosts) is shown one session at a time where mixing them makes no sense.
//! The page opens on the first session with tracks. The map always shows one session
//! (that first one while "all sessions" is chosen); the scoreboard, kill feed and ship
//! charts show the chosen one or all.

use super::battle::{player_name, players};
use super::collect::CaptureReport;
use super::svg::esc;
use std::fmt::Write as _;

/// Sessions worth choosing: those a player joined or a ship flew in.
fn battle_sessions(c: &CaptureReport) -> Vec<usize> {
    c.summary
        .sessions
        .iter()
        .filter(|s| players(s).next().is_some() || c.ships.iter().any(|x| x.session == s.index))
        .map(|s| s.index)
        .collect()
}

/// `<label>Session <select id="session">…` for the page's controls, or nothing when
/// the page shows one capture of one session (or two captures side by side, whose
/// session numbers are not the same games).
pub(super) fn choice(captures: &[CaptureReport]) -> String {
    let [c] = captures else {
        return String::new();
    };
    let list = battle_sessions(c);
    if list.len() < 2 {
        return String::new();
    }
    let first = list
        .iter()
        .copied()
        .find(|&i| {
            c.ships
                .iter()
                .any(|s| s.session == i && !s.track.is_empty())
        })
        .unwrap_or(list[0]);
    let t0 = c.stats().first_ts_ns.unwrap_or(0);
    let secs = |ns: i64| (ns - t0) as f64 / 1e9;
    let mut h = format!(
        "<label>Session <select id=\"session\" data-first=\"{first}\"><option value=\"\">all sessions (map: session {first})</option>"
    );
    for i in list {
        let Some(s) = c.summary.sessions.iter().find(|s| s.index == i) else {
            continue;
        };
        let mut names: Vec<String> = players(s).map(player_name).collect();
        let count = names.len();
        if count > 3 {
            names.truncate(3);
            names.push("…".into());
        }
        let lives = c.ships.iter().filter(|x| x.session == i).count();
        // The page opens on the first battle: one session's map, scoreboard and ships.
        let selected = if i == first { " selected" } else { "" };
        let _ = write!(
            h,
            "<option value=\"{i}\"{selected}>session {i}: {:.0}–{:.0} s, {} player{}, {lives} ship{} ({})</option>",
            secs(s.first_ts_ns),
            secs(s.last_ts_ns),
            count,
            if count == 1 { "" } else { "s" },
            if lives == 1 { "" } else { "s" },
            esc(&names.join(", "))
        );
    }
    h.push_str("</select></label>");
    h
}
