//! Without the `tables` feature there is no table model: every table is
//! the layout rules' own, and there is nothing to say about a model.

use super::layout::{Piece, Region};
use crate::bounds::Cancel;
use crate::document::Block;
use crate::options::Options;

/// The table model's work over one file, in a build without it: none.
pub(crate) struct Learned<'a>(std::marker::PhantomData<&'a ()>);

// The same calls as the model's `Learned`, so the PDF reader is one code
// path with or without the feature.
#[allow(clippy::unused_self)]
impl Learned<'_> {
    pub(crate) fn new(_bytes: &[u8], _options: &Options) -> Self {
        Self(std::marker::PhantomData)
    }

    /// Never: a build without the model keeps no words for it.
    pub(crate) fn wanted(&self) -> bool {
        false
    }

    /// Leaves the rules' tables as they are.
    pub(crate) fn restructure(
        &mut self,
        _index: usize,
        _blocks: &mut [Block],
        _regions: &[Option<Region>],
        _pieces: &[Piece],
        _cancel: &Cancel,
    ) {
    }

    /// No notes: the build says nothing of a model it does not have.
    pub(crate) fn notes(&self) -> Vec<String> {
        Vec::new()
    }
}
