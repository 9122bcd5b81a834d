//! Figures as JS sees them: derived prices and factors without binary noise, estimates scaled
//! and rounded up.

/// Serialize a derived figure (a product of table constants) without binary noise: rounded to
/// nine decimals, so `1.05 × 1.1` reads `1.155`, not `1.1550000000000002`.
pub fn ser_round<S: serde::Serializer>(v: &f64, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_f64(if v.is_finite() { (v * 1e9).round() / 1e9 } else { *v })
}

/// [`ser_round`] for an optional figure.
pub fn ser_round_opt<S: serde::Serializer>(v: &Option<f64>, s: S) -> std::result::Result<S::Ok, S::Error> {
    match v {
        Some(x) => ser_round(x, s),
        None => s.serialize_none(),
    }
}

/// Apply an estimate factor to a raw count, rounding up, saturating at u32::MAX.
pub fn count_scale(raw: usize, factor: f64) -> u32 {
    let scaled = (raw as f64 * factor).ceil();
    if scaled >= f64::from(u32::MAX) {
        u32::MAX
    } else {
        scaled as u32
    }
}
