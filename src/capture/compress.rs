//! Compressed captures: gzip, Zstandard and LZ4 (frame format), recognised by their
//! magic bytes and decompressed as a stream, so a capture of any size is read in
//! constant memory whatever its file name (standard input included).

use std::fmt;
use std::io::{self, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// How a capture is compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    Gzip,
    Zstd,
    Lz4,
}

impl Compression {
    /// Recognises a compressed stream from its first four bytes.
    pub fn detect(first: &[u8]) -> Option<Compression> {
        match first {
            [0x1F, 0x8B, ..] => Some(Compression::Gzip),
            [0x28, 0xB5, 0x2F, 0xFD, ..] => Some(Compression::Zstd),
            [0x04, 0x22, 0x4D, 0x18, ..] => Some(Compression::Lz4),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
            Compression::Lz4 => "lz4",
        }
    }

    /// A decompressing reader over `src`. Gzip accepts concatenated members, as
    /// `gzip` and tshark do; LZ4 and Zstandard decode every frame of the stream.
    pub(crate) fn decoder(self, src: Box<dyn Read + Send>) -> io::Result<Box<dyn Read + Send>> {
        Ok(match self {
            Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(src)),
            Compression::Zstd => Box::new(zstd::stream::read::Decoder::new(src)?),
            Compression::Lz4 => Box::new(lz4_flex::frame::FrameDecoder::new(src)),
        })
    }
}

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Counts the compressed bytes a decoder pulls, for the compression ratio.
pub(crate) struct Counted<R> {
    pub inner: R,
    pub count: Arc<AtomicU64>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}
