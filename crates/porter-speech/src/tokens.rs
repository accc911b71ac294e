//! Whisper's vocabulary (`vocabulary.txt`, one token a line, in GPT-2's
//! byte-level form where every byte is shown as a printable character) and
//! the special tokens the decoder is steered with, found by their text so
//! that the English-only and the multilingual vocabularies (whose special
//! tokens sit one place apart) both read.

/// Why a vocabulary could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct VocabularyError(pub String);

/// A vocabulary this large is the multilingual one (51,865 tokens; the
/// English-only one has 51,864, language tokens included), as Whisper
/// itself tells them apart.
const MULTILINGUAL_TOKENS: usize = 51_865;

/// The ids of the tokens that steer decoding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Special {
    pub end_of_text: u32,
    pub start_of_transcript: u32,
    pub english: Option<u32>,
    pub transcribe: u32,
    pub translate: u32,
    pub start_of_lm: Option<u32>,
    pub start_of_prev: u32,
    pub no_speech: u32,
    pub no_timestamps: u32,
    /// `<|0.00|>`; every later id is 20 ms more.
    pub timestamp_begin: u32,
    /// Whether the vocabulary has language tokens (a multilingual model).
    pub multilingual: bool,
}

/// The vocabulary: each token's bytes, and the special ones.
#[derive(Debug, Clone)]
pub(crate) struct Vocabulary {
    tokens: Vec<Vec<u8>>,
    pub special: Special,
    /// A multilingual model's language tokens and their codes ("en",
    /// "fr", ...): those between `<|startoftranscript|>` and
    /// `<|translate|>`.
    pub languages: Vec<(u32, String)>,
}

impl Vocabulary {
    /// Reads `vocabulary.txt`'s text.
    pub fn parse(text: &str) -> Result<Self, VocabularyError> {
        let decode = byte_decoder();
        let lines: Vec<&str> = text.lines().collect();
        let find = |token: &str| {
            lines
                .iter()
                .position(|line| *line == token)
                .map(|i| i as u32)
        };
        let need = |token: &str| {
            find(token).ok_or_else(|| {
                VocabularyError(format!("it has no {token} token, so it is not Whisper's"))
            })
        };
        let special = Special {
            end_of_text: need("<|endoftext|>")?,
            start_of_transcript: need("<|startoftranscript|>")?,
            english: find("<|en|>"),
            transcribe: need("<|transcribe|>")?,
            translate: need("<|translate|>")?,
            start_of_lm: find("<|startoflm|>"),
            start_of_prev: need("<|startofprev|>")?,
            no_speech: find("<|nocaptions|>")
                .or_else(|| find("<|nospeech|>"))
                .ok_or_else(|| VocabularyError("it has no no-speech token".to_owned()))?,
            no_timestamps: need("<|notimestamps|>")?,
            timestamp_begin: need("<|0.00|>")?,
            multilingual: lines.len() >= MULTILINGUAL_TOKENS,
        };
        let tokens = lines
            .iter()
            .enumerate()
            .map(|(id, line)| {
                if id as u32 >= special.end_of_text {
                    Vec::new()
                } else {
                    line.chars()
                        .map(|c| decode.get(&c).copied().unwrap_or(b'?'))
                        .collect()
                }
            })
            .collect();
        let languages = if special.multilingual {
            (special.start_of_transcript + 1..special.translate)
                .filter_map(|id| {
                    let code = lines
                        .get(id as usize)?
                        .strip_prefix("<|")?
                        .strip_suffix("|>")?;
                    code.chars()
                        .all(|c| c.is_ascii_lowercase())
                        .then(|| (id, code.to_owned()))
                })
                .collect()
        } else {
            Vec::new()
        };
        Ok(Self {
            tokens,
            special,
            languages,
        })
    }

