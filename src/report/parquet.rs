//! `decode --format parquet`: one row per game message, typed columns, for engines made
//! to ask questions of billions of rows (DuckDB, Spark, Polars). See docs/scale.md.
//!
//! Rows are gathered in Arrow column builders and handed to the Parquet writer in
//! batches of [`BATCH_ROWS`]; row groups are cut at [`ROW_GROUP_ROWS`] so that what the
//! writer holds before flushing stays a few megabytes however long the capture.

use crate::game::qualified::opcode_qualifier;
use crate::game::registry::state_update_names as su;
use crate::game::registry::VECTOR_COMPONENTS;
use crate::game::stateupdate::{StateUpdate, SubsystemData};
use crate::game::subsys::byte_pct;
use crate::game::GameMessage;
use crate::pipeline::facts::Fact;
use crate::pipeline::record::{MessageRecord, PacketBody, PacketRecord};
use anyhow::{Context, Result};
use arrow_array::builder::{
    BooleanBuilder, Float32Builder, Float64Builder, Int64Builder, ListBuilder, StringBuilder,
    TimestampMicrosecondBuilder, UInt16Builder, UInt32Builder, UInt64Builder, UInt8Builder,
};
use arrow_array::{Array, ArrayRef, ListArray, RecordBatch, StructArray};
use arrow_buffer::{BooleanBufferBuilder, NullBuffer};
use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef, TimeUnit};
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

/// The opcode whose fields the `stateupdate` struct holds.
const STATE_UPDATE: u8 = 0x1C;

/// The list the warning facts (`warnings.code`, `warnings.kind`) are members of.
fn warnings_list() -> &'static str {
    let name = Fact::WarningCode.name();
    name.split_once('.').map_or(name, |(list, _)| list)
}

/// A warning fact's member name (`code` of `warnings.code`).
fn member(f: Fact) -> &'static str {
    f.name().rsplit_once('.').map_or(f.name(), |(_, m)| m)
}

/// A vector's struct: `x`, `y`, `z` (so SQL reads `stateupdate.position.x`).
fn xyz() -> Fields {
    VECTOR_COMPONENTS
        .into_iter()
        .map(|c| Field::new(c, DataType::Float32, false))
        .collect()
}

/// One record of a StateUpdate's 0x20 block: the registry's `subsystems.index` and
/// `subsystems.condition_pct`.
fn subsystem_record() -> Fields {
    Fields::from(vec![
        Field::new(su::INDEX, DataType::UInt8, false),
        Field::new(su::CONDITION_PCT, DataType::Float32, false),
    ])
}

/// One warning: the registry's `warnings.code` and `warnings.kind`.
fn warning() -> Fields {
    Fields::from(vec![
        Field::new(member(Fact::WarningCode), DataType::Utf8, false),
        Field::new(member(Fact::WarningKind), DataType::Utf8, false),
    ])
}

/// The StateUpdate's fields, under their qualified names' qualifier: the column
/// `stateupdate` is a struct, so `stateupdate.flags` is the registry's name and SQL's.
fn state_update_fields() -> Fields {
    Fields::from(vec![
        Field::new(su::GAME_TIME, DataType::Float32, false),
        Field::new(su::FLAGS, DataType::UInt8, false),
        Field::new(su::POSITION, DataType::Struct(xyz()), true),
        Field::new(su::DELTA, DataType::Struct(xyz()), true),
        Field::new(su::SPEED, DataType::Float32, true),
        Field::new(su::CLOAK, DataType::Boolean, true),
        Field::new(su::SUBSYSTEMS_START_INDEX, DataType::UInt8, true),
        Field::new(
            su::SUBSYSTEMS,
            DataType::List(Arc::new(Field::new(
                "item",
                DataType::Struct(subsystem_record()),
                true,
            ))),
            true,
        ),
    ])
}

