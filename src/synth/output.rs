//! Framing and writing: UDP/IP/link frames through `net::build::frame_udp` (IPv4
//! fragments above the MTU), records through `capture::CaptureWriter`.

use crate::capture::writer::{self, InterfaceInfo};
use crate::capture::{link_type, CaptureWriter, Endian, TsResolution};
use crate::net::build::{frame_udp, BuildOptions};
use std::io::Write;
use std::net::SocketAddr;

/// Capture container.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Pcap,
    Pcapng,
}

/// Link layer of the written frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Link {
    Ethernet,
    Sll2,
    Null,
    Raw,
}

impl Link {
    pub fn link_type(self) -> u32 {
        match self {
            Link::Ethernet => link_type::ETHERNET,
            Link::Sll2 => link_type::LINUX_SLL2,
            Link::Null => link_type::NULL,
            Link::Raw => link_type::RAW,
        }
    }
}

/// Capture start: 2002-02-28, the game's release month.
pub const EPOCH_NS: i64 = 1_014_854_400_000_000_000;
/// Consecutive datagrams are at least this far apart (ns), so capture order is time order.
const MIN_GAP_NS: i64 = 7_000;

pub struct Output<W: Write> {
    writer: CaptureWriter<W>,
    link: u32,
    opts: BuildOptions,
    last_ns: i64,
    pub frames: u64,
    pub datagrams: u64,
}

impl<W: Write> Output<W> {
    pub fn new(out: W, format: Format, link: Link, mtu: usize) -> anyhow::Result<Output<W>> {
        let lt = link.link_type();
        let writer = match format {
            Format::Pcap => {
                CaptureWriter::pcap(out, lt, TsResolution::MICRO, Endian::Little, 65535)?
            }
            Format::Pcapng => {
                let appl = writer::user_application();
                let mut w = CaptureWriter::pcapng_with(out, Endian::Little, Some(&appl))?;
                let info = InterfaceInfo {
                    name: Some("synth0".into()),
                    description: Some(format!(
                        "simulated {} link of a Bridge Commander session",
                        link_type::name(lt)
                    )),
                };
                w.add_interface_with(lt as u16, 65535, TsResolution::MICRO, 0, &info)?;
                w
            }
        };
        Ok(Output {
            writer,
            link: lt,
            opts: BuildOptions {
                mtu,
                ..BuildOptions::default()
            },
            last_ns: i64::MIN,
            frames: 0,
            datagrams: 0,
        })
    }

    /// Write one datagram sent at `t` seconds into the session; returns the time it
    /// was stamped with (never before the previous datagram).
    pub fn write(
        &mut self,
        t: f64,
        src: SocketAddr,
        dst: SocketAddr,
        payload: &[u8],
    ) -> anyhow::Result<f64> {
        let want = ((t * 1e6).round() as i64) * 1000;
        let rel = if self.last_ns == i64::MIN {
            want
        } else {
            want.max(self.last_ns + MIN_GAP_NS)
        };
        self.last_ns = rel;
        let frames = frame_udp(self.link, src, dst, payload, &self.opts)
            .map_err(|e| anyhow::anyhow!("framing a {}-byte datagram: {e}", payload.len()))?;
        // IPv4 identification advances per datagram, as a sender's stack does.
        self.opts.ip_id = (self.opts.ip_id + 1) & 0xFFFF;
        for f in &frames {
            self.writer
                .write_frame(0, EPOCH_NS + rel, f.len() as u32, f)?;
            self.frames += 1;
        }
        self.datagrams += 1;
        Ok(rel as f64 / 1e9)
    }

    pub fn finish(mut self) -> anyhow::Result<W> {
        self.writer.flush()?;
        Ok(self.writer.into_inner())
    }
}