    /// How many tokens it has.
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// The text of ordinary tokens (special ones say nothing), invalid
    /// UTF-8 shown as U+FFFD.
    pub fn text(&self, ids: &[u32]) -> String {
        let bytes: Vec<u8> = ids
            .iter()
            .filter(|id| **id < self.special.end_of_text)
            .filter_map(|id| self.tokens.get(*id as usize))
            .flatten()
            .copied()
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// The ids of tokens made only of characters that are not speech
    /// (notes, brackets, symbols): the ones Whisper suppresses, so that
    /// music or noise is not written as "♪" or "[MUSIC]". Used when the
    /// model's own list is missing.
    pub fn symbol_tokens(&self) -> Vec<u32> {
        const SYMBOLS: &[&str] = &[
            "\"",
            "#",
            "(",
            ")",
            "*",
            "+",
            "/",
            ":",
            ";",
            "<",
            "=",
            ">",
            "@",
            "[",
            "\\",
            "]",
            "^",
            "_",
            "`",
            "{",
            "|",
            "}",
            "~",
            "「",
            "」",
            "『",
            "』",
            "<<",
            ">>",
            "<<<",
            ">>>",
            "--",
            "---",
            "-(",
            "-[",
            "('",
            "(\"",
            "((",
            "))",
            "(((",
            ")))",
            "[[",
            "]]",
            "{{",
            "}}",
            "♪♪",
            "♪♪♪",
            "♩",
            "♪",
            "♫",
            "♬",
            "♭",
            "♮",
            "♯",
        ];
        let mut ids = Vec::new();
        for (id, bytes) in self.tokens.iter().enumerate() {
            let text = String::from_utf8_lossy(bytes);
            let bare = text.trim_start_matches(' ');
            if !bare.is_empty() && SYMBOLS.contains(&bare) {
                ids.push(id as u32);
            }
        }
        ids
    }
}

/// GPT-2's map from the printable characters its vocabulary is written in
/// back to the bytes they stand for: printable Latin-1 bytes stand for
/// themselves, and the others are shifted past 255 in order.
fn byte_decoder() -> std::collections::HashMap<char, u8> {
    let printable = |b: u8| matches!(b, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF);
    let mut map = std::collections::HashMap::new();
    let mut shifted = 0u32;
    for byte in 0..=255u8 {
        let shown = if printable(byte) {
            u32::from(byte)
        } else {
            shifted += 1;
            255 + shifted
        };
        if let Some(c) = char::from_u32(shown) {
            map.insert(c, byte);
        }
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn tiny_vocabulary() -> String {
        let mut lines: Vec<String> = ["Hello", "Ġworld", "Ġcaf", "Ã©", "â", "Ļ", "ª"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        for special in [
            "<|endoftext|>",
            "<|startoftranscript|>",
            "<|en|>",
            "<|translate|>",
            "<|transcribe|>",
            "<|startoflm|>",
            "<|startofprev|>",
            "<|nocaptions|>",
            "<|notimestamps|>",
            "<|0.00|>",
            "<|0.02|>",
        ] {
            lines.push(special.to_owned());
        }
        lines.join("\n")
    }

    #[test]
    fn byte_level_tokens_decode_to_their_utf8_text() {
        let vocabulary = Vocabulary::parse(&tiny_vocabulary()).expect("a vocabulary");
        assert_eq!(vocabulary.text(&[0, 1]), "Hello world");
        // "é" is two bytes, each its own character in the vocabulary.
        assert_eq!(vocabulary.text(&[2, 3]), " café");
        // A note (♪, E2 99 AA) split over three tokens.
        assert_eq!(vocabulary.text(&[4, 5, 6]), "♪");
        assert_eq!(vocabulary.special.end_of_text, 7);
        assert_eq!(vocabulary.special.timestamp_begin, 16);
        assert!(!vocabulary.special.multilingual);
        // Special tokens say nothing.
        assert_eq!(vocabulary.text(&[8, 0, 16]), "Hello");
    }

    #[test]
    fn a_vocabulary_without_whisper_s_tokens_is_refused_by_name() {
        let error = Vocabulary::parse("a\nb\n").expect_err("not Whisper's");
        assert!(error.0.contains("<|endoftext|>"), "{}", error.0);
    }
}
