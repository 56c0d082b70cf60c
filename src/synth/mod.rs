//! `bcwire synth`: a deterministic session simulator that writes realistic Bridge
//! Commander multiplayer captures through the crate's own encoders (transport,
//! game opcodes, StateUpdate, cipher, UDP/IP framing, pcap/pcapng writer).
//!
//! The same seed gives byte-identical output. Output streams to the writer as the
//! session runs, so memory stays constant however long the capture is. The returned
//! [`SynthReport`] holds the counts a decoder must reproduce, named as in the `stats`
//! JSON contract (docs/json.md). See docs/synth.md for the model and its limits.

pub mod baseline;
pub mod content;
pub mod model;
pub mod output;
pub mod peer;
pub mod report;
pub mod rng;
pub mod session;
pub mod world;

pub use model::{Model, Preset};
pub use output::{Format, Link};
pub use report::{DirectionCounts, Directions, EmittedMessage, SynthReport};

use anyhow::{bail, Context};
use std::io::{BufWriter, Write};
use std::path::PathBuf;

/// Options of `bcwire synth`.
#[derive(clap::Args, Debug, Clone)]
pub struct SynthArgs {
    /// Number of clients that join (1–15).
    #[arg(long, default_value_t = 3)]
    pub players: usize,
    /// Session length in minutes (default 1 unless --packets is given).
    #[arg(long)]
    pub minutes: Option<f64>,
    /// Seed of the simulation; the same seed writes the same bytes.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Capture file to write; `-` writes to standard output.
    #[arg(long, short)]
    pub out: PathBuf,
    /// Container: pcapng, or pcap; by default from `--out`'s extension (`.pcap` is pcap,
    /// anything else pcapng).
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    #[arg(long, value_enum, default_value_t = Link::Ethernet)]
    pub link: Link,
    /// Largest IP packet; larger datagrams are sent as IPv4 fragments.
    #[arg(long, default_value_t = 1500)]
    pub mtu: usize,
    /// Fraction of game datagrams lost on the way (0–1): they are in the capture but
    /// never arrive, so reliable messages in them are resent after ~1 s.
    #[arg(long, default_value_t = 0.0)]
    pub loss: f64,
    /// Fraction of game datagrams the network delivers twice.
    #[arg(long, default_value_t = 0.002)]
    pub duplicate: f64,
    /// Fraction of game datagrams that arrive after the next one on their link
    /// [default: 0.002, or 0 with --preset: its reliable messages go out in datagrams
    /// close together, whose reordering a decoder reports as sequence warnings].
    #[arg(long, value_name = "REORDER")]
    pub reorder: Option<f64>,
    /// Stop after this many datagrams (for benchmark inputs).
    #[arg(long)]
    pub packets: Option<u64>,
    /// UDP port of the host.
    #[arg(long, default_value_t = 22101)]
    pub port: u16,
    /// The first client stops acknowledging anything this many seconds into the
    /// session (it stays connected and goes on sending); the host keeps resending.
    #[arg(long, value_name = "SECONDS")]
    pub stop_acking: Option<f64>,
    /// Model values of a measured session. `stock-battle`: the 34-minute, 3-player
    /// battle on a stock server (about 70,000 datagrams each way; 1 transport message
    /// in 42 % of them, 2 in 23 %, 3 in 26 %; 0x15 collisions; docs/synth.md compares
    /// target and produced figures). 34 minutes unless --minutes or --packets is given;
    /// with --packets N it runs to N datagrams with the same shape.
    #[arg(long, value_enum)]
    pub preset: Option<Preset>,
    /// Keep every delivered game message in the report (for round-trip tests).
    #[arg(skip)]
    pub record_messages: bool,
}

