//! A compressed capture of 1 GB (decompressed) streams through the reader in constant
//! memory. The stream is made on the fly by a thread writing into a pipe: a pcap
//! header, then the same gzip member of records again and again (gzip readers take
//! concatenated members, as `gzip -d` does), so nothing of that size is ever stored.
//! The reading runs in a child process of the test binary that runs this one test
//! alone, so that the peak RSS measured is this reading's, not the other tests'.

use bcwire::capture::TsResolution;
use bcwire::capture::{link_type, CaptureReader, CaptureWriter, Compression, Endian, Frame};
use std::io::Write;

/// Decompressed size of the stream.
const TOTAL_BYTES: u64 = 1 << 30;
/// Limit on the process's peak resident set.
const MAX_RSS_KB: u64 = 64 * 1024;

fn vm_hwm_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// Set in the child process that does the reading.
const CHILD: &str = "BCWIRE_RSS_CHILD";

#[test]
fn a_gigabyte_of_compressed_capture_stays_under_64_mb() {
    if !std::path::Path::new("/proc/self/status").exists() {
        eprintln!("note: /proc/self/status not readable; skipping the RSS check");
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            "compressed_memory::stream_a_gigabyte_alone",
            "--ignored",
            "--test-threads=1",
            "--nocapture",
        ])
        .env(CHILD, "1")
        .output()
        .expect("run the test binary again");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    // Catches a child that ran no test and so measured nothing.
    assert!(stdout.contains("1 passed"), "{stdout}\n{stderr}");
    eprintln!("{stderr}");
}

/// The reading itself; run only as the child of the test above.
#[test]
#[ignore = "run in a child process by a_gigabyte_of_compressed_capture_stays_under_64_mb"]
fn stream_a_gigabyte_alone() {
    assert!(
        std::env::var_os(CHILD).is_some(),
        "run through a_gigabyte_of_compressed_capture_stays_under_64_mb"
    );
    let before = vm_hwm_kb().expect("/proc/self/status");
    // 4 MB of records: 1,400-byte frames of varied bytes, 1 ms apart.
    let mut w = CaptureWriter::pcap(
        Vec::new(),
        link_type::ETHERNET,
        TsResolution::MICRO,
        Endian::Little,
        65_535,
    )
    .unwrap();
    let mut data = vec![0u8; 1400];
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    for i in 0..2900u32 {
        for b in data.iter_mut() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *b = (x as u8) & 0x3F;
        }
        w.write_frame(
            0,
            1_700_000_000_000_000_000 + i64::from(i) * 1_000_000,
            1400,
            &data,
        )
        .unwrap();
    }
    let file = w.into_inner();
    let (header, records) = file.split_at(24);
    let per_member = records.len() as u64;
    let frames_per_member = 2900u64;
    let members = TOTAL_BYTES / per_member;
    let header_gz = gzip(header);
    let member = gzip(records);

    let (rx, mut tx) = std::io::pipe().expect("pipe");
    let producer = std::thread::spawn(move || -> std::io::Result<u64> {
        tx.write_all(&header_gz)?;
        let mut sent = header_gz.len() as u64;
        for _ in 0..members {
            tx.write_all(&member)?;
            sent += member.len() as u64;
        }
        Ok(sent)
    });

    let started = std::time::Instant::now();
    let mut reader = CaptureReader::new(rx).expect("capture header");
    assert_eq!(reader.compression(), Some(Compression::Gzip));
    let mut frame = Frame::default();
    let mut n = 0u64;
    let mut bytes = 0u64;
    while reader.read_into(&mut frame).expect("frame") {
        n += 1;
        bytes += frame.data.len() as u64;
    }
    let compressed = producer.join().unwrap().expect("producer");
    let peak = vm_hwm_kb().unwrap_or(0);
    eprintln!(
        "{} MB decompressed ({} MB compressed, {n} frames) in {:.1} s; peak RSS {} kB (before {} kB)",
        reader.bytes_read() >> 20,
        compressed >> 20,
        started.elapsed().as_secs_f64(),
        peak,
        before
    );
    assert!(reader.truncation().is_none());
    assert_eq!(n, members * frames_per_member);
    assert_eq!(bytes, n * 1400);
    assert_eq!(reader.bytes_read(), 24 + members * per_member);
    assert!(reader.bytes_read() >= TOTAL_BYTES - per_member);
    assert!(
        peak < MAX_RSS_KB,
        "peak RSS {peak} kB is over {MAX_RSS_KB} kB"
    );
}
