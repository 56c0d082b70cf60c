//! Fuzz target `state_update`: see `bcwire_fuzz::state_update` in fuzz/src/lib.rs.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| bcwire_fuzz::state_update(data));
