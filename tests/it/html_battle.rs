//! The page's first screen in a browser: the scoreboard, the kill feed and the
//! connection-health table, each compared with a computation made here from
//! `bcwire decode --format jsonl` (the game's Score / ScoreChange / ObjectExploding
//! messages and every datagram's time, length and transport flags), never from the
//! report's own code. Also: ships named after the client that created them, one map
//! legend line per player, and a player choice that leaves only that player's lives.

use crate::common;
use crate::html_browser::{assert_page_facts, capture, chromium, generated_page, probe};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// One client's figures from the datagrams.
#[derive(Default)]
struct Flow {
    name: Option<String>,
    addr: Option<String>,
    datagrams: [u64; 2],
    /// Datagrams of GameSpy queries (`"kind": "gamespy"`), both ways.
    gamespy: u64,
    bytes: [u64; 2],
    reliable: u64,
    retransmissions: u64,
    delays_ms: Vec<f64>,
    times: [Vec<f64>; 2],
}

/// What the JSON Lines of a capture say.
#[derive(Default)]
struct Oracle {
    /// (session, peer id) → player name, from the client's own datagrams.
    peers: BTreeMap<(u64, i64), String>,
    /// (session, peer id) → (kills, deaths, score), the last announced.
    totals: BTreeMap<(u64, i64), (i64, i64, i64)>,
    scored_sessions: BTreeSet<u64>,
    /// Kills from ScoreChange, once each: (time, session, killer peer, victim peer).
    kills: Vec<(f64, u64, i64, i64)>,
    /// ObjectExploding: (time, session, dying object).
    exploding: Vec<(f64, u64, u64)>,
    /// Creations: (time, session, object id, class).
    created: Vec<(f64, u64, u64, String)>,
    flows: BTreeMap<(u64, u64), Flow>,
    t0: Option<f64>,
}

fn int(v: &Value, k: &str) -> i64 {
    v[k].as_i64()
        .unwrap_or_else(|| panic!("no integer {k} in {v}"))
}

fn oracle(cap: &Path) -> Oracle {
    let out = common::bcwire(&["decode", "--format", "jsonl", &cap.to_string_lossy()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut o = Oracle::default();
    let mut seen_kills = BTreeSet::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let r: Value = serde_json::from_str(line).unwrap();
        if r["type"] != "packet" || r["session"].is_null() {
            continue;
        }
        let t0 = *o.t0.get_or_insert(r["time"].as_f64().unwrap());
        let t = r["time"].as_f64().unwrap() - t0;
        let (session, client) = (int(&r, "session") as u64, int(&r, "client") as u64);
        let c2s = r["direction"] == "c2s";
        let d = usize::from(!c2s);
        let f = o.flows.entry((session, client)).or_default();
        f.datagrams[d] += 1;
        f.gamespy += u64::from(r["kind"] == "gamespy");
        f.bytes[d] += int(&r, "udp_length") as u64;
        f.times[d].push(r["time"].as_f64().unwrap());
        if c2s {
            f.addr.get_or_insert(r["src"].as_str().unwrap().to_string());
            if let (Some(name), Some(peer)) = (r["client_name"].as_str(), r["peer_id"].as_i64()) {
                f.name = Some(name.to_string());
                o.peers.insert((session, peer), name.to_string());
            }
        }
        for m in r["messages"].as_array().into_iter().flatten() {
            f.reliable += u64::from(m["reliable"] == true);
            f.retransmissions += u64::from(m["retransmission"] == true);
            if let Some(delay) = m["ack"]["delay"].as_f64() {
                f.delays_ms.push(delay.max(0.0) * 1e3);
            }
            if m["retransmission"] == true {
                continue;
            }
            let x = &m["fields"];
            match m["name"].as_str() {
                Some("Score") => {
                    o.scored_sessions.insert(session);
                    o.totals.insert(
                        (session, int(x, "peer_id")),
                        (int(x, "kills"), int(x, "deaths"), int(x, "score")),
                    );
                }
                Some("ScoreChange") => {
                    o.scored_sessions.insert(session);
                    let (killer, victim) = (int(x, "killer_peer_id"), int(x, "victim_peer_id"));
                    if killer != 0 {
                        let e = o.totals.entry((session, killer)).or_default();
                        e.0 = int(x, "killer_kills");
                        e.2 = int(x, "killer_score");
                    }
                    o.totals.entry((session, victim)).or_default().1 = int(x, "victim_deaths");
                    // The host sends the same change to every client: one kill.
                    let key = (session, killer, victim, int(x, "victim_deaths"));
                    if seen_kills.insert(key) {
                        o.kills.push((t, session, killer, victim));
                    }
                }
                Some("PythonEvent") if x["class_id"] == 0x8129 => {
                    o.exploding.push((t, session, int(x, "destination") as u64));
                }
                Some("ObjCreateTeam") => {
                    o.created.push((
                        t,
                        session,
                        int(x, "object_id") as u64,
                        x["species_name"].as_str().unwrap_or("").to_string(),
                    ));
                }
                _ => {}
            }
        }
    }
    o
}

fn nearest_rank(v: &[f64], q: f64) -> Option<f64> {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len().max(1));
    v.get(rank - 1).copied()
}

