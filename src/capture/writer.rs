//! Capture writer: classic pcap (µs/ns, either byte order) and pcapng (sections,
//! interfaces with their own link type, name, `if_tsresol` and `if_tsoffset`, packet
//! comments), streaming to any `Write` through pcap-file's `PcapWriter` and
//! `PcapNgWriter`. Used by the synthetic capture generator, `-w` and the tests.

use super::format::*;
use pcap_file::pcap::{PcapHeader, PcapTsResolution, PcapWriter, RawPcapPacket};
use pcap_file::pcapng::blocks::enhanced_packet::{EnhancedPacketBlock, EnhancedPacketOption};
use pcap_file::pcapng::blocks::interface_description::{
    InterfaceDescriptionBlock, InterfaceDescriptionOption, InterfaceTsResolution,
};
use pcap_file::pcapng::blocks::opt_common::CommonOption;
use pcap_file::pcapng::blocks::section_header::{SectionHeaderBlock, SectionHeaderOption};
use pcap_file::pcapng::{PcapNgWriter, RawBlock};
use pcap_file::{DataLink, Endianness};
use std::borrow::Cow;
use std::io::{self, Write};
use std::time::Duration;

/// What a pcapng interface description says beyond its link type and timing.
#[derive(Debug, Clone, Default)]
pub struct InterfaceInfo {
    /// `if_name`.
    pub name: Option<String>,
    /// `if_description`.
    pub description: Option<String>,
}

enum Kind<W: Write> {
    Pcap {
        w: PcapWriter<W>,
        endian: Endian,
        resolution: TsResolution,
    },
    PcapNg {
        w: PcapNgWriter<W>,
        endian: Endian,
        /// Per interface of the current section: (resolution, offset in seconds).
        interfaces: Vec<(TsResolution, i64)>,
    },
}

pub struct CaptureWriter<W: Write> {
    kind: Kind<W>,
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

/// pcap-file's write errors, as I/O errors (the I/O cause itself when there is one).
fn io_err(e: impl std::error::Error + Send + Sync + 'static) -> io::Error {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(&e);
    while let Some(c) = cause {
        if let Some(io) = c.downcast_ref::<io::Error>() {
            return io::Error::new(io.kind(), e.to_string());
        }
        cause = c.source();
    }
    invalid(e.to_string())
}

fn endianness(endian: Endian) -> Endianness {
    match endian {
        Endian::Little => Endianness::Little,
        Endian::Big => Endianness::Big,
    }
}

/// The section header's `shb_userappl`: this program and its version.
pub fn user_application() -> String {
    format!("bcwire {}", env!("CARGO_PKG_VERSION"))
}

impl<W: Write> CaptureWriter<W> {
    /// Writes a classic pcap header. `resolution` must be µs or ns.
    pub fn pcap(
        out: W,
        link_type: u32,
        resolution: TsResolution,
        endian: Endian,
        snaplen: u32,
    ) -> io::Result<Self> {
        let ts_resolution = match resolution {
            TsResolution::MICRO => PcapTsResolution::MicroSecond,
            TsResolution::NANO => PcapTsResolution::NanoSecond,
            other => {
                return Err(invalid(format!(
                    "classic pcap has only µs and ns timestamps, not {}",
                    other.describe()
                )))
            }
        };
        let header = PcapHeader {
            version_major: 2,
            version_minor: 4,
            ts_correction: 0,
            ts_accuracy: 0,
            snaplen,
            datalink: DataLink::from(link_type),
            ts_resolution,
            endianness: endianness(endian),
        };
        let w = PcapWriter::with_header(out, header).map_err(io_err)?;
        Ok(CaptureWriter {
            kind: Kind::Pcap {
                w,
                endian,
                resolution,
            },
        })
    }

    /// Writes a pcapng section header; add interfaces before frames.
    pub fn pcapng(out: W, endian: Endian) -> io::Result<Self> {
        Self::pcapng_with(out, endian, None)
    }

    /// Writes a pcapng section header naming the application that wrote it
    /// (`shb_userappl`), as Wireshark shows under Statistics › Capture File Properties.
    pub fn pcapng_with(out: W, endian: Endian, user_appl: Option<&str>) -> io::Result<Self> {
        let w = PcapNgWriter::with_section_header(out, section_header(endian, user_appl))
            .map_err(io_err)?;
        Ok(CaptureWriter {
            kind: Kind::PcapNg {
                w,
                endian,
                interfaces: Vec::new(),
            },
        })
    }

