//! Capture writer: classic pcap (µs/ns, either byte order) and pcapng (sections,
//! interfaces with their own link type, `if_tsresol` and `if_tsoffset`), streaming to
//! any `Write`. Used by the synthetic capture generator and the tests.

use super::format::*;
use std::io::{self, Write};

enum Kind {
    Pcap {
        endian: Endian,
        resolution: TsResolution,
    },
    PcapNg {
        endian: Endian,
        /// Per interface of the current section: (resolution, offset in seconds).
        interfaces: Vec<(TsResolution, i64)>,
    },
}

pub struct CaptureWriter<W: Write> {
    out: W,
    kind: Kind,
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

impl<W: Write> CaptureWriter<W> {
    /// Writes a classic pcap header. `resolution` must be µs or ns.
    pub fn pcap(
        mut out: W,
        link_type: u32,
        resolution: TsResolution,
        endian: Endian,
        snaplen: u32,
    ) -> io::Result<Self> {
        let magic = match resolution {
            TsResolution::MICRO => PCAP_MAGIC_US,
            TsResolution::NANO => PCAP_MAGIC_NS,
            other => {
                return Err(invalid(format!(
                    "classic pcap has only µs and ns timestamps, not {}",
                    other.describe()
                )))
            }
        };
        let mut h = Vec::with_capacity(24);
        h.extend_from_slice(&endian.u32_bytes(magic));
        h.extend_from_slice(&endian.u16_bytes(2));
        h.extend_from_slice(&endian.u16_bytes(4));
        h.extend_from_slice(&[0; 8]); // thiszone, sigfigs
        h.extend_from_slice(&endian.u32_bytes(snaplen));
        h.extend_from_slice(&endian.u32_bytes(link_type));
        out.write_all(&h)?;
        Ok(CaptureWriter {
            out,
            kind: Kind::Pcap { endian, resolution },
        })
    }

    /// Writes a pcapng section header; add interfaces before frames.
    pub fn pcapng(out: W, endian: Endian) -> io::Result<Self> {
        let mut w = CaptureWriter {
            out,
            kind: Kind::PcapNg {
                endian,
                interfaces: Vec::new(),
            },
        };
        w.new_section(endian)?;
        Ok(w)
    }

    /// Starts a new pcapng section (interfaces restart at 0).
    pub fn new_section(&mut self, endian: Endian) -> io::Result<()> {
        let Kind::PcapNg { .. } = self.kind else {
            return Err(invalid("classic pcap has no sections".into()));
        };
        let mut body = Vec::with_capacity(16);
        body.extend_from_slice(&endian.u32_bytes(PCAPNG_BYTE_ORDER));
        body.extend_from_slice(&endian.u16_bytes(1));
        body.extend_from_slice(&endian.u16_bytes(0));
        body.extend_from_slice(&endian.u64_bytes(u64::MAX)); // section length unknown
        self.kind = Kind::PcapNg {
            endian,
            interfaces: Vec::new(),
        };
        write_block(&mut self.out, endian, PCAPNG_SHB, &body)
    }

    /// Adds a pcapng interface; returns its id within the section.
    pub fn add_interface(
        &mut self,
        link_type: u16,
        snaplen: u32,
        resolution: TsResolution,
        offset_s: i64,
    ) -> io::Result<u32> {
        let Kind::PcapNg { endian, interfaces } = &mut self.kind else {
            return Err(invalid("classic pcap has one implicit interface".into()));
        };
        let endian = *endian;
        let mut body = Vec::with_capacity(40);
        body.extend_from_slice(&endian.u16_bytes(link_type));
        body.extend_from_slice(&endian.u16_bytes(0));
        body.extend_from_slice(&endian.u32_bytes(snaplen));
        if resolution != TsResolution::MICRO {
            push_option(&mut body, endian, OPT_IF_TSRESOL, &[resolution.0]);
        }
        if offset_s != 0 {
            push_option(
                &mut body,
                endian,
                OPT_IF_TSOFFSET,
                &endian.u64_bytes(offset_s as u64),
            );
        }
        if body.len() > 8 {
            push_option(&mut body, endian, OPT_END, &[]);
        }
        interfaces.push((resolution, offset_s));
        let id = interfaces.len() as u32 - 1;
        write_block(&mut self.out, endian, PCAPNG_IDB, &body)?;
        Ok(id)
    }