fn num(v: &Value) -> Option<f64> {
    v.as_str()
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
}

fn close(got: Option<f64>, want: Option<f64>, tol: f64, what: &str) {
    match (got, want) {
        (Some(g), Some(w)) => assert!((g - w).abs() <= tol, "{what}: page {g}, expected {w}"),
        (g, w) => assert_eq!(
            g.is_some(),
            w.is_some(),
            "{what}: page {g:?}, expected {w:?}"
        ),
    }
}

/// Scoreboard and kill feed against the JSON Lines. Catches totals that are not the
/// game's own (counted kills where a ScoreChange says otherwise), a kill counted once
/// per client copy, and a victim's ship named after another player.
fn check_battle(p: &Value, o: &Oracle) {
    assert!(
        p["firstSection"]
            .as_str()
            .unwrap()
            .starts_with("Scoreboard"),
        "the page does not open with the scoreboard: {}",
        p["firstSection"]
    );
    assert_eq!(
        p["scoreboardHeading"], true,
        "no table under a Scoreboard heading"
    );
    assert!(
        p["scoreboardTop"].as_f64().unwrap() < 900.0,
        "scoreboard below the first screen: {}",
        p["scoreboardTop"]
    );
    let sessions: BTreeSet<u64> = o.peers.keys().map(|k| k.0).collect();
    let boards = p["scoreboards"].as_array().unwrap();
    assert_eq!(boards.len(), sessions.len(), "{boards:?}");
    for b in boards {
        let s = b["session"].as_u64().unwrap();
        assert_eq!(
            b["head"].as_array().unwrap()[..4],
            ["Player", "Kills", "Deaths", "Score"].map(Value::from)
        );
        assert!(
            o.scored_sessions.contains(&s),
            "no score message in session {s}"
        );
        let got: BTreeSet<(String, i64, i64, i64)> = b["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let n = |i: usize| num(&r[i]).unwrap() as i64;
                (r[0].as_str().unwrap().to_string(), n(1), n(2), n(3))
            })
            .collect();
        let want: BTreeSet<(String, i64, i64, i64)> = o
            .peers
            .range((s, i64::MIN)..=(s, i64::MAX))
            .map(|(k, name)| {
                let (k, d, sc) = o.totals.get(k).copied().unwrap_or_default();
                (name.clone(), k, d, sc)
            })
            .collect();
        assert_eq!(got, want, "scoreboard of session {s}");
    }
    let feed = p["kills"].as_array().unwrap();
    assert_eq!(
        feed.len(),
        o.kills.len(),
        "kill feed rows; the first: {:?}",
        &feed[..feed.len().min(3)]
    );
    let many = sessions.len() > 1;
    for (row, &(t, session, killer, victim)) in feed.iter().zip(&o.kills) {
        let cells: Vec<&str> = row["cells"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        let cells = if many {
            [&cells[..1], &cells[2..]].concat()
        } else {
            cells
        };
        close(row["t"].as_f64(), Some(t), 0.001, "kill time");
        let name = |peer: i64| o.peers.get(&(session, peer)).cloned().unwrap_or_default();
        assert_eq!(cells[1], name(killer), "killer at {t}");
        assert_eq!(cells[2], name(victim), "victim at {t}");
        // The ship that blew up: the ObjectExploding of the same moment names it.
        let boom = o
            .exploding
            .iter()
            .filter(|e| e.1 == session && (e.0 - t).abs() <= 3.0)
            .min_by(|a, b| (a.0 - t).abs().total_cmp(&(b.0 - t).abs()));
        if let Some(&(te, _, id)) = boom {
            let class = o
                .created
                .iter()
                .rfind(|c| c.1 == session && c.2 == id && c.0 <= te)
                .map(|c| c.3.clone())
                .unwrap_or_default();
            let ship = cells[3];
            // The class as the page writes it ("Kessok Heavy") against the wire's
            // species name ("KessokHeavy").
            let compact: String = ship
                .chars()
                .filter(|c| !c.is_whitespace())
                .collect::<String>()
                .to_lowercase();
            assert!(
                ship.contains(&format!("0x{id:08X}")) && compact.contains(&class.to_lowercase()),
                "victim's ship {ship}, expected {class} 0x{id:08X}"
            );
            assert!(
                ship.contains(&format!("({}, slot", name(victim))),
                "the victim's ship {ship} is not named after the victim {}",
                name(victim)
            );
        }
    }
    if let Some(first) = o.kills.first() {
        let w: Vec<f64> = p["killWindow"]
            .as_str()
            .unwrap()
            .split(' ')
            .map(|v| v.parse().unwrap())
            .collect();
        assert!(
            w[0] <= first.0 && first.0 <= w[1],
            "window {w:?} misses the kill at {}",
            first.0
        );
        assert_eq!(p["killLink"][2], "#map");
    }
}

