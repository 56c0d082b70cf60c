//! Scrap Mechanic NetworkUpdate decoder (packets 21, 22 and 29), offline only.
//!
//! A second, unrelated protocol: the game's traffic runs over Steam's encrypted
//! transport, so this module decodes packets the user has already extracted (see
//! `docs/scrap-mechanic.md`). Layers, outermost first:
//!
//! - [`packet`]: LZ4 wire form, packet ids, compound packets
//! - [`delta`]: raw/delta sub-update framing and delta reconstruction
//! - [`update`]: NetworkUpdate header and bodies, read with [`bits`] (MSB-first)
//! - [`state`]: controller types learned from Creates (`--stateful`)
//! - [`decoder`]: drives the layers for one packet at a time
//! - [`cli`] / [`render`]: the `bcwire sm decode` command and its output

pub mod bits;
pub mod cli;
pub mod decoder;
pub mod delta;
pub mod names;
pub mod packet;
pub mod render;
pub mod state;
pub mod update;

#[cfg(test)]
mod trailing;
#[cfg(test)]
mod vectors;

pub use cli::{run, SmArgs};
pub use decoder::{DecodedSub, Decoder, Layer, Options, PacketReport, Stream};