    /// Starts a new pcapng section (interfaces restart at 0).
    pub fn new_section(&mut self, endian: Endian) -> io::Result<()> {
        let Kind::PcapNg {
            w,
            endian: current,
            interfaces,
        } = &mut self.kind
        else {
            return Err(invalid("classic pcap has no sections".into()));
        };
        w.write_pcapng_block(section_header(endian, None))
            .map_err(io_err)?;
        *current = endian;
        interfaces.clear();
        Ok(())
    }

    /// Adds a pcapng interface; returns its id within the section.
    pub fn add_interface(
        &mut self,
        link_type: u16,
        snaplen: u32,
        resolution: TsResolution,
        offset_s: i64,
    ) -> io::Result<u32> {
        self.add_interface_with(
            link_type,
            snaplen,
            resolution,
            offset_s,
            &InterfaceInfo::default(),
        )
    }

    /// Adds a pcapng interface with its name and description.
    pub fn add_interface_with(
        &mut self,
        link_type: u16,
        snaplen: u32,
        resolution: TsResolution,
        offset_s: i64,
        info: &InterfaceInfo,
    ) -> io::Result<u32> {
        let Kind::PcapNg { w, interfaces, .. } = &mut self.kind else {
            return Err(invalid("classic pcap has one implicit interface".into()));
        };
        let mut idb = InterfaceDescriptionBlock::new(DataLink::from(u32::from(link_type)), snaplen);
        if let Some(name) = &info.name {
            idb.options
                .push(InterfaceDescriptionOption::IfName(Cow::Owned(name.clone())));
        }
        if let Some(d) = &info.description {
            idb.options
                .push(InterfaceDescriptionOption::IfDescription(Cow::Owned(
                    d.clone(),
                )));
        }
        if resolution != TsResolution::MICRO {
            let r = InterfaceTsResolution::from_u8(resolution.0).map_err(|_| {
                invalid(format!(
                    "pcapng timestamps of {} cannot be written",
                    resolution.describe()
                ))
            })?;
            idb.options.push(InterfaceDescriptionOption::IfTsResol(r));
        }
        if offset_s != 0 {
            idb.options
                .push(InterfaceDescriptionOption::IfTsOffset(offset_s));
        }
        w.write_pcapng_block(idb).map_err(io_err)?;
        interfaces.push((resolution, offset_s));
        Ok(interfaces.len() as u32 - 1)
    }

    /// Writes one frame. `interface` must be 0 for classic pcap.
    pub fn write_frame(
        &mut self,
        interface: u32,
        ts_ns: i64,
        orig_len: u32,
        data: &[u8],
    ) -> io::Result<()> {
        self.write_frame_with(interface, ts_ns, orig_len, data, None)
    }

    /// Writes one frame with a packet comment (pcapng `opt_comment`; classic pcap has
    /// nowhere to put one, so it is dropped there).
    pub fn write_frame_with(
        &mut self,
        interface: u32,
        ts_ns: i64,
        orig_len: u32,
        data: &[u8],
        comment: Option<&str>,
    ) -> io::Result<()> {
        let comments: Vec<&str> = comment.into_iter().collect();
        self.write_frame_comments(interface, ts_ns, orig_len, data, &comments)
    }

