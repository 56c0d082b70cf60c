//! Drives the stages for one capture and hands records to a sink.

pub mod filter;
pub mod record;
pub mod summary;