/// The columns, in order (docs/scale.md describes each). Each is named as `bcwire list
/// fields` names the same value (a record fact or a decoded field, with its meaning),
/// but for the row keys `msg_index`, `reassembled` and `relay_of`.
pub fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new(Fact::Frame.name(), DataType::UInt64, false),
        // Microseconds: the unit every engine's timestamp functions take (Spark and
        // DuckDB's date_trunc refuse nanoseconds); the exact value is in time_ns.
        Field::new(
            Fact::Time.name(),
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        Field::new(Fact::TimeNs.name(), DataType::Int64, false),
        Field::new(Fact::TimeRelative.name(), DataType::Float64, false),
        Field::new(Fact::Session.name(), DataType::UInt32, false),
        Field::new(Fact::Client.name(), DataType::UInt32, false),
        Field::new(Fact::ClientPort.name(), DataType::UInt16, false),
        Field::new(Fact::ClientName.name(), DataType::Utf8, true),
        Field::new(Fact::Direction.name(), DataType::Utf8, false),
        Field::new(Fact::PeerId.name(), DataType::UInt8, false),
        Field::new("msg_index", DataType::UInt16, false),
        Field::new(Fact::Reliable.name(), DataType::Boolean, false),
        Field::new(Fact::Seq.name(), DataType::UInt16, true),
        Field::new(Fact::Retransmission.name(), DataType::Boolean, false),
        Field::new("reassembled", DataType::Boolean, false),
        Field::new("relay_of", DataType::UInt64, true),
        Field::new(Fact::Opcode.name(), DataType::UInt8, false),
        Field::new(Fact::Name.name(), DataType::Utf8, false),
        Field::new(Fact::Length.name(), DataType::UInt32, false),
        Field::new(Fact::GameLength.name(), DataType::UInt32, false),
        Field::new(Fact::ObjectId.name(), DataType::UInt32, true),
        Field::new(Fact::Ship.name(), DataType::Utf8, true),
        Field::new(
            opcode_qualifier(STATE_UPDATE).expect("StateUpdate has a name"),
            DataType::Struct(state_update_fields()),
            true,
        ),
        Field::new(
            warnings_list(),
            DataType::List(Arc::new(Field::new(
                "item",
                DataType::Struct(warning()),
                true,
            ))),
            false,
        ),
    ]))
}

/// Column builders of one batch. Nested columns are gathered flat and assembled into
/// their structs and lists when the batch is finished.
struct Columns {
    frame: UInt64Builder,
    time: TimestampMicrosecondBuilder,
    time_ns: Int64Builder,
    time_relative: Float64Builder,
    session: UInt32Builder,
    client: UInt32Builder,
    client_port: UInt16Builder,
    client_name: StringBuilder,
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
    game_length: UInt32Builder,
    object_id: UInt32Builder,
    ship: StringBuilder,
    /// Whether the row is a StateUpdate (its struct is null otherwise).
    state_update: BooleanBufferBuilder,
    game_time: Float32Builder,
    flags: UInt8Builder,
    position: [Float32Builder; 3],
    position_present: BooleanBufferBuilder,
    delta: [Float32Builder; 3],
    delta_present: BooleanBufferBuilder,
    speed: Float32Builder,
    cloak: BooleanBuilder,
    subsystems_start_index: UInt8Builder,
    subsystem_index: ListBuilder<UInt8Builder>,
    subsystem_condition: Float32Builder,
    warning_code: ListBuilder<StringBuilder>,
    warning_kind: StringBuilder,
}

/// A struct array of `fields` over `arrays`, null where `present` is false.
fn struct_of(
    fields: Fields,
    arrays: Vec<ArrayRef>,
    present: &mut BooleanBufferBuilder,
) -> ArrayRef {
    let nulls = NullBuffer::new(present.finish());
    Arc::new(StructArray::new(fields, arrays, Some(nulls)))
}

/// A list array whose offsets and nulls are `shape`'s, over `values`.
fn list_like(shape: &ListArray, item: Fields, values: ArrayRef) -> ArrayRef {
    Arc::new(ListArray::new(
        Arc::new(Field::new("item", DataType::Struct(item), true)),
        shape.offsets().clone(),
        values,
        shape.nulls().cloned(),
    ))
}

impl Columns {
    fn new() -> Columns {
        let n = BATCH_ROWS;
        let f32s = || Float32Builder::with_capacity(n);
        Columns {
            frame: UInt64Builder::with_capacity(n),
            time: TimestampMicrosecondBuilder::with_capacity(n).with_timezone("UTC"),
            time_ns: Int64Builder::with_capacity(n),
            time_relative: Float64Builder::with_capacity(n),
            session: UInt32Builder::with_capacity(n),
            client: UInt32Builder::with_capacity(n),
            client_port: UInt16Builder::with_capacity(n),
            client_name: StringBuilder::new(),
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
            game_length: UInt32Builder::with_capacity(n),
            object_id: UInt32Builder::with_capacity(n),
            ship: StringBuilder::new(),
            state_update: BooleanBufferBuilder::new(n),
            game_time: f32s(),
            flags: UInt8Builder::with_capacity(n),
            position: [f32s(), f32s(), f32s()],
            position_present: BooleanBufferBuilder::new(n),
            delta: [f32s(), f32s(), f32s()],
            delta_present: BooleanBufferBuilder::new(n),
            speed: f32s(),
            cloak: BooleanBuilder::with_capacity(n),
            subsystems_start_index: UInt8Builder::with_capacity(n),
            subsystem_index: ListBuilder::new(UInt8Builder::new()),
            subsystem_condition: Float32Builder::new(),
            warning_code: ListBuilder::new(StringBuilder::new()),
            warning_kind: StringBuilder::new(),
        }
    }

