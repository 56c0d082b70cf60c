//! The report page in a real browser: Debian's headless Chromium loads it, runs its
//! script without errors, keeps the charts and series, and takes a screenshot.
//!
//! Needs `chromium` on PATH (Debian: `apt-get install -y chromium`); without it the
//! tests print a note and pass. Needs the shared captures (`BCWIRE_SHARED`,
//! `<crate>/../shared` or `/work/shared`), skipped likewise when absent.

use crate::common;

use bcwire::pipeline::Config;
use bcwire::report::html::{self, collect::ChatLine};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

pub(crate) fn capture(name: &str) -> Option<PathBuf> {
    common::shared_file(&format!("captures/openbc/{name}/{name}.pcapng"))
}

/// The chromium binary, or None (with a note) when it is not installed; under
/// `BCWIRE_REQUIRE_BROWSER` (set by `.ci/run`) its absence fails the test.
pub(crate) fn chromium() -> Option<PathBuf> {
    let out = Command::new("which").arg("chromium").output().ok();
    let path = out
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|p| !p.is_empty());
    common::tool_available(
        "browser",
        path.is_some(),
        "Debian: apt-get install -y chromium",
    )
    .then(|| PathBuf::from(path.unwrap_or_default()))
}

pub(crate) fn tmp(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name)
}

