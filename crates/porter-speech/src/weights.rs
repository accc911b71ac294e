//! A loaded model's parts, as transcription uses them.

use crate::mel::Mel;
use crate::net::Network;
use crate::tokens::Vocabulary;

/// Everything transcription reads of a model: the network, its
/// vocabulary, the spectrogram maker, the tokens never written, and the
/// blank token not written first.
pub(crate) struct Weights {
    pub network: Network,
    pub vocabulary: Vocabulary,
    pub mel: Mel,
    pub suppressed: Vec<u32>,
    pub blank: u32,
}
