//! The one sort of `(u64, u64)` pairs the crate uses (calibration's medians, fair shares, the
//! order of unknown fields on the wire): one instance of the sort code in the `.wasm`.

/// Sort pairs in tuple order. Used with unique keys (or keys whose equal pairs are identical), so
/// the unstable sort gives what a stable one would.
pub fn sort_pairs(v: &mut [(u64, u64)]) {
    v.sort_unstable();
}
