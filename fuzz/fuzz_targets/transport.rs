//! Fuzz target `transport`: see `bcwire_fuzz::transport` in fuzz/src/lib.rs.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| bcwire_fuzz::transport(data));
