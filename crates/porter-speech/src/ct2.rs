//! CTranslate2's `model.bin`: a header (format version, the spec's name and
//! revision), then named variables, each a rank, its dimensions, a data
//! type and its bytes, then aliases (one name standing for another). Read
//! whole into memory and checked as it goes: every length is checked
//! against the bytes left before anything is allocated, so a truncated or
//! crafted file is an error naming what was wrong, never a panic.

use std::collections::HashMap;

use half::f16;
use half::slice::HalfFloatSliceExt;

/// The model format versions this reader knows (CTranslate2 writes 6).
const VERSIONS: std::ops::RangeInclusive<u32> = 5..=6;
/// The most variables a file may declare; a Whisper model has a few
/// hundred.
const MAX_VARIABLES: u32 = 100_000;
/// The highest rank of a variable; Whisper's are at most 3.
const MAX_RANK: u8 = 8;

/// One variable: its shape and values, float16 kept as it is (the
/// decoder computes from it as it is; widening it all at load would cost
/// twice its memory and a pass over it), everything else as `f32`
/// (integer scalars too).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Variable {
    pub shape: Vec<usize>,
    values: Values,
}

#[derive(Debug, Clone, PartialEq)]
enum Values {
    Wide(Vec<f32>),
    Half(Vec<f16>),
}

impl Variable {
    /// The values in `f32`.
    pub fn into_f32(self) -> Vec<f32> {
        match self.values {
            Values::Wide(values) => values,
            Values::Half(halves) => {
                // Widened as a slice: 8 at a time where the CPU converts
                // float16 itself.
                let mut values = vec![0.0f32; halves.len()];
                halves.convert_to_f32_slice(&mut values);
                values
            }
        }
    }

    /// The values in float16 (exact for a model stored in float16).
    pub fn into_f16(self) -> Vec<f16> {
        match self.values {
            Values::Half(halves) => halves,
            Values::Wide(values) => {
                let mut halves = vec![f16::ZERO; values.len()];
                halves.convert_from_f32_slice(&values);
                halves
            }
        }
    }

    /// The only value of a scalar.
    pub fn scalar(&self) -> Option<f32> {
        match &self.values {
            Values::Wide(values) => match values.as_slice() {
                [value] => Some(*value),
                _ => None,
            },
            Values::Half(halves) => match halves.as_slice() {
                [value] => Some(value.to_f32()),
                _ => None,
            },
        }
    }
}

/// Why a `model.bin` could not be read: a sentence naming the place.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct FormatError(pub String);

/// The variables of a `model.bin`, by name, aliases resolved.
#[derive(Debug, Default)]
pub(crate) struct Variables {
    pub spec: String,
    pub by_name: HashMap<String, Variable>,
    /// Names that stand for another variable (the output projection is
    /// the token embedding's alias).
    pub aliases: HashMap<String, String>,
}

impl Variables {
    /// Takes a variable out (a model keeps its own copy), or says which is
    /// missing.
    pub fn take(&mut self, name: &str) -> Result<Variable, FormatError> {
        self.by_name
            .remove(name)
            .or_else(|| {
                self.aliases
                    .get(name)
                    .and_then(|v| self.by_name.get(v).cloned())
            })
            .ok_or_else(|| FormatError(format!("it has no variable {name}")))
    }
}

/// A cursor over the file's bytes that refuses to read past the end.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], FormatError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|end| *end <= self.bytes.len())
            .ok_or_else(|| {
                FormatError(format!(
                    "it ends at byte {} in the middle of {what} (it is truncated or not a CTranslate2 model)",
                    self.bytes.len()
                ))
            })?;
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }

    fn u8(&mut self, what: &str) -> Result<u8, FormatError> {
        Ok(self.take(1, what)?[0])
    }

    fn u16(&mut self, what: &str) -> Result<u16, FormatError> {
        let b = self.take(2, what)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    fn u32(&mut self, what: &str) -> Result<u32, FormatError> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A string: its length (with the closing NUL) as u16, then its bytes.
    fn string(&mut self, what: &str) -> Result<String, FormatError> {
        let len = usize::from(self.u16(what)?);
        let raw = self.take(len, what)?;
        let raw = raw.strip_suffix(&[0]).unwrap_or(raw);
        String::from_utf8(raw.to_vec()).map_err(|_| FormatError(format!("{what} is not UTF-8")))
    }
}

/// Reads every variable of a `model.bin`.
pub(crate) fn read(bytes: &[u8]) -> Result<Variables, FormatError> {
    let mut cursor = Cursor { bytes, at: 0 };
    let version = cursor.u32("the format version")?;
    if !VERSIONS.contains(&version) {
        return Err(FormatError(format!(
            "its format version is {version}, and porter reads versions {} to {}",
            VERSIONS.start(),
            VERSIONS.end()
        )));
    }
    let spec = cursor.string("the model's spec name")?;
    let _revision = cursor.u32("the spec revision")?;
    let count = cursor.u32("the variable count")?;
    if count > MAX_VARIABLES {
        return Err(FormatError(format!(
            "it declares {count} variables, more than the {MAX_VARIABLES} porter reads"
        )));
    }
    let mut variables = Variables {
        spec,
        ..Variables::default()
    };
    for _ in 0..count {
        let name = cursor.string("a variable's name")?;
        let variable = read_variable(&mut cursor, &name)?;
        variables.by_name.insert(name, variable);
    }
    // Aliases came with version 5; a file may end before them.
    if cursor.at < bytes.len() {
        let aliases = cursor.u32("the alias count")?;
        if aliases > MAX_VARIABLES {
            return Err(FormatError(format!("it declares {aliases} aliases")));
        }
        for _ in 0..aliases {
            let alias = cursor.string("an alias")?;
            let target = cursor.string("an alias's variable")?;
            variables.aliases.insert(alias, target);
        }
    }
    Ok(variables)
}