    /// The batch so far as arrays in [`schema`] order; the builders start afresh.
    fn finish(&mut self) -> Vec<ArrayRef> {
        let finish3 = |b: &mut [Float32Builder; 3]| -> Vec<ArrayRef> {
            b.iter_mut()
                .map(|c| Arc::new(c.finish()) as ArrayRef)
                .collect()
        };
        let position = struct_of(
            xyz(),
            finish3(&mut self.position),
            &mut self.position_present,
        );
        let delta = struct_of(xyz(), finish3(&mut self.delta), &mut self.delta_present);
        let index = self.subsystem_index.finish();
        let records = Arc::new(StructArray::new(
            subsystem_record(),
            vec![
                index.values().clone(),
                Arc::new(self.subsystem_condition.finish()),
            ],
            None,
        ));
        let subsystems = list_like(&index, subsystem_record(), records);
        let state_update = struct_of(
            state_update_fields(),
            vec![
                Arc::new(self.game_time.finish()),
                Arc::new(self.flags.finish()),
                position,
                delta,
                Arc::new(self.speed.finish()),
                Arc::new(self.cloak.finish()),
                Arc::new(self.subsystems_start_index.finish()),
                subsystems,
            ],
            &mut self.state_update,
        );
        let codes = self.warning_code.finish();
        let warnings = Arc::new(StructArray::new(
            warning(),
            vec![codes.values().clone(), Arc::new(self.warning_kind.finish())],
            None,
        ));
        let warnings = list_like(&codes, warning(), warnings);
        vec![
            Arc::new(self.frame.finish()),
            Arc::new(self.time.finish()),
            Arc::new(self.time_ns.finish()),
            Arc::new(self.time_relative.finish()),
            Arc::new(self.session.finish()),
            Arc::new(self.client.finish()),
            Arc::new(self.client_port.finish()),
            Arc::new(self.client_name.finish()),
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
            Arc::new(self.game_length.finish()),
            Arc::new(self.object_id.finish()),
            Arc::new(self.ship.finish()),
            state_update,
            warnings,
        ]
    }

    /// The StateUpdate columns of one row (a null struct for other messages; a
    /// struct's children still take a slot, as Arrow lays them out).
    fn state_update(&mut self, su: Option<&StateUpdate>) {
        self.state_update.append(su.is_some());
        let game_time = su.map_or(0.0, |su| su.game_time);
        self.game_time.append_value(game_time);
        self.flags.append_value(su.map_or(0, |su| su.flags));
        let pos = su.and_then(|su| su.position);
        self.position_present.append(pos.is_some());
        for (b, v) in self.position.iter_mut().zip(pos.unwrap_or([0.0; 3])) {
            b.append_value(v);
        }
        let delta = su.and_then(|su| su.delta.map(|d| d.vector()));
        self.delta_present.append(delta.is_some());
        for (b, v) in self.delta.iter_mut().zip(delta.unwrap_or([0.0; 3])) {
            b.append_value(v);
        }
        self.speed
            .append_option(su.and_then(|su| su.speed.map(|s| s.value())));
        self.cloak.append_option(su.and_then(|su| su.cloak));
        self.subsystems_start_index
            .append_option(su.and_then(|su| su.subsystem_start));
        match su.and_then(|su| su.subsystems.as_ref()) {
            Some(SubsystemData::Decoded(block)) => {
                for r in &block.records {
                    self.subsystem_index.values().append_value(r.index);
                    self.subsystem_condition
                        .append_value(byte_pct(r.condition) as f32);
                }
                self.subsystem_index.append(true);
            }
            // A block whose layout is unknown has no conditions to list: null, not
            // an empty list (which would claim a block with no records).
            _ => self.subsystem_index.append_null(),
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
        c.time.append_value(p.ts_ns.div_euclid(1000));
        c.time_ns.append_value(p.ts_ns);
        c.time_relative
            .append_value(p.ts_ns.saturating_sub(first_ts_ns) as f64 / 1e9);
        c.session.append_value(clamp_u32(p.session));
        c.client.append_value(clamp_u32(p.client));
        c.client_port.append_value(p.client_port());
        c.client_name.append_option(player);
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
        c.length.append_value(clamp_u32(m.length));
        c.game_length.append_value(clamp_u32(game.length));
        let object = game.object_id();
        c.object_id.append_option(object);
        c.ship.append_option(object.and_then(class_of));
        c.state_update(game.state_update());
        for w in m.warnings.iter().chain(&game.warnings) {
            c.warning_code.values().append_value(w.code.as_str());
            c.warning_kind.append_value(w.code.kind().as_str());
        }
        c.warning_code.append(true);
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
