//! PLACEHOLDER until the copy engine lands (replaced on merge).
use std::path::Path;

#[derive(Debug, Clone, Copy, Default)]
pub struct Progress {
    pub bytes: u64,
    pub entries: u64,
}

#[derive(Debug, Clone, Default)]
pub struct Stats {
    pub bytes: u64,
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SnapError(String);

pub fn take(_: &Path, _: &Path, _: &mut dyn FnMut(Progress)) -> Result<Stats, SnapError> {
    Err(SnapError("placeholder".into()))
}
pub fn restore(_: &Path, _: &Path, _: &mut dyn FnMut(Progress)) -> Result<Stats, SnapError> {
    Err(SnapError("placeholder".into()))
}
pub fn apparent_bytes(_: &Path) -> Result<u64, SnapError> {
    Err(SnapError("placeholder".into()))
}
