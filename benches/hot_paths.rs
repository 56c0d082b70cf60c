//! Criterion benchmarks of the per-packet hot paths, on the datagrams of the shared
//! real-peer capture `b2_valentines_replay` (skipped with a note when it is absent).
//!
//! ```text
//! cargo bench --bench hot_paths            # all
//! cargo bench --bench hot_paths -- cipher  # one group
//! ```
//!
//! Whole-command comparisons (pipeline vs a bare read loop vs tshark, memory) are in
//! `scripts/bench.sh`; see docs/performance.md.

use bcwire::game::objects::ObjectRegistry;
use bcwire::game::opcodes::{self, DecodeContext};
use bcwire::game::ships::ShipCatalog;
use bcwire::game::stateupdate;
use bcwire::pipeline::record::{PacketBody, PacketRecord};
use bcwire::pipeline::{self, Config, Control, Pipeline, Sink};
use bcwire::report::json_stream::write_packet;
use bcwire::report::names::{Names, NoNames};
use bcwire::transport::{cipher, packet};
use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use std::path::PathBuf;

#[path = "../tests/it/common/mod.rs"]
mod common;

fn capture() -> Option<PathBuf> {
    let path = common::shared_dir()?
        .join("captures/openbc/b2_valentines_replay/b2_valentines_replay.pcap");
    path.is_file().then_some(path)
}

/// Everything the benchmarks feed on, taken from one pipeline run.
#[derive(Default)]
struct Inputs {
    /// Encrypted game datagrams.
    encrypted: Vec<Vec<u8>>,
    /// The same, decrypted.
    plain: Vec<Vec<u8>>,
    /// Complete game messages (opcode first), in capture order.
    game: Vec<Vec<u8>>,
    records: Vec<PacketRecord>,
}

impl Sink for Inputs {
    fn packet(&mut self, p: &PacketRecord, _: &dyn Names) -> anyhow::Result<Control> {
        if let PacketBody::Game(g) = &p.body {
            let mut enc = g.plain.clone();
            cipher::encrypt(&mut enc);
            self.encrypted.push(enc);
            self.plain.push(g.plain.clone());
            for m in &g.messages {
                if let (Some(start), Some(_)) = (m.payload_offset, &m.game) {
                    if let Some(b) = g.plain.get(start..m.offset + m.length) {
                        self.game.push(b.to_vec());
                    }
                }
            }
        }
        self.records.push(p.clone());
        Ok(Control::Continue)
    }
}

fn inputs() -> Option<Inputs> {
    let path = capture()?;
    let mut sink = Inputs::default();
    let reader = pipeline::open(path.to_str()?).ok()?;
    Pipeline::new(Config::default())
        .run(reader, &mut sink)
        .ok()?;
    Some(sink)
}

