//! Fuzz target `capture_read`: see `bcwire_fuzz::capture_read` in fuzz/src/lib.rs.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| bcwire_fuzz::capture_read(data));
