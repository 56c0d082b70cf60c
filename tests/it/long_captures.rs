//! A long capture (a real-peer capture replayed many times, each copy opening new
//! sessions on the same endpoints, as a long-running server does) is summarised in
//! bounded memory: finished sessions are compacted as they retire, the session list is
//! capped, and the totals still count everything.

use crate::common;

use bcwire::capture::{CaptureReader, CaptureWriter, Endian, Frame, TsResolution};
use bcwire::pipeline::summary::CaptureSummary;
use bcwire::pipeline::{Config, NullSink, Pipeline, MAX_SESSIONS_LISTED};
use std::io::Cursor;

/// The frames of `path` written `copies` times, each copy 10 s after the previous ends.
fn replicate(path: &str, copies: i64) -> Vec<u8> {
    let mut reader = CaptureReader::open(path).unwrap();
    let mut frames = Vec::new();
    let mut f = Frame::default();
    while reader.read_into(&mut f).unwrap() {
        frames.push(f.clone());
    }
    let period = frames.last().unwrap().ts_ns - frames[0].ts_ns + 10_000_000_000;
    let mut w = CaptureWriter::pcap(
        Vec::new(),
        frames[0].link_type,
        TsResolution::MICRO,
        Endian::Little,
        65535,
    )
    .unwrap();
    for k in 0..copies {
        for f in &frames {
            w.write_frame(0, f.ts_ns + k * period, f.orig_len, &f.data)
                .unwrap();
        }
    }
    w.into_inner()
}

fn summarise(bytes: Vec<u8>) -> CaptureSummary {
    let reader = CaptureReader::new(Cursor::new(bytes)).unwrap();
    Pipeline::new(Config::default())
        .run(reader, &mut NullSink)
        .unwrap()
}

#[test]
fn long_capture_summary_is_capped_and_totals_count_everything() {
    let Some(dir) = common::shared_dir() else {
        return;
    };
    let path = dir.join("captures/openbc/b2_valentines_replay/b2_valentines_replay.pcap");
    let path = path.to_str().unwrap();
    let one = summarise(replicate(path, 1));
    let per_copy = one.session_count;
    assert!(per_copy >= 2, "{per_copy}");
    assert_eq!(one.sessions.len() as u64, per_copy);
    // Enough copies to pass the listing limit.
    let copies = (MAX_SESSIONS_LISTED as u64 / per_copy + 2) as i64;
    let many = summarise(replicate(path, copies));
    assert_eq!(many.session_count, per_copy * copies as u64);
    assert_eq!(many.sessions.len(), MAX_SESSIONS_LISTED);
    let indices: Vec<usize> = many.sessions.iter().map(|s| s.index).collect();
    assert_eq!(indices, (0..MAX_SESSIONS_LISTED).collect::<Vec<_>>());
    for d in 0..2 {
        let (a, b) = (&one.totals[d], &many.totals[d]);
        let n = copies as u64;
        assert_eq!(b.packets, a.packets * n);
        assert_eq!(b.messages, a.messages * n);
        assert_eq!(b.unacked, a.unacked * n);
        assert_eq!(b.warnings, a.warnings * n);
    }
    // Listed sessions are summarised exactly as in the single copy.
    for (k, s) in many.sessions.iter().take(per_copy as usize).enumerate() {
        let o = &one.sessions[k];
        assert_eq!(format!("{:?}", s.clients), format!("{:?}", o.clients));
    }
    assert!(
        many.problems
            .iter()
            .any(|p| p.text.contains("more sessions not listed")),
        "{:?}",
        many.problems
    );
}
