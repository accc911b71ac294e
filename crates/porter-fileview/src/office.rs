//! Office documents: DOCX, PPTX, XLSX/XLS/ODS to plain text lines.
//! (Stub: being written.)

use crate::bounds::{Cancel, Extracted, Failure};
use crate::options::Options;

/// What a zip package holds, by its relationships or main part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ZipKind {
    Docx,
    Pptx,
    Xlsx,
    Ods,
    /// A zip that is no Office package: listed as an archive.
    Plain,
}

pub(crate) fn zip_kind(_bytes: &[u8], _options: &Options) -> ZipKind {
    ZipKind::Plain
}

pub(crate) fn docx(
    _bytes: &[u8],
    _options: &Options,
    _cancel: &Cancel,
) -> Result<Extracted, Failure> {
    Err(Failure::unreadable("not yet"))
}

pub(crate) fn pptx(
    _bytes: &[u8],
    _options: &Options,
    _cancel: &Cancel,
) -> Result<Extracted, Failure> {
    Err(Failure::unreadable("not yet"))
}

/// Which workbook format `workbook` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WorkbookFormat {
    Xlsx,
    Xls,
    Ods,
}

pub(crate) fn workbook(
    _bytes: &[u8],
    _format: WorkbookFormat,
    _options: &Options,
    _cancel: &Cancel,
) -> Result<Extracted, Failure> {
    Err(Failure::unreadable("not yet"))
}
