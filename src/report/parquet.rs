//! `decode --format parquet`: one row per game message, typed columns, for engines made
//! to ask questions of billions of rows (DuckDB, Spark, Polars). See docs/scale.md.
//!
//! Rows are gathered in Arrow column builders and handed to the Parquet writer in
//! batches of [`BATCH_ROWS`]; row groups are cut at [`ROW_GROUP_ROWS`] so that what the
//! writer holds before flushing stays a few megabytes however long the capture.

use crate::game::stateupdate::{StateUpdate, SubsystemData};
use crate::game::GameMessage;
use crate::pipeline::record::{MessageRecord, PacketBody, PacketRecord};
use anyhow::{Context, Result};
use arrow_array::builder::{
    BooleanBuilder, Float32Builder, Float64Builder, Int64Builder, ListBuilder, StringBuilder,
    TimestampMicrosecondBuilder, UInt16Builder, UInt32Builder, UInt64Builder, UInt8Builder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use std::io::Write;
use std::sync::Arc;

/// Rows gathered before they are handed to the Parquet writer.
pub const BATCH_ROWS: usize = 16 * 1024;
/// Rows per Parquet row group: large enough for good column compression and cheap
/// metadata, small enough that the writer's buffered row group stays in a few MB.
pub const ROW_GROUP_ROWS: usize = 128 * 1024;

/// The columns, in order (docs/scale.md describes each).
pub fn schema() -> SchemaRef {
    let list_u8 = |name: &str| {
        Field::new(
            name,
            DataType::List(Arc::new(Field::new("item", DataType::UInt8, true))),
            true,
        )
    };
    Arc::new(Schema::new(vec![
        Field::new("frame", DataType::UInt64, false),
        // Microseconds: the unit every engine's timestamp functions take (Spark and
        // DuckDB's date_trunc refuse nanoseconds); the exact value is in ts_ns.
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        Field::new("ts_ns", DataType::Int64, false),
        Field::new("time_s", DataType::Float64, false),
        Field::new("session", DataType::UInt32, false),
        Field::new("client", DataType::UInt32, false),
        Field::new("client_port", DataType::UInt16, false),
        Field::new("player", DataType::Utf8, true),
        Field::new("direction", DataType::Utf8, false),
        Field::new("peer_id", DataType::UInt8, false),
        Field::new("msg_index", DataType::UInt16, false),
        Field::new("reliable", DataType::Boolean, false),
        Field::new("seq", DataType::UInt16, true),
        Field::new("retransmission", DataType::Boolean, false),
        Field::new("reassembled", DataType::Boolean, false),
        Field::new("relay_of", DataType::UInt64, true),
        Field::new("opcode", DataType::UInt8, false),
        Field::new("name", DataType::Utf8, false),
        Field::new("length", DataType::UInt32, false),
        Field::new("object_id", DataType::UInt32, true),
        Field::new("ship_class", DataType::Utf8, true),
        Field::new("game_time", DataType::Float32, true),
        Field::new("flags", DataType::UInt8, true),
        Field::new("pos_x", DataType::Float32, true),
        Field::new("pos_y", DataType::Float32, true),
        Field::new("pos_z", DataType::Float32, true),
        Field::new("delta_x", DataType::Float32, true),
        Field::new("delta_y", DataType::Float32, true),
        Field::new("delta_z", DataType::Float32, true),
        Field::new("speed", DataType::Float32, true),
        Field::new("cloak", DataType::Boolean, true),
        Field::new("subsystem_start", DataType::UInt8, true),
        list_u8("subsystem_index"),
        list_u8("subsystem_condition"),
        Field::new(
            "warnings",
            DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
            false,
        ),
    ]))
}

/// Column builders of one batch.
struct Columns {
    frame: UInt64Builder,
    ts: TimestampMicrosecondBuilder,
    ts_ns: Int64Builder,
    time_s: Float64Builder,
    session: UInt32Builder,
    client: UInt32Builder,
    client_port: UInt16Builder,
    player: StringBuilder,
    direction: StringBuilder,
    peer_id: UInt8Builder,
    msg_index: UInt16Builder,
    reliable: BooleanBuilder,
    seq: UInt16Builder,
    retransmission: BooleanBuilder,
    reassembled: BooleanBuilder,
    relay_of: UInt64Builder,
    opcode: UInt8Builder,
    name: StringBuilder,
    length: UInt32Builder,
    object_id: UInt32Builder,
    ship_class: StringBuilder,
    game_time: Float32Builder,
    flags: UInt8Builder,
    pos: [Float32Builder; 3],
    delta: [Float32Builder; 3],
    speed: Float32Builder,
    cloak: BooleanBuilder,
    subsystem_start: UInt8Builder,
    subsystem_index: ListBuilder<UInt8Builder>,
    subsystem_condition: ListBuilder<UInt8Builder>,
    warnings: ListBuilder<StringBuilder>,
}

impl Columns {
    fn new() -> Columns {
        let n = BATCH_ROWS;
        let f32s = || Float32Builder::with_capacity(n);
        Columns {
            frame: UInt64Builder::with_capacity(n),
            ts: TimestampMicrosecondBuilder::with_capacity(n).with_timezone("UTC"),
            ts_ns: Int64Builder::with_capacity(n),
            time_s: Float64Builder::with_capacity(n),
            session: UInt32Builder::with_capacity(n),
            client: UInt32Builder::with_capacity(n),
            client_port: UInt16Builder::with_capacity(n),
            player: StringBuilder::new(),
            direction: StringBuilder::new(),
            peer_id: UInt8Builder::with_capacity(n),
            msg_index: UInt16Builder::with_capacity(n),
            reliable: BooleanBuilder::with_capacity(n),
            seq: UInt16Builder::with_capacity(n),
            retransmission: BooleanBuilder::with_capacity(n),
            reassembled: BooleanBuilder::with_capacity(n),
            relay_of: UInt64Builder::with_capacity(n),
            opcode: UInt8Builder::with_capacity(n),
            name: StringBuilder::new(),
            length: UInt32Builder::with_capacity(n),
            object_id: UInt32Builder::with_capacity(n),
            ship_class: StringBuilder::new(),
            game_time: f32s(),
            flags: UInt8Builder::with_capacity(n),
            pos: [f32s(), f32s(), f32s()],
            delta: [f32s(), f32s(), f32s()],
            speed: f32s(),
            cloak: BooleanBuilder::with_capacity(n),
            subsystem_start: UInt8Builder::with_capacity(n),
            subsystem_index: ListBuilder::new(UInt8Builder::new()),
            subsystem_condition: ListBuilder::new(UInt8Builder::new()),
            warnings: ListBuilder::new(StringBuilder::new()),
        }
    }

    /// The batch so far as arrays in [`schema`] order; the builders start afresh.
    fn finish(&mut self) -> Vec<ArrayRef> {
        let [px, py, pz] = &mut self.pos;
        let [dx, dy, dz] = &mut self.delta;
        vec![
            Arc::new(self.frame.finish()),
            Arc::new(self.ts.finish()),
            Arc::new(self.ts_ns.finish()),
            Arc::new(self.time_s.finish()),
            Arc::new(self.session.finish()),
            Arc::new(self.client.finish()),
            Arc::new(self.client_port.finish()),
            Arc::new(self.player.finish()),
            Arc::new(self.direction.finish()),
            Arc::new(self.peer_id.finish()),
            Arc::new(self.msg_index.finish()),
            Arc::new(self.reliable.finish()),
            Arc::new(self.seq.finish()),
            Arc::new(self.retransmission.finish()),
            Arc::new(self.reassembled.finish()),
            Arc::new(self.relay_of.finish()),
            Arc::new(self.opcode.finish()),
            Arc::new(self.name.finish()),
            Arc::new(self.length.finish()),
            Arc::new(self.object_id.finish()),
            Arc::new(self.ship_class.finish()),
            Arc::new(self.game_time.finish()),
            Arc::new(self.flags.finish()),
            Arc::new(px.finish()),
            Arc::new(py.finish()),
            Arc::new(pz.finish()),
            Arc::new(dx.finish()),
            Arc::new(dy.finish()),
            Arc::new(dz.finish()),
            Arc::new(self.speed.finish()),
            Arc::new(self.cloak.finish()),
            Arc::new(self.subsystem_start.finish()),
            Arc::new(self.subsystem_index.finish()),
            Arc::new(self.subsystem_condition.finish()),
            Arc::new(self.warnings.finish()),
        ]
    }

    /// The StateUpdate columns of one row (all null for other messages).
    fn state_update(&mut self, su: Option<&StateUpdate>) {
        let Some(su) = su else {
            self.game_time.append_null();
            self.flags.append_null();
            for b in self.pos.iter_mut().chain(&mut self.delta) {
                b.append_null();
            }
            self.speed.append_null();
            self.cloak.append_null();
            self.subsystem_start.append_null();
            self.subsystem_index.append_null();
            self.subsystem_condition.append_null();
            return;
        };
        self.game_time.append_value(su.game_time);
        self.flags.append_value(su.flags);
        let pos = su.position.map(|p| p.map(Some)).unwrap_or([None; 3]);
        for (b, v) in self.pos.iter_mut().zip(pos) {
            b.append_option(v);
        }
        let delta = su.delta.map(|d| d.vector().map(Some)).unwrap_or([None; 3]);
        for (b, v) in self.delta.iter_mut().zip(delta) {
            b.append_option(v);
        }
        self.speed.append_option(su.speed.map(|s| s.value()));
        self.cloak.append_option(su.cloak);
        self.subsystem_start.append_option(su.subsystem_start);
        match &su.subsystems {
            Some(SubsystemData::Decoded(block)) => {
                for r in &block.records {
                    self.subsystem_index.values().append_value(r.index);
                    self.subsystem_condition.values().append_value(r.condition);
                }
                self.subsystem_index.append(true);
                self.subsystem_condition.append(true);
            }
            // A block whose layout is unknown has no conditions to list: null, not
            // an empty list (which would claim a block with no records).
            _ => {
                self.subsystem_index.append_null();
                self.subsystem_condition.append_null();
            }
        }
    }
}

/// Writes game-message rows of decoded records to a Parquet file.
pub struct ParquetRows<W: Write + Send> {
    writer: ArrowWriter<W>,
    schema: SchemaRef,
    cols: Columns,
    pending: usize,
    rows: u64,
    first_ts_ns: Option<i64>,
}

impl<W: Write + Send> ParquetRows<W> {
    pub fn new(out: W) -> Result<ParquetRows<W>> {
        let schema = schema();
        let props = WriterProperties::builder()
            // Snappy: pure Rust, fast, read by every Parquet engine.
            .set_compression(Compression::SNAPPY)
            .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
            .set_created_by(concat!("bcwire ", env!("CARGO_PKG_VERSION")).to_string())
            .build();
        let writer = ArrowWriter::try_new(out, schema.clone(), Some(props))
            .context("starting the Parquet writer")?;
        Ok(ParquetRows {
            writer,
            schema,
            cols: Columns::new(),
            pending: 0,
            rows: 0,
            first_ts_ns: None,
        })
    }

    /// Rows written so far (including those still gathered in the current batch).
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// One row per game message of `p` that `keep` selects: delivered, retransmitted
    /// copies (flagged) and messages completed by reassembly.
    pub fn packet(
        &mut self,
        p: &PacketRecord,
        player: Option<&str>,
        class_of: &dyn Fn(u32) -> Option<String>,
        keep: &dyn Fn(&MessageRecord) -> bool,
    ) -> Result<()> {
        let first = *self.first_ts_ns.get_or_insert(p.ts_ns);
        let PacketBody::Game(g) = &p.body else {
            return Ok(());
        };
        for (index, m) in g.messages.iter().enumerate() {
            let (game, reassembled) = match (&m.game, &m.assembled) {
                (Some(game), _) => (game, false),
                (None, Some(a)) => (&a.game, true),
                (None, None) => continue,
            };
            if !keep(m) {
                continue;
            }
            self.row(
                p,
                first,
                player,
                g.peer_id,
                index,
                m,
                game,
                reassembled,
                class_of,
            );
            if self.pending >= BATCH_ROWS {
                self.flush_batch()?;
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn row(
        &mut self,
        p: &PacketRecord,
        first_ts_ns: i64,
        player: Option<&str>,
        peer_id: u8,
        index: usize,
        m: &MessageRecord,
        game: &GameMessage,
        reassembled: bool,
        class_of: &dyn Fn(u32) -> Option<String>,
    ) {
        let c = &mut self.cols;
        c.frame.append_value(p.frame);
        c.ts.append_value(p.ts_ns.div_euclid(1000));
        c.ts_ns.append_value(p.ts_ns);
        c.time_s
            .append_value(p.ts_ns.saturating_sub(first_ts_ns) as f64 / 1e9);
        c.session.append_value(clamp_u32(p.session));
        c.client.append_value(clamp_u32(p.client));
        c.client_port.append_value(p.client_port());
        c.player.append_option(player);
        c.direction.append_value(p.direction.as_str());
        c.peer_id.append_value(peer_id);
        c.msg_index
            .append_value(u16::try_from(index).unwrap_or(u16::MAX));
        c.reliable.append_value(m.reliable());
        c.seq.append_option(m.seq());
        c.retransmission.append_value(m.retransmission);
        c.reassembled.append_value(reassembled);
        c.relay_of.append_option(m.relay_of);
        c.opcode.append_value(game.opcode);
        c.name.append_value(game.name);
        c.length.append_value(clamp_u32(game.length));
        let object = game.object_id();
        c.object_id.append_option(object);
        c.ship_class.append_option(object.and_then(class_of));
        c.state_update(game.state_update());
        for w in m.warnings.iter().chain(&game.warnings) {
            c.warnings.values().append_value(w.code.as_str());
        }
        c.warnings.append(true);
        self.pending += 1;
        self.rows += 1;
    }

    fn flush_batch(&mut self) -> Result<()> {
        if self.pending == 0 {
            return Ok(());
        }
        let batch = RecordBatch::try_new(self.schema.clone(), self.cols.finish())
            .context("building a Parquet batch")?;
        self.pending = 0;
        self.writer.write(&batch).context("writing Parquet rows")?;
        Ok(())
    }

    /// Writes what is gathered and the file footer; returns the writer.
    pub fn finish(mut self) -> Result<W> {
        self.flush_batch()?;
        self.writer
            .into_inner()
            .context("finishing the Parquet file")
    }
}

fn clamp_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}