    /// Writes one frame with packet comments, one `opt_comment` each in this order
    /// (dropped in classic pcap, as by [`write_frame_with`](Self::write_frame_with)).
    pub fn write_frame_comments(
        &mut self,
        interface: u32,
        ts_ns: i64,
        orig_len: u32,
        data: &[u8],
        comments: &[&str],
    ) -> io::Result<()> {
        let caplen = u32::try_from(data.len()).map_err(|_| invalid("frame too long".into()))?;
        match &mut self.kind {
            Kind::Pcap { w, resolution, .. } => {
                if interface != 0 {
                    return Err(invalid(format!(
                        "classic pcap has no interface {interface}"
                    )));
                }
                let sec = u32::try_from(ts_ns.div_euclid(1_000_000_000))
                    .map_err(|_| invalid(format!("timestamp {ts_ns} ns outside pcap's range")))?;
                let sub_ns = ts_ns.rem_euclid(1_000_000_000);
                let frac = resolution.from_ns(i128::from(sub_ns)).unwrap_or(0) as u32;
                // The raw record keeps what was captured as it was, even a captured
                // length above the original one (the typed packet refuses it).
                let raw = RawPcapPacket {
                    ts_sec: sec,
                    ts_frac: frac,
                    incl_len: caplen,
                    orig_len,
                    data: Cow::Borrowed(data),
                };
                w.write_raw_packet(&raw).map_err(io_err)?;
                Ok(())
            }
            Kind::PcapNg {
                w,
                endian,
                interfaces,
            } => {
                let &(resolution, offset_s) = interfaces
                    .get(interface as usize)
                    .ok_or_else(|| invalid(format!("no interface {interface} in this section")))?;
                let rel = i128::from(ts_ns) - i128::from(offset_s) * 1_000_000_000;
                let units = resolution.from_ns(rel).ok_or_else(|| {
                    invalid(format!(
                        "timestamp {ts_ns} ns not representable on interface {interface}"
                    ))
                })?;
                let options: Vec<EnhancedPacketOption> = comments
                    .iter()
                    .map(|c| EnhancedPacketOption::Common(CommonOption::Comment(Cow::Borrowed(c))))
                    .collect();
                // pcap-file's typed block takes the time as a `Duration` since 1970
                // and wants the original length at least the captured one; a frame
                // read from a file that breaks either rule is written as it was read.
                let typed = ts_ns >= 0 && orig_len >= caplen;
                if typed {
                    let epb = EnhancedPacketBlock {
                        interface_id: interface,
                        timestamp: Duration::from_nanos(ts_ns as u64),
                        original_len: orig_len,
                        data: Cow::Borrowed(data),
                        options,
                    };
                    w.write_pcapng_block(epb).map_err(io_err)?;
                    return Ok(());
                }
                let e = *endian;
                let mut body = Vec::with_capacity(20 + data.len() + 3);
                body.extend_from_slice(&e.u32_bytes(interface));
                body.extend_from_slice(&e.u32_bytes((units >> 32) as u32));
                body.extend_from_slice(&e.u32_bytes(units as u32));
                body.extend_from_slice(&e.u32_bytes(caplen));
                body.extend_from_slice(&e.u32_bytes(orig_len));
                body.extend_from_slice(data);
                pad4(&mut body);
                for c in comments {
                    let len = u16::try_from(c.len())
                        .map_err(|_| invalid("packet comment too long".into()))?;
                    body.extend_from_slice(&e.u16_bytes(OPT_COMMENT));
                    body.extend_from_slice(&e.u16_bytes(len));
                    body.extend_from_slice(c.as_bytes());
                    pad4(&mut body);
                }
                if !comments.is_empty() {
                    body.extend_from_slice(&[0; 4]);
                }
                let total =
                    u32::try_from(body.len() + 12).map_err(|_| invalid("block too long".into()))?;
                let raw = RawBlock {
                    type_: PCAPNG_EPB,
                    initial_len: total,
                    body: Cow::Owned(body),
                    trailer_len: total,
                };
                w.write_raw_block(&raw).map_err(io_err)?;
                Ok(())
            }
        }
    }

    pub fn flush(&mut self) -> io::Result<()> {
        match &mut self.kind {
            Kind::Pcap { w, .. } => w.flush().map_err(io_err),
            Kind::PcapNg { w, .. } => w.get_mut().flush(),
        }
    }

    /// Byte order of what is being written.
    pub fn endian(&self) -> Endian {
        match &self.kind {
            Kind::Pcap { endian, .. } | Kind::PcapNg { endian, .. } => *endian,
        }
    }

    pub fn into_inner(self) -> W {
        match self.kind {
            Kind::Pcap { w, .. } => w.into_inner(),
            Kind::PcapNg { w, .. } => w.into_inner(),
        }
    }
}

fn section_header(endian: Endian, user_appl: Option<&str>) -> SectionHeaderBlock<'static> {
    SectionHeaderBlock {
        endianness: endianness(endian),
        major_version: 1,
        minor_version: 0,
        section_length: -1,
        options: user_appl
            .map(|a| SectionHeaderOption::UserApplication(Cow::Owned(a.to_string())))
            .into_iter()
            .collect(),
    }
}

fn pad4(v: &mut Vec<u8>) {
    while !v.len().is_multiple_of(4) {
        v.push(0);
    }
}
