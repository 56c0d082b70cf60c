//! The report page in a real browser: Debian's headless Chromium loads it, runs its
//! script without errors, keeps the charts and series, and takes a screenshot.
//!
//! Needs `chromium` on PATH (Debian: `apt-get install -y chromium`); without it the
//! tests print a note and pass. Needs the shared captures (`BCWIRE_SHARED`,
//! `<crate>/../shared` or `/work/shared`), skipped likewise when absent.

mod common;

use bcwire::pipeline::Config;
use bcwire::report::html::{self, collect::ChatLine};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The shared folder, through the common helper (which fails instead of skipping when
/// `BCWIRE_REQUIRE_SHARED` is set, and records the test for `.ci/run`).
fn shared_dir() -> Option<PathBuf> {
    common::shared_dir()
}

fn capture(name: &str) -> Option<PathBuf> {
    let p = shared_dir()?
        .join("captures/openbc")
        .join(name)
        .join(format!("{name}.pcapng"));
    p.is_file().then_some(p)
}

/// The chromium binary, or None (with a note) when it is not installed.
fn chromium() -> Option<PathBuf> {
    let out = Command::new("which").arg("chromium").output().ok()?;
    let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if out.status.success() && !path.is_empty() {
        Some(PathBuf::from(path))
    } else {
        eprintln!(
            "note: chromium is not installed (Debian: apt-get install -y chromium); \
             browser test skipped"
        );
        None
    }
}

fn tmp(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name)
}

/// Run headless Chromium on a local file with a fresh profile; `mode` is `--dump-dom`
/// or `--screenshot=…`. Bounded by `timeout` so a hung browser fails the test.
fn run_chromium(bin: &Path, page: &Path, mode: &str) -> String {
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
            "--window-size=1280,2600",
        ])
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