fn benches(c: &mut Criterion) {
    let Some(inp) = inputs() else { return };
    let bytes: usize = inp.encrypted.iter().map(Vec::len).sum();

    let mut g = c.benchmark_group("cipher");
    g.throughput(Throughput::Bytes(bytes as u64));
    g.bench_function("decrypt_capture", |b| {
        let mut buf = Vec::new();
        b.iter(|| {
            for d in &inp.encrypted {
                buf.clear();
                buf.extend_from_slice(d);
                cipher::decrypt(&mut buf);
                black_box(&buf);
            }
        })
    });
    g.bench_function("decrypt_capture_many", |b| {
        let mut bufs = vec![Vec::new(); cipher::LANES];
        b.iter(|| {
            for group in inp.encrypted.chunks(cipher::LANES) {
                for (buf, d) in bufs.iter_mut().zip(group) {
                    buf.clear();
                    buf.extend_from_slice(d);
                }
                let mut views: Vec<&mut [u8]> = bufs
                    .iter_mut()
                    .take(group.len())
                    .map(|v| v.as_mut_slice())
                    .collect();
                cipher::decrypt_many(&mut views);
                black_box(&views);
            }
        })
    });
    // The capture's batches mix a few long datagrams with many short ones; here every
    // lane is busy from start to end, which is the lanes' own speed.
    let uniform: Vec<Vec<u8>> = (0..cipher::LANES)
        .map(|i| (0..256).map(|j| (i * 31 + j * 7) as u8).collect())
        .collect();
    g.throughput(Throughput::Bytes((uniform.len() * 256) as u64));
    g.bench_function("decrypt_256x_one_by_one", |b| {
        let mut bufs = uniform.clone();
        b.iter(|| {
            for buf in &mut bufs {
                cipher::decrypt(buf);
            }
            black_box(&bufs);
        })
    });
    g.bench_function("decrypt_256x_many", |b| {
        let mut bufs = uniform.clone();
        b.iter(|| {
            let mut views: Vec<&mut [u8]> = bufs.iter_mut().map(|v| v.as_mut_slice()).collect();
            cipher::decrypt_many(&mut views);
            black_box(&views);
        })
    });
    // The worst mix for lanes: one long datagram (a fragment-sized 400 bytes) in a
    // batch of short ones (an ACK's 8), so that ordering by length cannot give it
    // long neighbours.
    let lopsided: Vec<Vec<u8>> = (0..cipher::LANES)
        .map(|i| {
            let len = if i == 0 { 400 } else { 8 };
            (0..len).map(|j| (i * 31 + j * 7) as u8).collect()
        })
        .collect();
    let lopsided_bytes: usize = lopsided.iter().map(Vec::len).sum();
    g.throughput(Throughput::Bytes(lopsided_bytes as u64));
    g.bench_function("decrypt_lopsided_many", |b| {
        let mut bufs = lopsided.clone();
        b.iter(|| {
            let mut views: Vec<&mut [u8]> = bufs.iter_mut().map(|v| v.as_mut_slice()).collect();
            cipher::decrypt_many(&mut views);
            black_box(&views);
        })
    });
    g.finish();

    let mut g = c.benchmark_group("transport");
    g.throughput(Throughput::Elements(inp.plain.len() as u64));
    g.bench_function("walk_capture", |b| {
        let mut pkt = packet::Packet::default();
        b.iter(|| {
            for d in &inp.plain {
                packet::parse_into(d, &mut pkt);
                black_box(&pkt);
            }
        })
    });
    g.finish();

    let catalog = ShipCatalog::stock();
    let mut registry = ObjectRegistry::new();
    for (k, m) in inp.game.iter().enumerate() {
        let g = opcodes::decode(m, &DecodeContext::new(&registry, &catalog));
        registry.observe(&g, k as u64, &catalog);
    }
    let updates: Vec<&Vec<u8>> = inp
        .game
        .iter()
        .filter(|m| m.first() == Some(&stateupdate::OPCODE))
        .collect();
    let ctx = DecodeContext::new(&registry, &catalog);

    let mut g = c.benchmark_group("stateupdate");
    g.throughput(Throughput::Elements(updates.len() as u64));
    for (name, ctx) in [("decode_full", ctx), ("decode_lean", ctx.lean())] {
        g.bench_function(name, |b| {
            b.iter(|| {
                for m in &updates {
                    black_box(opcodes::decode(m, &ctx));
                }
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group("opcodes");
    g.throughput(Throughput::Elements(inp.game.len() as u64));
    for (name, ctx) in [("decode_full", ctx), ("decode_lean", ctx.lean())] {
        g.bench_function(name, |b| {
            b.iter(|| {
                for m in &inp.game {
                    black_box(opcodes::decode(m, &ctx));
                }
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group("json");
    g.throughput(Throughput::Elements(inp.records.len() as u64));
    g.bench_function("write_packet", |b| {
        let mut out = Vec::new();
        let none = |_: u32| NoNames.describe_object(0, 0).map(std::rc::Rc::from);
        b.iter(|| {
            for p in &inp.records {
                out.clear();
                write_packet(&mut out, p, false, None, &none, &|_| true);
                black_box(&out);
            }
        })
    });
    g.finish();
}

criterion_group!(hot, benches);
criterion_main!(hot);