/// `bcwire report CAPTURE -o <tmp>/PAGE` through the binary; the page's text.
pub(crate) fn report_page(capture: &Path, page: &str) -> String {
    let path = tmp(page);
    let out = crate::common::bcwire(&[
        "-q",
        "report",
        &capture.to_string_lossy(),
        "-o",
        &path.to_string_lossy(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read_to_string(path).unwrap()
}

/// Run headless Chromium on a local file with a fresh profile; `mode` is `--dump-dom`
/// or `--screenshot=…`. Bounded by `timeout` so a hung browser fails the test.
fn run_chromium(bin: &Path, page: &Path, mode: &str) -> String {
    run_chromium_at(bin, page, mode, 1280)
}

/// As [`run_chromium`], in a window `width` pixels wide.
pub(crate) fn run_chromium_at(bin: &Path, page: &Path, mode: &str, width: u32) -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    let profile = tmp(&format!(
        "chromium-profile-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ));
    let _ = std::fs::remove_dir_all(&profile);
    std::fs::create_dir_all(&profile).unwrap();
    let out = Command::new("timeout")
        .arg("120")
        .arg(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
            "--virtual-time-budget=3000",
        ])
        .arg(format!("--window-size={width},2600"))
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(mode)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("run chromium");
    let _ = std::fs::remove_dir_all(&profile);
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The `<body …>` start tag of a DOM dump.
fn body_tag(dom: &str) -> &str {
    let at = dom.find("<body").expect("a body");
    &dom[at..at + dom[at..].find('>').unwrap_or(0)]
}

fn errors_text(dom: &str) -> String {
    dom.split("id=\"bcw-errors\"")
        .nth(1)
        .and_then(|s| s.split('>').nth(1))
        .and_then(|s| s.split("</pre").next())
        .unwrap_or("")
        .to_string()
}

fn series_counts(dom: &str, prefix: &str) -> Vec<usize> {
    dom.split(&format!("data-chart=\"{prefix}"))
        .skip(1)
        .filter_map(|s| {
            let tag = s.split('>').next()?;
            tag.split("data-series-count=\"")
                .nth(1)?
                .split('"')
                .next()?
                .parse()
                .ok()
        })
        .collect()
}

#[test]
fn the_report_loads_without_errors_and_keeps_its_charts() {
    let Some(bin) = chromium() else { return };
    let Some(cap) = capture("b2_valentines_replay") else {
        eprintln!("note: shared captures not found (set BCWIRE_SHARED); test skipped");
        return;
    };
    let r = html::collect_file(&cap.to_string_lossy(), &Config::default(), false).unwrap();
    let page_html = html::render(std::slice::from_ref(&r), None);
    let page = tmp("browser_b2.html");
    std::fs::write(&page, &page_html).unwrap();
    // A copy that hovers over the host's rate chart and keeps the read-out.
    let hover = page_html.replace(
        "</body>",
        "<script>(function(){var s=document.querySelector('svg[data-chart=\"a-rates-s2c\"]');\
         var r=s.getBoundingClientRect();s.dispatchEvent(new MouseEvent('mousemove',\
         {clientX:r.left+r.width*0.3,clientY:r.top+r.height*0.5,bubbles:true}));\
         document.body.dataset.hover=document.getElementById('tip').textContent;})();</script></body>",
    );
    let hover_page = tmp("browser_b2_hover.html");
    std::fs::write(&hover_page, hover).unwrap();
    let dom = run_chromium(&bin, &hover_page, "--dump-dom");
    let body = body_tag(&dom);
    assert!(
        body.contains("data-errors=\"0\""),
        "{body} {}",
        errors_text(&dom)
    );
    assert!(
        body.contains("data-hover=\"t ") && body.contains("msg/s"),
        "no hover read-out: {body}"
    );

    let dom = run_chromium(&bin, &page, "--dump-dom");
    let body = body_tag(&dom);
    assert!(
        body.contains("data-ready=\"1\""),
        "script did not finish: {body}"
    );
    assert!(
        body.contains("data-errors=\"0\""),
        "JS errors: {body} {}",
        errors_text(&dom)
    );
    // The browser kept every chart with the series the capture calls for.
    let rates = series_counts(&dom, "a-rates-");
    let want: Vec<usize> = r.rates.iter().map(|m| m.len().min(11)).collect();
    assert_eq!(rates, want);
    let ships = series_counts(&dom, "a-ship-");
    let want: Vec<usize> = r
        .ships
        .iter()
        .filter(|s| !s.health.is_empty())
        .map(|s| s.health.len())
        .collect();
    assert_eq!(ships.iter().sum::<usize>(), want.iter().sum::<usize>());
    // No absolute position in it: the map draws the tracks its deltas give, relative to
    // an unknown origin, and leaves the absolutely placed explosion off them.
    let relative = r
        .ships
        .iter()
        .filter(|s| !s.track.is_empty() && s.track_relative)
        .count();
    assert!(relative > 0);
    assert_eq!(series_counts(&dom, "a-map"), vec![relative]);
    assert!(dom.contains("class=\"note relative\""));
    assert_eq!(dom.matches("data-marks=\"explosion\"").count(), 0);
    let placed = r
        .events
        .iter()
        .filter(|e| e.kind.on_map() && e.position.is_some())
        .count();
    assert!(placed > 0);
    assert!(dom.contains(&format!(
        "{placed} explosion or kill mark(s) with absolute positions"
    )));

    let shot = tmp("report_b2.png");
    let _ = std::fs::remove_file(&shot);
    run_chromium(&bin, &page, &format!("--screenshot={}", shot.display()));
    let png = std::fs::read(&shot).expect("screenshot written");
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
    assert!(png.len() > 20_000, "screenshot of {} bytes", png.len());
    eprintln!("screenshot: {}", shot.display());
}

#[test]
fn hostile_names_and_chat_stay_text_in_the_browser() {
    let Some(bin) = chromium() else { return };
    let Some(cap) = capture("b2_valentines_replay") else {
        eprintln!("note: shared captures not found (set BCWIRE_SHARED); test skipped");
        return;
    };
    let hostile = "<img src=x onerror=\"document.body.dataset.pwned='1'\"><script>document.body.dataset.pwned='2'</script>";
    let mut r = html::collect_file(&cap.to_string_lossy(), &Config::default(), false).unwrap();
    for s in &mut r.summary.sessions {
        for c in &mut s.clients {
            c.name = Some(format!("{hostile}{}", c.index));
        }
    }
    for s in &mut r.ships {
        s.label = format!("Galaxy ({hostile})");
        for h in &mut s.health {
            h.name = hostile.to_string();
        }
    }
    r.chat.push(ChatLine {
        t: 1.0,
        session: 0,
        sender: hostile.into(),
        team: true,
        text: hostile.into(),
    });
    let page = tmp("browser_hostile.html");
    std::fs::write(&page, html::render(std::slice::from_ref(&r), None)).unwrap();
    let dom = run_chromium(&bin, &page, "--dump-dom");
    let body = body_tag(&dom);
    assert!(
        body.contains("data-ready=\"1\"") && body.contains("data-errors=\"0\""),
        "{body}"
    );
    assert!(!body.contains("pwned"), "injected markup ran: {body}");
    assert!(!dom.contains("<img"), "injected element in the DOM");
    // The text itself is shown.
    assert!(dom.contains("&lt;img src=x onerror="));
}

#[test]
fn script_errors_are_reported_by_the_page() {
    // The check above must be able to fail: a page whose script throws says so.
    let Some(bin) = chromium() else { return };
    let r = html::CaptureReport::default();
    let good = html::render(std::slice::from_ref(&r), None);
    let broken = good.replacen(
        "<script type=\"application/json\"",
        "<script>throw new Error(\"boom from the test\")</script><script type=\"application/json\"",
        1,
    );
    assert_ne!(good, broken);
    let page = tmp("browser_broken.html");
    std::fs::write(&page, broken).unwrap();
    let dom = run_chromium(&bin, &page, "--dump-dom");
    assert!(
        body_tag(&dom).contains("data-errors=\"1\""),
        "{}",
        body_tag(&dom)
    );
    assert!(errors_text(&dom).contains("boom from the test"));
}

/// A synthetic session written and reported through the binary: `players` clients,
/// `minutes` long, with some loss so that there are retransmissions.
pub(crate) fn generated_page(name: &str, players: u32, minutes: u32, seed: u32) -> PathBuf {
    let cap = tmp(&format!("{name}.pcapng"));
    let status = Command::new(env!("CARGO_BIN_EXE_bcwire"))
        .args(["-q", "synth", "--players"])
        .arg(players.to_string())
        .arg("--minutes")
        .arg(minutes.to_string())
        .args(["--loss", "0.01", "--seed"])
        .arg(seed.to_string())
        .arg("-o")
        .arg(&cap)
        .status()
        .unwrap();
    assert!(status.success());
    cap
}

/// Report `captures` through the binary, add the probe script, load it in Chromium at
/// `width` pixels and return the probe's findings.
pub(crate) fn probe(bin: &Path, captures: &[PathBuf], name: &str, width: u32) -> serde_json::Value {
    probe_with(bin, captures, name, width, include_str!("browser/probe.js"))
}

/// As [`probe`], with another probe script (one that writes `<pre id="probe">`).
pub(crate) fn probe_with(
    bin: &Path,
    captures: &[PathBuf],
    name: &str,
    width: u32,
    probe: &str,
) -> serde_json::Value {
    let page = tmp(&format!("{name}.html"));
    let status = Command::new(env!("CARGO_BIN_EXE_bcwire"))
        .args(["-q", "report"])
        .args(captures)
        .arg("-o")
        .arg(&page)
        .status()
        .unwrap();
    assert!(status.success());
    let html = std::fs::read_to_string(&page).unwrap();
    let probed = tmp(&format!("{name}_probe.html"));
    std::fs::write(
        &probed,
        html.replace("</body>", &format!("<script>{probe}</script></body>")),
    )
    .unwrap();
    let dom = run_chromium_at(bin, &probed, "--dump-dom", width);
    let text = dom
        .split("<pre id=\"probe\">")
        .nth(1)
        .and_then(|s| s.split("</pre>").next())
        .unwrap_or_else(|| panic!("no probe output: {}", body_tag(&dom)));
    let text = text
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// The facts every page must keep at 1,400 px, one capture or two.
pub(crate) fn assert_page_facts(p: &serde_json::Value) {
    assert_eq!(p["errors"], 0, "script errors: {p}");
    assert_eq!(p["resources"], serde_json::json!([]), "network requests");
    assert!(
        p["scrollWidth"].as_f64() <= p["clientWidth"].as_f64(),
        "horizontal overflow: {} > {}",
        p["scrollWidth"],
        p["clientWidth"]
    );
    assert!(
        p["minText"].as_f64().unwrap() >= 10.95,
        "chart text of {} px: {}",
        p["minText"],
        p["minTextWhat"]
    );
    assert!(p["shipCharts"].as_u64().unwrap() > 0);
    assert_eq!(
        p["outsideLife"],
        serde_json::json!([]),
        "drawn outside a life"
    );
    assert_eq!(
        p["colourClashes"],
        serde_json::json!([]),
        "an opcode in two colours"
    );
    let zoom = &p["zoom"];
    assert_eq!(
        zoom["ticksChanged"], true,
        "map axes not redrawn on zoom: {zoom}"
    );
    let px = zoom["textPx"].as_f64().unwrap();
    assert!((10.5..11.5).contains(&px), "zoomed tick text of {px} px");
    assert!(zoom["ticks"].as_u64().unwrap() >= 6, "{zoom}");
    // The map canvas shows a smaller world after six wheel steps in (0.8 each), around
    // the same centre; a drag to the right moves the view left; a double-click resets.
    let view = |k: &str| -> Vec<f64> { serde_json::from_value(zoom[k].clone()).unwrap() };
    let (before, after, panned, reset) = (
        view("viewBefore"),
        view("viewAfter"),
        view("viewPanned"),
        view("viewReset"),
    );
    let width = |v: &[f64]| v[1] - v[0];
    let ratio = width(&after) / width(&before);
    assert!(
        (0.8f64.powi(6) - 0.01..0.8f64.powi(6) + 0.01).contains(&ratio),
        "zoomed view {after:?} of {before:?}"
    );
    assert!(
        ((after[0] + after[1]) / 2.0 - (before[0] + before[1]) / 2.0).abs() < width(&before) * 0.01,
        "zoom moved the centre: {after:?} of {before:?}"
    );
    assert!(
        panned[0] < after[0] - width(&after) * 0.2 && (width(&panned) - width(&after)).abs() < 0.01,
        "pan: {panned:?} from {after:?}"
    );
    assert_eq!(reset, before, "double-click reset");
    // A player's legend toggle takes their lives off the map and brings them back.
    let t = &p["legendToggle"];
    let groups = |k: &str| -> Vec<u64> { serde_json::from_value(t[k].clone()).unwrap() };
    let g = t["group"].as_u64().unwrap();
    assert!(groups("before").contains(&g), "{t}");
    assert!(
        !groups("off").is_empty() && !groups("off").contains(&g),
        "{t}"
    );
    assert_eq!(groups("on"), groups("before"), "{t}");
}

/// An eight-player session with respawns: nothing drawn outside a ship's life, one
/// colour per opcode, a brushed window that the map, the ship charts and the slider
/// follow (and a reset that restores them), and a player choice that leaves only that
/// player's series and ships.
#[test]
fn a_long_session_follows_one_window_and_one_player() {
    let Some(bin) = chromium() else { return };
    let cap = generated_page("browser_s8", 8, 6, 3);
    let p = probe(&bin, &[cap], "browser_s8", 1400);
    assert_page_facts(&p);
    let (before, brushed, reset) = (&p["before"], &p["brushed"], &p["reset"]);
    assert!(!p["window"].as_str().unwrap().is_empty(), "no window: {p}");
    assert!(
        brushed["mapPoints"].as_u64() < before["mapPoints"].as_u64(),
        "the map did not follow the window: {p}"
    );
    assert_eq!(p["mapFollowsWindow"], true, "{p}");
    assert!(
        brushed["ships"].as_u64() < before["ships"].as_u64(),
        "every ship chart still shown: {p}"
    );
    assert!(brushed["shades"].as_u64().unwrap() > 0, "no shading: {p}");
    let w: Vec<f64> = p["window"]
        .as_str()
        .unwrap()
        .split(' ')
        .map(|v| v.parse().unwrap())
        .collect();
    // Each ship chart still shown spans only seconds inside the window.
    let spans: Vec<[f64; 2]> = serde_json::from_value(brushed["spans"].clone()).unwrap();
    assert!(!spans.is_empty());
    for s in &spans {
        assert!(
            s[0] >= w[0] - 1e-6 && s[1] <= w[1] + 1e-6,
            "a ship chart spans {s:?} with the window {w:?}"
        );
    }
    let slider: Vec<f64> = serde_json::from_value(p["slider"].clone()).unwrap();
    assert!(
        (slider[0] - w[0]).abs() < 0.2 && (slider[1] - w[1]).abs() < 0.2,
        "{p}"
    );
    assert_eq!(reset["window"], "");
    assert_eq!(reset["mapPoints"], before["mapPoints"]);
    assert_eq!(reset["ships"], before["ships"]);
    assert!(p["players"].as_array().unwrap().len() >= 8, "{p}");
    assert_eq!(p["otherPlayersShown"], serde_json::json!([]), "{p}");
    assert!(p["playerSeriesShown"].as_u64().unwrap() >= 3, "{p}");
    assert_eq!(p["playerShipsShown"], 1, "{p}");
    // The map draws the chosen player's lives, and only theirs.
    let lives = p["mapLivesShown"].as_array().unwrap();
    assert!(
        !lives.is_empty() && lives.iter().all(|x| *x == p["chosen"]),
        "map lives with {} chosen: {lives:?}",
        p["chosen"]
    );
}

/// Two captures side by side at 1,400 px: no overflow, text at 11 px or more, one
/// colour per opcode across both.
#[test]
fn a_comparison_fits_and_keeps_its_colours() {
    let Some(bin) = chromium() else { return };
    let a = generated_page("browser_ab_a", 3, 2, 5);
    let b = generated_page("browser_ab_b", 4, 3, 6);
    let p = probe(&bin, &[a, b], "browser_ab", 1400);
    assert_page_facts(&p);
    assert!(p["opcodeColours"].as_object().unwrap().len() >= 5, "{p}");
}
