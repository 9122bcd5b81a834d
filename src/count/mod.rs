//! Whole-request token accounting the way providers bill it (SPEC §3).
