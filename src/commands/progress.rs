//! Progress on stderr for long inputs, and `-v` warnings, both as wrappers around a sink
//! so the pipeline itself never prints.

use crate::capture::{CaptureError, CaptureReader};
use crate::pipeline::record::{PacketBody, PacketRecord};
use crate::pipeline::{Control, Sink};
use crate::report::names::Names;
use anyhow::Result;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{IsTerminal, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Inputs smaller than this finish before a bar would be worth drawing.
const PROGRESS_MIN_BYTES: u64 = 16 << 20;

/// Counts the bytes read through it, for the progress bar.
struct CountingReader<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// An open capture and, when stderr is a terminal and the input is large, a progress bar.
pub struct Input {
    pub reader: CaptureReader,
    pub progress: Option<Progress>,
}

pub struct Progress {
    bar: ProgressBar,
    read: Arc<AtomicU64>,
}

impl Progress {
    fn tick(&self) {
        self.bar.set_position(self.read.load(Ordering::Relaxed));
    }
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// Open `path` (`-` = standard input) with byte counting when a bar will be shown.
pub fn open(path: &str, quiet: bool) -> Result<Input> {
    let total = if path == "-" {
        None
    } else {
        std::fs::metadata(path).ok().map(|m| m.len())
    };
    let want_bar =
        !quiet && std::io::stderr().is_terminal() && total.is_none_or(|t| t >= PROGRESS_MIN_BYTES);
    if !want_bar {
        return Ok(Input {
            reader: crate::pipeline::open(path)?,
            progress: None,
        });
    }
    let read = Arc::new(AtomicU64::new(0));
    let source: Box<dyn Read + Send> = if path == "-" {
        Box::new(std::io::stdin())
    } else {
        Box::new(
            std::fs::File::open(path)
                .map_err(|e| anyhow::anyhow!("{path}: {}", CaptureError::from(e)))?,
        )
    };
    let reader = CaptureReader::new(CountingReader {
        inner: source,
        count: read.clone(),
    })
    .map_err(|e| anyhow::anyhow!("{path}: {e}"))?;
    let bar = match total {
        Some(t) => ProgressBar::new(t).with_style(
            ProgressStyle::with_template(
                "{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        ),
        None => ProgressBar::new_spinner().with_style(
            ProgressStyle::with_template("{spinner} {bytes} {bytes_per_sec}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        ),
    };
    bar.set_draw_target(ProgressDrawTarget::stderr_with_hz(4));
    Ok(Input {
        reader,
        progress: Some(Progress { bar, read }),
    })
}

/// Wraps a sink: advances the progress bar and, with `-v`, prints every located warning.
pub struct Observed<'a> {
    pub inner: &'a mut dyn Sink,
    pub progress: Option<&'a Progress>,
    pub verbose: bool,
    pub seen: u64,
}

impl Sink for Observed<'_> {
    fn packet(&mut self, p: &PacketRecord, names: &dyn Names) -> Result<Control> {
        self.seen += 1;
        if let Some(pr) = self.progress {
            if self.seen.is_multiple_of(4096) {
                pr.tick();
            }
        }
        if self.verbose {
            report_warnings(p);
        }
        self.inner.packet(p, names)
    }

    /// The wrapped sink decides (warnings, all that is read here, are in lean records).
    fn field_trees(&self) -> crate::pipeline::FieldTrees {
        self.inner.field_trees()
    }

    fn links_relays(&self) -> bool {
        self.inner.links_relays()
    }

    fn reads_flow_counts(&self) -> bool {
        self.inner.reads_flow_counts()
    }

    /// A tally holds no warnings to print: with `-v` the wrapped sink gets records.
    fn tallies(&self) -> bool {
        !self.verbose && self.inner.tallies()
    }

    fn tally(&mut self, t: &crate::pipeline::tally::Tally) {
        self.seen += 1;
        if let Some(pr) = self.progress {
            if self.seen.is_multiple_of(4096) {
                pr.tick();
            }
        }
        self.inner.tally(t);
    }

    fn session_ended(&mut self, session: usize) {
        self.inner.session_ended(session);
    }

    fn frame_read(&mut self, ts_ns: i64, ts_digits: u8) {
        self.inner.frame_read(ts_ns, ts_digits);
    }

    fn end(&mut self, names: &dyn Names) -> Result<crate::pipeline::Control> {
        self.inner.end(names)
    }

    fn selects_by_player(&self) -> bool {
        self.inner.selects_by_player()
    }
}

/// One stderr line per warning: frame, where, code, message.
fn report_warnings(p: &PacketRecord) {
    let PacketBody::Game(g) = &p.body else { return };
    for w in &g.warnings {
        eprintln!("bcwire: frame {}: datagram: {w}", p.frame);
    }
    for (i, m) in g.messages.iter().enumerate() {
        for w in &m.warnings {
            eprintln!(
                "bcwire: frame {} message {i} (offset {}): {w}",
                p.frame, m.offset
            );
        }
        let game = m.game.as_ref().or(m.assembled.as_ref().map(|a| &a.game));
        if let Some(game) = game {
            for w in &game.warnings {
                eprintln!(
                    "bcwire: frame {} message {i} 0x{:02X} {}: {w}",
                    p.frame, game.opcode, game.name
                );
            }
        }
    }
}
