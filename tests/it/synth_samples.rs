//! The sample captures in captures/ are exactly what `synth` writes for the command
//! lines in captures/README.md; regenerating them here catches any drift.
//!
//! To rewrite them after an intended change: `BCWIRE_REGENERATE_SAMPLES=1 cargo test
//! --profile test-release --test it synth_samples`.

use bcwire::synth::{self, Format, Link, SynthArgs};
use std::path::PathBuf;

struct Sample {
    file: &'static str,
    /// The `bcwire synth` options (documented in captures/README.md).
    command: &'static str,
    args: fn(PathBuf) -> SynthArgs,
}

const SAMPLES: [Sample; 3] = [
    Sample {
        file: "sample.pcapng",
        command: "--players 3 --minutes 1 --seed 1",
        args: |out| {
            let mut a = SynthArgs::new(out);
            a.players = 3;
            a.minutes = Some(1.0);
            a.seed = 1;
            a
        },
    },
    Sample {
        file: "duel-sll2.pcap",
        command: "--players 2 --minutes 0.5 --seed 2 --format pcap --link sll2 --loss 0.05",
        args: |out| {
            let mut a = SynthArgs::new(out);
            a.players = 2;
            a.minutes = Some(0.5);
            a.seed = 2;
            a.format = Some(Format::Pcap);
            a.link = Link::Sll2;
            a.loss = 0.05;
            a
        },
    },
    Sample {
        file: "mtu400-null.pcapng",
        command: "--players 2 --minutes 0.25 --seed 3 --link null --mtu 400",
        args: |out| {
            let mut a = SynthArgs::new(out);
            a.players = 2;
            a.minutes = Some(0.25);
            a.seed = 3;
            a.link = Link::Null;
            a.mtu = 400;
            a
        },
    },
];

fn captures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("captures")
}

#[test]
fn samples_regenerate_byte_for_byte() {
    let regenerate = std::env::var_os("BCWIRE_REGENERATE_SAMPLES").is_some();
    let readme = std::fs::read_to_string(captures_dir().join("README.md")).unwrap();
    let tmp_dir = tempfile::tempdir().unwrap();
    let tmp = tmp_dir.path();
    for s in &SAMPLES {
        let line = format!("bcwire synth {} --out captures/{}", s.command, s.file);
        assert!(readme.contains(&line), "captures/README.md lacks `{line}`");
        let checked_in = captures_dir().join(s.file);
        if regenerate {
            synth::run(&(s.args)(checked_in.clone())).unwrap();
        }
        let out = tmp.join(s.file);
        let report = synth::run(&(s.args)(out.clone())).unwrap();
        let fresh = std::fs::read(&out).unwrap();
        let old = std::fs::read(&checked_in).unwrap();
        assert!(old.len() < 1 << 20, "{} is {} bytes", s.file, old.len());
        assert!(fresh == old, "{} drifted from its command line", s.file);
        assert!(report.directions.c2s.datagrams > 0);
    }
}
