//! Benchmark input: a capture of N frames made by replaying a seed capture over and over,
//! each copy shifted in time past the previous one (so every copy opens new sessions on
//! the same endpoints, as a long-running server would).
//!
//! ```text
//! cargo run --release --example make_bench_capture -- SEED.pcap OUT.pcap FRAMES
//! ```
//!
//! The output is classic pcap (µs, little-endian) with the seed's link type; the last
//! copy is cut so the file holds exactly FRAMES frames.

use bcwire::capture::{CaptureReader, CaptureWriter, Endian, Frame, TsResolution};
use std::io::BufWriter;

/// Gap between the end of one copy and the start of the next; longer than any session
/// timeout, so each copy's sessions are new.
const GAP_NS: i64 = 10_000_000_000;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [seed, out, frames] = args.as_slice() else {
        return Err("usage: make_bench_capture SEED.pcap OUT.pcap FRAMES".into());
    };
    let wanted: u64 = frames.parse()?;
    let mut reader = CaptureReader::open(seed)?;
    let mut seed_frames = Vec::new();
    let mut frame = Frame::default();
    while reader.read_into(&mut frame)? {
        seed_frames.push(frame.clone());
    }
    let (Some(first), Some(last)) = (seed_frames.first(), seed_frames.last()) else {
        return Err(format!("{seed}: no frames").into());
    };
    let link_type = first.link_type;
    if seed_frames.iter().any(|f| f.link_type != link_type) {
        return Err(format!("{seed}: more than one link type").into());
    }
    let period = (last.ts_ns - first.ts_ns).max(0) + GAP_NS;
    let file = std::fs::File::create(out)?;
    let mut w = CaptureWriter::pcap(
        BufWriter::with_capacity(1 << 20, file),
        link_type,
        TsResolution::MICRO,
        Endian::Little,
        65535,
    )?;
    let mut written = 0u64;
    let mut copy = 0i64;
    while written < wanted {
        for f in &seed_frames {
            if written == wanted {
                break;
            }
            w.write_frame(0, f.ts_ns + copy * period, f.orig_len, &f.data)?;
            written += 1;
        }
        copy += 1;
    }
    w.flush()?;
    eprintln!("{out}: {written} frames ({copy} copies of {seed})");
    Ok(())
}