fn read_variable(cursor: &mut Cursor<'_>, name: &str) -> Result<Variable, FormatError> {
    let rank = cursor.u8("a variable's rank")?;
    if rank > MAX_RANK {
        return Err(FormatError(format!("variable {name} has rank {rank}")));
    }
    let mut shape = Vec::with_capacity(usize::from(rank));
    let mut elements: usize = 1;
    for _ in 0..rank {
        let dim = cursor.u32("a variable's shape")? as usize;
        elements = elements
            .checked_mul(dim)
            .ok_or_else(|| FormatError(format!("variable {name} has an impossible shape")))?;
        shape.push(dim);
    }
    let dtype = cursor.u8("a variable's type")?;
    let declared = cursor.u32("a variable's size")? as usize;
    let width = match dtype {
        0 | 3 => 4,     // float32, int32
        1 => 1,         // int8
        2 | 4 | 5 => 2, // int16, float16, bfloat16
        other => {
            return Err(FormatError(format!(
                "variable {name} has data type {other}, which porter does not read"
            )));
        }
    };
    if elements.checked_mul(width) != Some(declared) {
        return Err(FormatError(format!(
            "variable {name} declares {declared} bytes for {elements} values of {width} bytes"
        )));
    }
    let raw = cursor.take(declared, "a variable's values")?;
    let wide: Vec<f32> = match dtype {
        0 => raw
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect(),
        3 => raw
            .chunks_exact(4)
            .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f32)
            .collect(),
        1 => raw.iter().map(|b| f32::from(b.cast_signed())).collect(),
        2 => raw
            .chunks_exact(2)
            .map(|b| f32::from(i16::from_le_bytes([b[0], b[1]])))
            .collect(),
        4 => {
            let halves = raw
                .chunks_exact(2)
                .map(|b| f16::from_le_bytes([b[0], b[1]]))
                .collect();
            return Ok(Variable {
                shape,
                values: Values::Half(halves),
            });
        }
        _ => raw
            .chunks_exact(2)
            .map(|b| half::bf16::from_le_bytes([b[0], b[1]]).to_f32())
            .collect(),
    };
    Ok(Variable {
        shape,
        values: Values::Wide(wide),
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A `model.bin` written the way CTranslate2 writes one, from
    /// `(name, shape, float32 values)` and aliases.
    pub(crate) fn model_bin(
        variables: &[(&str, Vec<u32>, Vec<f32>)],
        aliases: &[(&str, &str)],
    ) -> Vec<u8> {
        let mut out = Vec::new();
        let string = |out: &mut Vec<u8>, s: &str| {
            out.extend_from_slice(&((s.len() + 1) as u16).to_le_bytes());
            out.extend_from_slice(s.as_bytes());
            out.push(0);
        };
        out.extend_from_slice(&6u32.to_le_bytes());
        string(&mut out, "WhisperSpec");
        out.extend_from_slice(&3u32.to_le_bytes());
        out.extend_from_slice(&(variables.len() as u32).to_le_bytes());
        for (name, shape, values) in variables {
            string(&mut out, name);
            out.push(shape.len() as u8);
            for dim in shape {
                out.extend_from_slice(&dim.to_le_bytes());
            }
            out.push(0);
            out.extend_from_slice(&((values.len() * 4) as u32).to_le_bytes());
            for v in values {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
        out.extend_from_slice(&(aliases.len() as u32).to_le_bytes());
        for (alias, target) in aliases {
            string(&mut out, alias);
            string(&mut out, target);
        }
        out
    }

    #[test]
    fn variables_and_aliases_read_back_as_written() {
        let bytes = model_bin(
            &[("a/weight", vec![2, 3], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0])],
            &[("b/weight", "a/weight")],
        );
        let mut read = read(&bytes).expect("a model reads");
        assert_eq!(read.spec, "WhisperSpec");
        let b = read.take("b/weight").expect("the alias resolves");
        assert_eq!(b.shape, vec![2, 3]);
        let a = read.take("a/weight").expect("the variable");
        assert_eq!(a.into_f32(), vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        assert!(read.take("c").is_err());
    }

    #[test]
    fn every_truncation_of_a_model_is_an_error_not_a_panic() {
        let bytes = model_bin(
            &[("a", vec![2], vec![1.0, 2.0]), ("b", vec![1], vec![3.0])],
            &[("c", "a")],
        );
        for end in 0..bytes.len() {
            // The aliases may be missing altogether (format 5 has none).
            let outcome = read(&bytes[..end]);
            if let Err(FormatError(reason)) = &outcome {
                assert!(!reason.is_empty());
            }
        }
    }

    #[test]
    fn a_size_that_disagrees_with_the_shape_is_refused() {
        let mut bytes = model_bin(&[("a", vec![2], vec![1.0, 2.0])], &[]);
        // The shape says 2 values; claim 3 (the dim sits after the name).
        let at = 4 + 2 + 12 + 4 + 4 + 2 + 2 + 1;
        bytes[at] = 3;
        let error = read(&bytes).expect_err("a lying shape");
        assert!(
            error.0.contains("declares 8 bytes for 3 values"),
            "{}",
            error.0
        );
    }
}
