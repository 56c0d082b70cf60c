//! bcwire: a dissector for the Star Trek: Bridge Commander multiplayer protocol.
//!
//! Data flows one way: `capture` → `net` → `flow` → `transport` → `game` → `report`.
//! Each stage is a value or small state machine fed one item at a time; no stage prints.
#![forbid(unsafe_code)]

pub mod capture;
pub mod cli;
pub mod commands;
pub mod diag;
pub mod flow;
pub mod game;
pub mod net;
pub mod outfile;
pub mod pipeline;
pub mod report;
pub mod sm;
pub mod synth;
pub mod transport;