/// The health table against the datagrams. Catches a column computed from the wrong
/// direction or client, a percentage of the wrong base, and worst marks on a value
/// that is not the column's largest.
fn check_health(p: &Value, o: &Oracle, cap: &Path) {
    let flows = common::bcwire_json(&["flows", "--format", "json", &cap.to_string_lossy()]);
    let h = &p["health"];
    let head: Vec<&str> = h["head"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let col = |t: &str| {
        head.iter()
            .position(|h| *h == t)
            .unwrap_or_else(|| panic!("no column {t}"))
    };
    let rows = h["rows"].as_array().unwrap();
    // A port whose every datagram is a GameSpy query only asked the server's status: it
    // is no player and has no row. Catches the b2 page's rows for status probes.
    let players: Vec<_> = o
        .flows
        .iter()
        .filter(|(_, f)| f.gamespy < f.datagrams.iter().sum())
        .collect();
    assert_eq!(rows.len(), players.len(), "one row per client that played");
    let session_col = head.iter().position(|h| *h == "session");
    for ((session, client), f) in players {
        let label = f.name.clone().or(f.addr.clone()).unwrap();
        let row = rows
            .iter()
            .find(|r| {
                r[0] == label.as_str()
                    && session_col.is_none_or(|i| num(&r[i]) == Some(*session as f64))
            })
            .unwrap_or_else(|| panic!("no row for {label} in session {session}"));
        let v = |t: &str| num(&row[col(t)]);
        let what = |t: &str| format!("{label} {t}");
        close(
            v("datagrams c→h"),
            Some(f.datagrams[0] as f64),
            0.0,
            &what("datagrams c→h"),
        );
        close(
            v("datagrams h→c"),
            Some(f.datagrams[1] as f64),
            0.0,
            &what("datagrams h→c"),
        );
        close(
            v("bytes c→h"),
            Some(f.bytes[0] as f64),
            0.0,
            &what("bytes c→h"),
        );
        close(
            v("bytes h→c"),
            Some(f.bytes[1] as f64),
            0.0,
            &what("bytes h→c"),
        );
        let retx = (f.reliable > 0).then(|| f.retransmissions as f64 * 100.0 / f.reliable as f64);
        close(v("retransmitted %"), retx, 1e-9, &what("retransmitted %"));
        close(
            v("ACK delay p50 ms"),
            nearest_rank(&f.delays_ms, 0.5),
            0.002,
            &what("p50"),
        );
        close(
            v("ACK delay p95 ms"),
            nearest_rank(&f.delays_ms, 0.95),
            0.002,
            &what("p95"),
        );
        let gaps: Vec<f64> = f.times[0].windows(2).map(|w| w[1] - w[0]).collect();
        let changes: Vec<f64> = gaps.windows(2).map(|g| (g[1] - g[0]).abs()).collect();
        let jitter =
            (!changes.is_empty()).then(|| changes.iter().sum::<f64>() / changes.len() as f64 * 1e3);
        close(v("jitter ms"), jitter, 0.001, &what("jitter"));
        let silence = f
            .times
            .iter()
            .flat_map(|t| t.windows(2).map(|w| w[1] - w[0]))
            .fold(None, |m: Option<f64>, g| Some(m.map_or(g, |m| m.max(g))))
            .filter(|g| *g > 0.0);
        close(
            v("longest silence s"),
            silence,
            1e-5,
            &what("longest silence"),
        );
        // Unacknowledged messages as `bcwire flows` counts them.
        let fc = flows["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["index"] == *session)
            .and_then(|s| {
                s["clients"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|c| c["index"] == *client)
            })
            .unwrap();
        let unacked =
            fc["c2s"]["unacked"].as_f64().unwrap() + fc["s2c"]["unacked"].as_f64().unwrap();
        close(
            v("unacknowledged"),
            Some(unacked),
            0.0,
            &what("unacknowledged"),
        );
    }
    // The worst of each health column is marked, and only it.
    for t in [
        "retransmitted %",
        "unacknowledged",
        "ACK delay p50 ms",
        "ACK delay p95 ms",
        "jitter ms",
        "longest silence s",
    ] {
        let i = col(t);
        let max = rows.iter().filter_map(|r| num(&r[i])).fold(0.0, f64::max);
        let marked: Vec<&Value> = h["worst"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|w| w[1] == i)
            .collect();
        let at_max = rows
            .iter()
            .filter(|r| max > 0.0 && num(&r[i]) == Some(max))
            .count();
        assert_eq!(
            marked.len(),
            at_max,
            "worst marks of {t}: {marked:?}, largest {max}"
        );
    }
    // Sorting by a column orders the rows by its values.
    let col_of = |k: &str| -> Vec<f64> {
        p[k].as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_f64)
            .collect()
    };
    let (desc, asc) = (col_of("sortedDesc"), col_of("sortedAsc"));
    assert!(
        desc.windows(2).all(|w| w[0] >= w[1]),
        "not sorted down: {desc:?}"
    );
    assert!(
        asc.windows(2).all(|w| w[0] <= w[1]),
        "not sorted up: {asc:?}"
    );
}

/// Ships tied to their players: one legend line per player (no separate "slot N"
/// line for lives whose ids lie in a player's range or another's), and a player choice
/// that shows that player's lives only.
fn check_owners(p: &Value, o: &Oracle) {
    let legend = p["legend"].as_array().unwrap();
    let names: BTreeSet<&str> = o.peers.values().map(String::as_str).collect();
    for g in legend {
        let player = g["player"].as_str().unwrap_or("");
        assert!(
            names.contains(player),
            "legend line {} belongs to no player",
            g["label"]
        );
    }
    let mut lines: HashMap<&str, usize> = HashMap::new();
    for g in legend {
        *lines.entry(g["player"].as_str().unwrap()).or_default() += 1;
    }
    let sessions_of: BTreeMap<&str, usize> = names
        .iter()
        .map(|n| (*n, o.peers.iter().filter(|(_, v)| v == n).count()))
        .collect();
    for (n, k) in lines {
        assert!(k <= sessions_of[n], "{n} has {k} legend lines: {legend:?}");
    }
    let who = p["chosen"].as_str().unwrap();
    for shown in ["mapLivesShown", "legendShown"] {
        let v = p[shown].as_array().unwrap();
        assert!(
            v.iter().all(|x| x == who),
            "{shown} with {who} chosen: {v:?}"
        );
    }
}

fn run(cap: &Path, name: &str) -> Option<(Value, Oracle)> {
    let bin = chromium()?;
    let p = probe(&bin, &[cap.to_path_buf()], name, 1400);
    assert_eq!(p["errors"], 0, "script errors: {p}");
    assert_eq!(p["resources"], serde_json::json!([]), "network requests");
    Some((p, oracle(cap)))
}

#[test]
fn a_synthetic_battle_opens_with_its_scoreboard_kills_and_health() {
    let cap: PathBuf = generated_page("battle_s5", 5, 4, 11);
    let Some((p, o)) = run(&cap, "battle_s5") else {
        return;
    };
    assert!(o.kills.len() >= 3, "a battle with {} kills", o.kills.len());
    assert_page_facts(&p);
    check_battle(&p, &o);
    check_health(&p, &o, &cap);
    check_owners(&p, &o);
}

#[test]
fn the_shipped_sample_opens_with_its_scoreboard_kills_and_health() {
    let cap = common::shipped_capture("sample.pcapng");
    let Some((p, o)) = run(&cap, "battle_sample") else {
        return;
    };
    assert_eq!(o.kills.len(), 1);
    check_battle(&p, &o);
    check_health(&p, &o, &cap);
    check_owners(&p, &o);
}

/// b2 has three sessions, no kill, and a player (slot 2) whose ship id lies in slot 1's
/// range and whose player object has StateUpdates but no creation: both are theirs.
#[test]
fn the_valentines_replay_ties_ships_to_players_in_each_session() {
    let Some(cap) = capture("b2_valentines_replay") else {
        eprintln!("note: shared captures not found (set BCWIRE_SHARED); test skipped");
        return;
    };
    let Some((p, o)) = run(&cap, "battle_b2") else {
        return;
    };
    assert!(o.kills.is_empty());
    check_battle(&p, &o);
    check_health(&p, &o, &cap);
    check_owners(&p, &o);
    let sep: Vec<&Value> = p["legend"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["player"] == "Sep")
        .collect();
    assert_eq!(sep.len(), 1, "{}", p["legend"]);
    assert!(
        sep[0]["label"].as_str().unwrap().contains("2 ships"),
        "{sep:?}"
    );
}
