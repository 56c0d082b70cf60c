//! The command line as packet people use it: one client however it is named, ranges in
//! every form, live streaming through a pipe, several inputs, mixed traffic, counts,
//! time formats, hex dumps, quiet exits, table widths, listings and the manual page.
//! Every test runs the built binary.

use assert_cmd::Command;
use bcwire::capture::{link_type, CaptureReader, CaptureWriter, Endian, TsResolution};
use bcwire::net::build::{frame_udp, BuildOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/captures/sample.pcapng");
const DUEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/captures/duel-sll2.pcap");

fn bcwire() -> Command {
    let mut c = Command::cargo_bin("bcwire").expect("binary");
    c.env("NO_COLOR", "1").env_remove("COLUMNS");
    c
}

/// Run; return (exit code, stdout, stderr).
fn run(args: &[&str]) -> (i32, String, String) {
    let o = bcwire().args(args).output().expect("run");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn ok(args: &[&str]) -> String {
    let (code, out, err) = run(args);
    assert_eq!(code, 0, "bcwire {args:?}: {err}");
    out
}

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("cli_usability_{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch folder");
    dir
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// Frame numbers of decode's table lines.
fn frames_of(table: &str) -> Vec<u64> {
    table
        .lines()
        .filter_map(|l| l.split_whitespace().next()?.parse().ok())
        .collect()
}

// ---------------------------------------------------------------- --client, --ship

#[test]
fn client_is_one_client_however_named() {
    let by_name = ok(&["decode", SAMPLE, "--client", "Worf"]);
    for other in [
        "worf",
        "62366",
        "port:62366",
        "0x04",
        "peer:4",
        "4",
        "slot:2",
    ] {
        assert_eq!(
            ok(&["decode", SAMPLE, "--client", other]),
            by_name,
            "--client {other}"
        );
    }
    // Both directions, and the frames before the name was sent (the connect).
    assert!(by_name.contains(" s2c ") && by_name.contains(" c2s "));
    assert!(by_name.contains("port 62366"), "frames before the name");
    // Nobody else's frames.
    assert!(!by_name.contains("Cady2  ") && !by_name.contains("Picard "));

    let stats: serde_json::Value = serde_json::from_str(&ok(&[
        "stats", SAMPLE, "--client", "0x04", "--format", "json",
    ]))
    .expect("json");
    let named: serde_json::Value = serde_json::from_str(&ok(&[
        "stats", SAMPLE, "--client", "Worf", "--format", "json",
    ]))
    .expect("json");
    assert_eq!(stats, named);
    let s2c = &stats["directions"]["s2c"]["datagrams"];
    assert!(s2c.as_u64().is_some_and(|n| n > 0), "s2c counted: {stats}");
}

/// On standard input the client is learned as it goes: from its port at once, from its
/// name or peer id once sent, and then in both directions.
#[test]
fn client_on_standard_input() {
    let bytes = std::fs::read(SAMPLE).expect("sample");
    let on_stdin = |sel: &str| -> (i32, String, String) {
        let o = bcwire()
            .args(["decode", "-", "--client", sel])
            .write_stdin(bytes.clone())
            .output()
            .expect("run");
        (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (_, by_port, _) = on_stdin("62366");
    assert_eq!(by_port, ok(&["decode", SAMPLE, "--client", "Worf"]));
    let (_, by_peer, _) = on_stdin("0x04");
    let (_, by_name, _) = on_stdin("Worf");
    assert_eq!(by_peer, by_name);
    assert!(by_peer.contains(" s2c "), "s2c after the peer id was seen");
    let (code, out, err) = on_stdin("slot:2");
    assert_eq!(code, 2);
    assert!(
        out.is_empty() && err.contains("needs a capture file"),
        "{err}"
    );
}

#[test]
fn unknown_names_are_errors_with_suggestions() {
    let (code, out, err) = run(&["decode", SAMPLE, "--client", "Wurf"]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(err.contains("did you mean Worf?"), "{err}");
    assert!(
        err.contains("Cady2 (port 53254, peer 0x02, slot:0)"),
        "{err}"
    );

    let (code, _, err) = run(&["decode", SAMPLE, "--ship", "Kesok Heavy"]);
    assert_eq!(code, 2);
    assert!(err.contains("did you mean \"Kessok Heavy\"?"), "{err}");

    let (code, _, err) = run(&["decode", SAMPLE, "--opcode", "StateUpdat"]);
    assert_eq!(code, 2);
    assert!(err.contains("did you mean StateUpdate?"), "{err}");

    // A number that is one client's peer id and another's port is ambiguous; here 2
    // is only Cady2's peer id.
    assert_eq!(
        ok(&["decode", SAMPLE, "--client", "2"]),
        ok(&["decode", SAMPLE, "--client", "Cady2"])
    );
}

#[test]
fn ship_as_printed_or_as_scripted() {
    let spaced = ok(&["decode", SAMPLE, "--ship", "Kessok Heavy"]);
    assert!(!spaced.is_empty());
    assert_eq!(ok(&["decode", SAMPLE, "--ship", "KessokHeavy"]), spaced);
    assert_eq!(ok(&["decode", SAMPLE, "--ship", "kessok_heavy"]), spaced);
}

// ---------------------------------------------------------------- ranges

#[test]
fn ranges_in_every_form() {
    assert_eq!(
        frames_of(&ok(&["decode", SAMPLE, "--frames", "-3"])),
        vec![1, 2, 3]
    );
    let dash = ok(&["decode", SAMPLE, "--frames", "1-3"]);
    assert_eq!(ok(&["decode", SAMPLE, "--frames", "1\u{2013}3"]), dash);
    assert_eq!(ok(&["decode", SAMPLE, "--frames", "-3"]), dash);
    let tail = frames_of(&ok(&["decode", SAMPLE, "--frames", "2990-"]));
    assert!(!tail.is_empty() && tail.iter().all(|f| *f >= 2990));

    // One time value is the second that starts there.
    let second = ok(&["decode", SAMPLE, "--time", "10"]);
    assert!(!second.is_empty());
    for l in second.lines() {
        let t: f64 = l.split_whitespace().nth(1).unwrap().parse().unwrap();
        assert!((10.0..11.0).contains(&t), "{l}");
    }

    for bad in [
        ["--frames", "200-100"],
        ["--time", "5-2"],
        ["--frames", "0"],
        ["--frames", "-"],
    ] {
        let (code, out, err) = run(&["decode", SAMPLE, bad[0], bad[1]]);
        assert_eq!(code, 2, "{bad:?}");
        assert!(out.is_empty());
        assert!(err.starts_with("bcwire: error: "), "{err}");
    }
    let (_, _, err) = run(&["decode", SAMPLE, "--frames", "200-100"]);
    assert!(err.contains("reversed"), "{err}");
    let (_, _, err) = run(&["decode", SAMPLE, "--frames", "0"]);
    assert!(err.contains("numbered from 1"), "{err}");
}

// ---------------------------------------------------------------- live streaming

/// The sample's first frames as a classic pcap: the header, then each frame's bytes.
fn sample_pcap_pieces(n: usize) -> (Vec<u8>, Vec<Vec<u8>>) {
    let mut r = CaptureReader::open(SAMPLE).expect("sample");
    let header = {
        let w = CaptureWriter::pcap(
            Vec::new(),
            link_type::ETHERNET,
            TsResolution::MICRO,
            Endian::Little,
            65_535,
        )
        .expect("header");
        w.into_inner()
    };
    let mut frames = Vec::new();
    while frames.len() < n {
        let f = r.next_frame().expect("frame").expect("readable");
        let mut w = CaptureWriter::pcap(
            Vec::new(),
            link_type::ETHERNET,
            TsResolution::MICRO,
            Endian::Little,
            65_535,
        )
        .expect("header");
        w.write_frame(0, f.ts_ns, f.orig_len, &f.data)
            .expect("frame");
        frames.push(w.into_inner()[header.len()..].to_vec());
    }
    (header, frames)
}

#[test]
fn standard_input_streams_one_record_per_frame() {
    let (header, frames) = sample_pcap_pieces(12);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_bcwire"))
        .args(["decode", "-", "--format", "jsonl"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    stdin.write_all(&header).expect("header");
    stdin.flush().expect("flush");
    for (i, f) in frames.iter().enumerate() {
        stdin.write_all(f).expect("frame");
        stdin.flush().expect("flush");
        let want = (i + 1) as u64;
        // Every frame of the sample's start is a record: it must come out before the
        // next frame is written, the pipe still open.
        let line = rx
            .recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|_| panic!("no record for frame {want} within 10 s"));
        let j: serde_json::Value = serde_json::from_str(&line).expect("json line");
        assert_eq!(j["frame"], want, "{line}");
    }
    drop(stdin);
    let rest: Vec<String> = rx.iter().collect();
    assert!(rest.last().is_some_and(|l| l.contains("\"summary\"")));
    assert!(child.wait().expect("exit").success());
    reader.join().expect("reader");
}

#[test]
fn line_buffered_flag_is_accepted_everywhere() {
    assert_eq!(
        ok(&["-l", "decode", SAMPLE, "-c", "2"]),
        ok(&["decode", SAMPLE, "-c", "2"])
    );
    ok(&["info", "--line-buffered", SAMPLE]);
}

// ---------------------------------------------------------------- several inputs

#[test]
fn several_inputs_go_on_past_a_bad_one() {
    let missing = "/nonexistent/missing.pcap";
    let (code, out, err) = run(&["info", SAMPLE, missing, DUEL]);
    assert_eq!(code, 2);
    assert!(out.contains("sample.pcapng") && out.contains("duel-sll2.pcap"));
    assert!(err.contains("missing.pcap: cannot read capture"), "{err}");

    let (code, out, _) = run(&["info", "--format", "json", SAMPLE, missing, DUEL]);
    assert_eq!(code, 2);
    let j: serde_json::Value = serde_json::from_str(&out).expect("json");
    let files: Vec<&str> = j["files"]
        .as_array()
        .expect("array")
        .iter()
        .filter(|f| f["error"].is_null())
        .map(|f| f["file"].as_str().unwrap())
        .collect();
    assert_eq!(files, vec![SAMPLE, DUEL]);

    for cmd in ["decode", "stats", "flows", "show"] {
        // The bad one first: -c and show's limit may end a run before a later input.
        let (code, out, err) = run(&[cmd, missing, SAMPLE]);
        assert_eq!(code, 2, "{cmd}");
        assert!(!out.is_empty(), "{cmd} prints the good file");
        assert!(err.contains("missing.pcap"), "{cmd}: {err}");
    }
}

#[test]
fn directories_are_read_recursively() {
    let dir = scratch("dirs");
    std::fs::create_dir_all(dir.join("a/b")).expect("dirs");
    std::fs::copy(SAMPLE, dir.join("a/b/one.pcapng")).expect("copy");
    std::fs::copy(DUEL, dir.join("two.pcap")).expect("copy");
    std::fs::write(dir.join("a/notes.txt"), "not a capture").expect("write");
    let (code, out, err) = run(&["-v", "info", s(&dir)]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("one.pcapng") && out.contains("two.pcap"));
    assert!(err.contains("notes.txt: skipped"), "{err}");
    let (_, _, err) = run(&["info", s(&dir)]);
    assert!(
        err.contains("1 file(s) that are not captures skipped"),
        "{err}"
    );
}

// ---------------------------------------------------------------- mixed traffic

/// 500 DNS queries and their answers, and nothing else.
fn dns_capture(path: &Path) {
    let mut w = CaptureWriter::pcap(
        Vec::new(),
        link_type::ETHERNET,
        TsResolution::MICRO,
        Endian::Little,
        65_535,
    )
    .expect("header");
    let server = "10.0.0.53:53".parse().expect("addr");
    for i in 0..500u16 {
        let client = format!("10.0.0.2:{}", 10_000 + i).parse().expect("addr");
        for (a, b) in [(client, server), (server, client)] {
            for f in frame_udp(
                link_type::ETHERNET,
                a,
                b,
                &[0; 24],
                &BuildOptions::default(),
            )
            .expect("frame")
            {
                w.write_frame(
                    0,
                    1_700_000_000_000_000_000 + i64::from(i),
                    f.len() as u32,
                    &f,
                )
                .expect("write");
            }
        }
    }
    std::fs::write(path, w.into_inner()).expect("write");
}

#[test]
fn mixed_traffic_is_grouped_and_explained() {
    let dir = scratch("dns");
    let dns = dir.join("dns.pcap");
    dns_capture(&dns);
    let out = ok(&["info", s(&dns)]);
    let lines: Vec<&str> = out.lines().filter(|l| l.contains("UDP ports")).collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines[0].contains("1000 datagrams; top ports 53 ×1000"),
        "{out}"
    );
    assert!(out.contains("give it with --port"), "{out}");

    let j: serde_json::Value =
        serde_json::from_str(&ok(&["info", "--format", "json", s(&dns)])).expect("json");
    let j = &j["files"][0];
    assert_eq!(j["not_bc"].as_object().expect("object").len(), 1);
    assert_eq!(j["other_udp_ports"][0]["port"], 53);
    assert_eq!(j["other_udp_ports"][0]["datagrams"], 1000);

    let page = dir.join("dns.html");
    // show finds nothing to show: exit 1, as when a filter matches nothing.
    for (args, want) in [
        (vec!["decode", s(&dns)], 0),
        (vec!["stats", s(&dns)], 0),
        (vec!["flows", s(&dns)], 0),
        (vec!["show", s(&dns)], 1),
        (vec!["diff", s(&dns), s(&dns)], 0),
        (vec!["report", s(&dns), "-o", s(&page)], 0),
    ] {
        let cmd = args[0];
        let (code, _, err) = run(&args);
        assert_eq!(code, want, "{cmd}: {err}");
        assert!(
            err.contains("no Bridge Commander traffic on UDP port 22101")
                && err.contains("53 ×1000")
                && err.contains("--port"),
            "{cmd}: {err}"
        );
    }
}

// ---------------------------------------------------------------- -c, -t, --hex

#[test]
fn count_stops_after_n_records() {
    let mut frames = frames_of(&ok(&["decode", SAMPLE, "-c", "4"]));
    frames.dedup();
    assert_eq!(frames, vec![1, 2, 3, 4]);
    let jsonl = ok(&["decode", SAMPLE, "--count", "5", "--format", "jsonl"]);
    let types: Vec<String> = jsonl
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("json")["type"].to_string())
        .collect();
    assert_eq!(types.len(), 5 + 1, "five records and the summary: {jsonl}");
    assert!(types[..5].iter().all(|t| t == "\"packet\""));
    assert_eq!(types[5], "\"summary\"");
    let shown = ok(&["show", SAMPLE, "-c", "2"]);
    assert_eq!(shown.matches("Frame ").count(), 2);
    let (code, _, _) = run(&["decode", SAMPLE, "-c", "0"]);
    assert_eq!(code, 2);
}

#[test]
fn time_formats() {
    let col = |args: &[&str]| -> Vec<String> {
        ok(args)
            .lines()
            .map(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                if w[1].contains('-') {
                    format!("{} {}", w[1], w[2])
                } else {
                    w[1].to_string()
                }
            })
            .collect()
    };
    let base = ["decode", SAMPLE, "--frames", "1-3"];
    let with = |t: &str| -> Vec<String> {
        let mut a = base.to_vec();
        a.extend(["-t", t]);
        col(&a)
    };
    assert_eq!(with("r"), ["0.000000", "0.033860", "0.332105"]);
    assert_eq!(with("e")[0], "1014854400.489688");
    assert_eq!(with("ud")[0], "2002-02-28 00:00:00.489688");
    assert_eq!(with("d"), ["0.000000", "0.033860", "0.298245"]);
    // dd counts from the previous record shown: with only c2s shown, frame 3 follows 1.
    let mut a = base.to_vec();
    a.extend(["-t", "dd", "--direction", "c2s"]);
    assert_eq!(col(&a), ["0.000000", "0.332105"]);
    a[5] = "d";
    assert_eq!(col(&a), ["0.000000", "0.298245"]);

    let info = ok(&["info", SAMPLE]);
    assert!(info.contains("first packet          2002-02-28 00:00:00.489688000 UTC"));
    assert!(info.contains("last packet           2002-02-28 00:00:59.986173000 UTC"));
    let j: serde_json::Value =
        serde_json::from_str(&ok(&["info", "--format", "json", SAMPLE])).expect("json");
    assert_eq!(
        j["files"][0]["first_time_ns"],
        1_014_854_400_489_688_000_i64
    );
}

/// `-t` in the other commands that print times: `show`'s headings, `flows`' join and
/// leave times, the start of `stats --interval` buckets; the same instants as `decode`.
#[test]
fn time_formats_beyond_decode() {
    let headings = |t: &str| -> Vec<String> {
        ok(&["show", SAMPLE, "--frames", "1-3", "--limit", "3", "-t", t])
            .lines()
            .filter(|l| l.starts_with("Frame "))
            .map(|l| l.split("  ").nth(1).unwrap().to_string())
            .collect()
    };
    assert_eq!(headings("r"), ["0.000000", "0.033860", "0.332105"]);
    assert_eq!(headings("d"), ["0.000000", "0.033860", "0.298245"]);
    assert_eq!(headings("e")[0], "1014854400.489688");
    assert_eq!(headings("ud")[2], "2002-02-28 00:00:00.821793");
    // Without -t the heading keeps both clocks.
    let plain = ok(&["show", SAMPLE, "--frame", "2"]);
    assert!(
        plain.starts_with("Frame 2  1014854400.523548 (+0.033860 s)"),
        "{plain}"
    );

    let flows = ok(&["flows", SAMPLE, "-t", "ud"]);
    assert!(flows.contains("joined (UTC)"), "{flows}");
    assert!(flows.contains("2002-02-28 00:00:00.489688"), "{flows}");
    let flows = ok(&["flows", SAMPLE]);
    assert!(
        flows.contains("joined (s)") && flows.contains("0.000"),
        "{flows}"
    );

    let rates = ok(&["stats", SAMPLE, "--interval", "10s", "-t", "e"]);
    assert!(rates.contains("from (epoch s)"), "{rates}");
    assert!(rates.contains("1014854410.489688"), "{rates}");
    let rates = ok(&["stats", SAMPLE, "--interval", "10s"]);
    assert!(
        rates.contains("from (s)") && rates.contains("10.0"),
        "{rates}"
    );
}

#[test]
fn hex_dumps_and_gamespy_text() {
    let out = ok(&["decode", SAMPLE, "--frames", "1-5", "--hex"]);
    assert!(out.contains("GameSpy \\status\\\n"), "{out}");
    assert!(!out.contains("\\\\status"), "{out}");
    assert!(
        out.contains("        0000  5c 73 74 61 74 75 73 5c"),
        "{out}"
    );
    assert!(
        out.contains("        0010  "),
        "a datagram over 16 bytes: {out}"
    );

    let csv = ok(&[
        "decode", SAMPLE, "--frames", "5", "--hex", "--format", "csv",
    ]);
    let mut lines = csv.lines();
    assert!(lines.next().unwrap().ends_with(",fields,plain_hex"));
    // Frame 5: two ACKs and a peer_info, each row with the whole datagram.
    let plain = "0203010000020100000000\
                 16c0010002c633640a430061006400790032000000";
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 3);
    for row in rows {
        assert!(row.ends_with(&format!(",{plain}")), "{row}");
    }
}

// ---------------------------------------------------------------- -q, -o -

#[test]
fn quiet_means_nothing_on_stdout_where_the_status_answers() {
    let (code, out, _) = run(&["-q", "diff", SAMPLE, DUEL]);
    assert_eq!(code, 1);
    assert!(out.is_empty(), "{out}");
    let (code, out, _) = run(&["-q", "diff", SAMPLE, SAMPLE]);
    assert_eq!(code, 0);
    assert!(out.is_empty());

    let dir = scratch("synth");
    let f = dir.join("s.pcap");
    let (code, out, err) = run(&["-q", "synth", "--packets", "50", "--out", s(&f)]);
    assert_eq!(code, 0, "{err}");
    assert!(out.is_empty() && err.is_empty());
    // The container follows the extension: classic pcap, microseconds, little-endian.
    let bytes = std::fs::read(&f).expect("written");
    assert_eq!(&bytes[..4], &[0xD4, 0xC3, 0xB2, 0xA1]);
    let g = dir.join("s.pcapng");
    ok(&["-q", "synth", "--packets", "50", "--out", s(&g)]);
    assert_eq!(
        &std::fs::read(&g).expect("written")[..4],
        &[0x0A, 0x0D, 0x0D, 0x0A]
    );
    ok(&[
        "-q",
        "synth",
        "--packets",
        "50",
        "--out",
        s(&g),
        "--format",
        "pcap",
    ]);
    assert_eq!(
        &std::fs::read(&g).expect("written")[..4],
        &[0xD4, 0xC3, 0xB2, 0xA1]
    );

    // --out - is standard output, and what comes out is a capture bcwire reads.
    let o = bcwire()
        .args(["synth", "--packets", "50", "--out", "-"])
        .output()
        .expect("run");
    assert!(o.status.success());
    assert!(!Path::new("-").exists(), "no file named -");
    assert_eq!(&o.stdout[..4], &[0x0A, 0x0D, 0x0D, 0x0A]);
    let read = bcwire()
        .args(["info", "-"])
        .write_stdin(o.stdout)
        .output()
        .expect("run");
    assert!(String::from_utf8_lossy(&read.stdout).contains("frames                50"));
}

// ---------------------------------------------------------------- tables

#[test]
fn tables_fit_the_width_without_trailing_spaces() {
    for args in [
        vec!["flows", SAMPLE],
        vec!["info", SAMPLE],
        vec!["stats", SAMPLE],
    ] {
        let o = bcwire()
            .env("COLUMNS", "80")
            .args(&args)
            .output()
            .expect("run");
        let out = String::from_utf8_lossy(&o.stdout);
        for l in out.lines() {
            assert!(l.chars().count() <= 80, "{args:?}: {l}");
            assert!(!l.ends_with(' '), "{args:?}: trailing space in {l:?}");
        }
        // Without a width (a pipe), no line ends in spaces either.
        for l in ok(&args).lines() {
            assert!(!l.ends_with(' '), "{args:?}: trailing space in {l:?}");
        }
    }
    for l in ok(&["decode", SAMPLE, "--frames", "1-30"]).lines() {
        assert!(!l.ends_with(' '), "trailing space in {l:?}");
    }
}

/// The transport and flags columns of decode lines hold their widest cells
/// (`R#2 frag 0/3` with `RETX`, a peer info with `keepalive`): what follows starts at
/// the same column on every line.
#[test]
fn decode_cells_stay_in_their_columns() {
    let mut flagged = 0;
    for f in [
        SAMPLE,
        DUEL,
        concat!(env!("CARGO_MANIFEST_DIR"), "/captures/mtu400-null.pcapng"),
    ] {
        for l in ok(&["decode", f]).lines() {
            let c: Vec<char> = l.chars().collect();
            if c.len() <= 57 || l.contains(" GameSpy ") {
                continue;
            }
            // frame 7, time 10, client 12, direction 3: the transport cell starts at 36.
            assert_eq!(c[56], ' ', "transport cell overflows: {l}");
            let flags: String = c[57..c.len().min(66)].iter().collect();
            let flags = flags.trim_end();
            assert!(["", "RETX", "keepalive"].contains(&flags), "{l}");
            if !flags.is_empty() {
                flagged += 1;
            }
            if c.len() > 66 {
                assert_eq!(c[66], ' ', "flags cell overflows: {l}");
            }
        }
    }
    assert!(flagged > 0, "no RETX or keepalive line seen");
}

#[test]
fn interval_lists_every_bucket_with_its_real_span() {
    let j: serde_json::Value = serde_json::from_str(&ok(&[
        "stats",
        SAMPLE,
        "--interval",
        "7s",
        "--format",
        "json",
    ]))
    .expect("json");
    let rates = j["rates"].as_array().expect("rates");
    // 59.496 s of capture in 7 s buckets: 0, 7, … 56, the last 3.496 s long.
    assert_eq!(rates.len(), 9);
    for (i, r) in rates.iter().enumerate() {
        assert_eq!(r["start"].as_f64().unwrap(), 7.0 * i as f64);
    }
    let last = rates.last().unwrap()["span"].as_f64().unwrap();
    assert!((last - 3.496485).abs() < 1e-6, "{last}");

    // Empty buckets are listed: a filter that leaves a gap.
    let j: serde_json::Value = serde_json::from_str(&ok(&[
        "stats",
        SAMPLE,
        "--interval",
        "1s",
        "--format",
        "json",
        "--time",
        "0-2",
    ]))
    .expect("json");
    let starts: Vec<f64> = j["rates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["start"].as_f64().unwrap())
        .collect();
    assert_eq!(starts, vec![0.0, 1.0]);
    let table = ok(&["stats", SAMPLE, "--interval", "7s"]);
    assert!(
        table.contains("│     56.0 ┆       71 ┆      148 ┆  20.3 ┆  42.3 │"),
        "{table}"
    );
}

// ---------------------------------------------------------------- list, man

#[test]
fn lists_of_names() {
    let ops = ok(&["list", "opcodes"]);
    assert!(ops.lines().any(|l| l == "0x1C  StateUpdate"));
    let ships = ok(&["list", "ships"]);
    assert!(ships.contains("Kessok Heavy") && ships.contains("KessokHeavy"));
    let clients = ok(&["list", "clients", SAMPLE]);
    assert!(
        clients.contains("Worf             port 62366 peer 0x04 slot:2"),
        "{clients}"
    );
    let fields = ok(&["list", "fields"]);
    assert!(
        fields.lines().any(|l| l.starts_with("  player_slot ")),
        "{fields}"
    );
    assert!(fields
        .lines()
        .any(|l| l.starts_with("  frame.number") || l.contains("[frame.number]")));
}

/// The warning list holds every code the sources write.
#[test]
fn warning_list_covers_the_sources() {
    // Every code the registry knows is listed, with its layer and kind.
    let listed = ok(&["list", "warnings"]);
    let codes: Vec<&str> = listed
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(codes.len(), bcwire::diag::Code::ALL.len(), "{listed}");
    for code in bcwire::diag::Code::ALL {
        assert!(codes.contains(&code.as_str()), "{code} is not listed");
    }
    assert!(
        listed.contains("seq_gap") && listed.contains("sequence"),
        "{listed}"
    );
}

#[test]
fn manual_page() {
    let man = ok(&["man"]);
    assert!(man.contains(".TH bcwire 1"));
    assert!(man.contains("decode"));
    assert!(man.contains("line\\-buffered"));
    // One command's page: its own options, named as git names its pages.
    let decode = ok(&["man", "decode"]);
    assert!(decode.contains(".TH bcwire-decode 1"), "{decode}");
    assert!(decode.contains("display\\-filter"), "{decode}");
    let (code, _, err) = run(&["man", "decod"]);
    assert_eq!(code, 2);
    assert!(err.contains("commands: info"), "{err}");
    // Every page into a folder.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    ok(&["man", "--out-dir", d]);
    for page in [
        "bcwire.1",
        "bcwire-decode.1",
        "bcwire-stats.1",
        "bcwire-report.1",
    ] {
        let text = std::fs::read_to_string(dir.path().join(page)).unwrap();
        assert!(text.starts_with(".ie") || text.contains(".TH"), "{page}");
        for section in ["EXIT STATUS", "ENVIRONMENT", "NO_COLOR", "COLUMNS"] {
            assert!(text.contains(section), "{page} lacks {section}");
        }
    }
    // The filter language's page lists every record fact `-Y` reads, as
    // `list fields --format json` gives them.
    let filter = std::fs::read_to_string(dir.path().join("bcwire-filter.7")).unwrap();
    assert!(filter.contains(".TH BCWIRE-FILTER 7"), "{filter}");
    let fields: serde_json::Value =
        serde_json::from_str(&ok(&["list", "fields", "--format", "json"])).unwrap();
    for f in fields.as_array().unwrap() {
        if f["kind"] == "fact" && !f["description"].as_str().unwrap().starts_with("Alias") {
            let name = f["name"].as_str().unwrap().replace('_', "\\_");
            assert!(
                filter.contains(&name) || filter.contains(f["name"].as_str().unwrap()),
                "bcwire-filter(7) lacks {}",
                f["name"]
            );
        }
    }
    assert_eq!(ok(&["man", "filter"]), filter);
}

// At 80 and at 60 columns `info` and `flows` never split a number or a header across
// lines: a table too wide for the width is laid out a client per block. The numbers
// are those of `info --format json`.
// Catches: comfy-table's wrapping of a wide table into 3-character columns
// ("clie / nt", "c2s / pkt / s").
#[test]
fn narrow_terminals_get_whole_numbers_and_headers() {
    let info = crate::common::bcwire_json(&["info", "--format", "json", SAMPLE]);
    for width in ["80", "60"] {
        for cmd in ["info", "flows"] {
            let o = bcwire()
                .env("COLUMNS", width)
                .args([cmd, SAMPLE])
                .output()
                .expect("run");
            let text = String::from_utf8_lossy(&o.stdout).into_owned();
            for c in info["files"][0]["sessions"][0]["clients"]
                .as_array()
                .unwrap()
            {
                let addr = c["addr"].as_str().unwrap();
                assert!(text.contains(addr), "{cmd} at {width}: {addr}\n{text}");
                let c2s = c["c2s"]["packets"].as_u64().unwrap().to_string();
                let whole = text.lines().any(|l| {
                    l.contains("c2s pkts")
                        && l.split(|ch: char| !ch.is_ascii_digit()).any(|t| t == c2s)
                });
                assert!(
                    whole,
                    "{cmd} at {width}: {c2s} c2s packets of {addr}\n{text}"
                );
            }
            for header in ["c2s pkts", "peer"] {
                assert!(text.contains(header), "{cmd} at {width}: {header}\n{text}");
            }
        }
    }
}

// `-c N` counts the output's rows: table lines, CSV rows, JSON records, `--fields`
// rows; with `-w`, the frames written (read back with pcap-file).
// Catches: -c counting datagrams where a datagram prints several lines, or ignored
// with --fields, or counting printed lines where -w writes frames.
#[test]
fn count_stops_after_n_rows_of_the_output() {
    let lines = |args: &[&str]| -> usize {
        let o = bcwire().args(args).output().expect("run");
        assert!(o.status.success());
        String::from_utf8_lossy(&o.stdout).lines().count()
    };
    for n in ["1", "5", "17"] {
        let want: usize = n.parse().unwrap();
        assert_eq!(lines(&["decode", "-c", n, SAMPLE]), want, "table -c {n}");
        assert_eq!(
            lines(&["decode", "-c", n, "--format", "csv", SAMPLE]),
            want + 1
        );
        // JSON Lines end with the summary record.
        assert_eq!(
            lines(&["decode", "-c", n, "--format", "jsonl", SAMPLE]),
            want + 1
        );
        assert_eq!(
            lines(&[
                "decode",
                "-c",
                n,
                "--format",
                "csv",
                "--fields",
                "frame,opcode",
                SAMPLE
            ]),
            want + 1
        );
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("c.pcapng");
        let o = bcwire()
            .args(["decode", "-q", "-c", n, "-w", out.to_str().unwrap(), SAMPLE])
            .output()
            .expect("run");
        assert!(o.status.success());
        let data = std::fs::read(&out).unwrap();
        let mut r = pcap_file::pcapng::PcapNgReader::new(std::io::Cursor::new(data)).unwrap();
        let mut frames = 0;
        while let Some(b) = r.next_block() {
            if matches!(b.unwrap().0, pcap_file::pcapng::Block::EnhancedPacket(_)) {
                frames += 1;
            }
        }
        assert_eq!(frames, want, "-w -c {n}");
    }
}