    /// Writes one frame. `interface` must be 0 for classic pcap.
    pub fn write_frame(
        &mut self,
        interface: u32,
        ts_ns: i64,
        orig_len: u32,
        data: &[u8],
    ) -> io::Result<()> {
        let caplen = u32::try_from(data.len()).map_err(|_| invalid("frame too long".into()))?;
        match &self.kind {
            Kind::Pcap { endian, resolution } => {
                if interface != 0 {
                    return Err(invalid(format!(
                        "classic pcap has no interface {interface}"
                    )));
                }
                let sec = u32::try_from(ts_ns.div_euclid(1_000_000_000))
                    .map_err(|_| invalid(format!("timestamp {ts_ns} ns outside pcap's range")))?;
                let sub_ns = ts_ns.rem_euclid(1_000_000_000);
                let frac = resolution.from_ns(i128::from(sub_ns)).unwrap_or(0) as u32;
                let mut h = [0u8; 16];
                h[0..4].copy_from_slice(&endian.u32_bytes(sec));
                h[4..8].copy_from_slice(&endian.u32_bytes(frac));
                h[8..12].copy_from_slice(&endian.u32_bytes(caplen));
                h[12..16].copy_from_slice(&endian.u32_bytes(orig_len));
                self.out.write_all(&h)?;
                self.out.write_all(data)
            }
            Kind::PcapNg { endian, interfaces } => {
                let endian = *endian;
                let &(resolution, offset_s) = interfaces
                    .get(interface as usize)
                    .ok_or_else(|| invalid(format!("no interface {interface} in this section")))?;
                let rel = i128::from(ts_ns) - i128::from(offset_s) * 1_000_000_000;
                let units = resolution.from_ns(rel).ok_or_else(|| {
                    invalid(format!(
                        "timestamp {ts_ns} ns not representable on interface {interface}"
                    ))
                })?;
                let mut body = Vec::with_capacity(20 + data.len() + 3);
                body.extend_from_slice(&endian.u32_bytes(interface));
                body.extend_from_slice(&endian.u32_bytes((units >> 32) as u32));
                body.extend_from_slice(&endian.u32_bytes(units as u32));
                body.extend_from_slice(&endian.u32_bytes(caplen));
                body.extend_from_slice(&endian.u32_bytes(orig_len));
                body.extend_from_slice(data);
                pad4(&mut body);
                write_block(&mut self.out, endian, PCAPNG_EPB, &body)
            }
        }
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

fn pad4(v: &mut Vec<u8>) {
    while !v.len().is_multiple_of(4) {
        v.push(0);
    }
}

fn push_option(body: &mut Vec<u8>, endian: Endian, code: u16, value: &[u8]) {
    body.extend_from_slice(&endian.u16_bytes(code));
    body.extend_from_slice(&endian.u16_bytes(value.len() as u16));
    body.extend_from_slice(value);
    pad4(body);
}

/// Writes type, length, body (already padded) and the trailing length.
fn write_block(
    out: &mut impl Write,
    endian: Endian,
    block_type: u32,
    body: &[u8],
) -> io::Result<()> {
    let total = u32::try_from(body.len() + 12).map_err(|_| invalid("block too long".into()))?;
    out.write_all(&endian.u32_bytes(block_type))?;
    out.write_all(&endian.u32_bytes(total))?;
    out.write_all(body)?;
    out.write_all(&endian.u32_bytes(total))
}