impl SynthArgs {
    /// Arguments with the defaults of the command line, writing to `out`.
    pub fn new(out: impl Into<PathBuf>) -> SynthArgs {
        SynthArgs {
            players: 3,
            minutes: None,
            seed: 1,
            out: out.into(),
            format: None,
            link: Link::Ethernet,
            mtu: 1500,
            loss: 0.0,
            duplicate: 0.002,
            reorder: None,
            packets: None,
            port: 22101,
            stop_acking: None,
            preset: None,
            record_messages: false,
        }
    }

    fn config(&self) -> anyhow::Result<session::Config> {
        if !(1..=15).contains(&self.players) {
            bail!("--players must be 1..=15, got {}", self.players);
        }
        for (name, v) in [
            ("loss", self.loss),
            ("duplicate", self.duplicate),
            ("reorder", self.reorder()),
        ] {
            if !(0.0..=1.0).contains(&v) {
                bail!("--{name} must be between 0 and 1, got {v}");
            }
        }
        if self
            .stop_acking
            .is_some_and(|t| !(t >= 0.0 && t.is_finite()))
        {
            bail!("--stop-acking must be a time in seconds, 0 or more");
        }
        if self.loss >= 1.0 {
            bail!("--loss 1 would deliver nothing");
        }
        if self.mtu < 68 {
            bail!(
                "--mtu must be at least 68 (the IPv4 minimum), got {}",
                self.mtu
            );
        }
        let duration = match (self.minutes, self.packets) {
            (Some(m), _) if !(m > 0.0 && m.is_finite()) => bail!("--minutes must be positive"),
            (Some(m), _) => Some(m * 60.0),
            (None, Some(_)) => None,
            (None, None) => Some(self.preset.map_or(1.0, Preset::minutes) * 60.0),
        };
        let model = self.preset.map(Preset::model).unwrap_or_default();
        Ok(session::Config {
            players: self.players,
            seed: self.seed,
            duration,
            max_datagrams: self.packets,
            loss: self.loss,
            duplicate: self.duplicate,
            reorder: self.reorder(),
            port: self.port,
            stop_acking: self.stop_acking,
            model,
        })
    }
}

impl SynthArgs {
    /// `--reorder`, or its default.
    pub fn reorder(&self) -> f64 {
        self.reorder
            .unwrap_or(if self.preset.is_some() { 0.0 } else { 0.002 })
    }

    /// The container to write: `--format`, or what `--out`'s extension says.
    pub fn container(&self) -> Format {
        self.format.unwrap_or_else(|| {
            let pcap = self
                .out
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("pcap"));
            if pcap {
                Format::Pcap
            } else {
                Format::Pcapng
            }
        })
    }
}

/// Write the capture to `args.out` and report what it contains.
pub fn run(args: &SynthArgs) -> anyhow::Result<SynthReport> {
    let file = crate::outfile::OutputFile::create(&args.out)?;
    let (report, w) = generate(args, BufWriter::with_capacity(1 << 16, file))?;
    w.into_inner()
        .map_err(|e| e.into_error())
        .with_context(|| format!("writing {}", args.out.display()))?
        .commit()?;
    Ok(report)
}

/// Write the capture to any writer (`args.out` is not used).
pub fn generate<W: Write>(args: &SynthArgs, out: W) -> anyhow::Result<(SynthReport, W)> {
    let cfg = args.config()?;
    let output = output::Output::new(out, args.container(), args.link, args.mtu)?;
    let sim = session::Sim::new(cfg, output, args.record_messages);
    let (acc, output, totals) = sim.run()?;
    let frames = output.frames;
    let duration = acc.first_ts.map_or(0.0, |f| acc.last_ts - f);
    let clients = acc.clients_seen();
    let (directions, messages) = acc.finish();
    let w = output.finish()?;
    Ok((
        SynthReport {
            seed: args.seed,
            players: args.players,
            duration,
            frames,
            sessions: usize::from(clients > 0),
            clients,
            directions,
            ships_created: totals.ships_created,
            deaths: totals.deaths,
            chats: totals.chats,
            clients_left: totals.clients_left,
            messages,
        },
        w,
    ))
}
