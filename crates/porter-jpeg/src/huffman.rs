//! Huffman tables and the bit reader of the entropy-coded data.
//!
//! A table answers most codes with one lookup of the next `LOOKAHEAD_BITS`
//! bits; an AC table's second lookup also gives the zero run and the signed
//! coefficient when the code and its magnitude bits both fit in that window,
//! which is the case for most coefficients of a photo.

use crate::types::Error;

/// `LOOKAHEAD_BITS` is how many bits one table lookup looks at: codes up to
/// this long (nearly all of them in practice) need no bit-by-bit search.
pub(crate) const LOOKAHEAD_BITS: u32 = 10;
const LOOKAHEAD_SIZE: usize = 1 << LOOKAHEAD_BITS;
/// The flag of an end-of-block entry in `HuffmanTable::coefficient`.
const END: i32 = 1 << 12;

/// `HuffmanTable` is one DHT table ready for decoding.
#[derive(Clone)]
pub(crate) struct HuffmanTable {
    /// Code length (high byte) and symbol (low byte) for each value of the
    /// next `LOOKAHEAD_BITS` bits; 0 when the code is longer.
    lookup: Box<[u16; LOOKAHEAD_SIZE]>,
    /// For AC tables: the zero run, the total bits and the signed value of a
    /// coefficient whose code and magnitude fit in the window, packed as
    /// `value << 16 | run << 8 | bits`, or `END | bits` for the end of the
    /// block; 0 when they do not fit. A run of 16 zeros is a zero value
    /// after a run of 15.
    coefficient: Box<[i32; LOOKAHEAD_SIZE]>,
    /// The largest code of each length (index 1..=16), -1 when none.
    max_code: [i32; 17],
    /// What to add to a code of each length to index `symbols`.
    symbol_offset: [i32; 17],
    symbols: Vec<u8>,
}

impl HuffmanTable {
    /// Builds a table from the DHT counts of codes of each length (1..=16)
    /// and the symbols in code order, refusing counts that do not form a
    /// prefix code.
    #[allow(
        clippy::cast_possible_wrap,
        reason = "codes are below 2^16 and indices below 257"
    )]
    pub(crate) fn new(counts: &[u8; 16], symbols: &[u8]) -> Result<Self, Error> {
        let total: usize = counts.iter().map(|&c| usize::from(c)).sum();
        if total > 256 || total != symbols.len() {
            return Err(Error::Corrupt("a Huffman table holds more than 256 codes"));
        }
        let mut table = Self {
            lookup: Box::new([0; LOOKAHEAD_SIZE]),
            coefficient: Box::new([0; LOOKAHEAD_SIZE]),
            max_code: [-1; 17],
            symbol_offset: [0; 17],
            symbols: symbols.to_vec(),
        };
        let mut code: u32 = 0;
        let mut index: usize = 0;
        for length in 1..=16u32 {
            let count = u32::from(counts[length as usize - 1]);
            if count > 0 {
                table.symbol_offset[length as usize] = index as i32 - code as i32;
                for _ in 0..count {
                    if code >= 1 << length {
                        return Err(Error::Corrupt("a Huffman table's code lengths overflow"));
                    }
                    if length <= LOOKAHEAD_BITS {
                        let shift = LOOKAHEAD_BITS - length;
                        let first = (code << shift) as usize;
                        let entry = (length << 8) as u16 | u16::from(symbols[index]);
                        table.lookup[first..first + (1 << shift)].fill(entry);
                    }
                    code += 1;
                    index += 1;
                }
                table.max_code[length as usize] = code as i32 - 1;
            }
            code <<= 1;
        }
        table.fill_coefficients();
        Ok(table)
    }

    /// Fills `coefficient` from `lookup`: every window whose code is followed
    /// by all of its magnitude bits inside the window.
    #[allow(clippy::cast_possible_wrap, reason = "lengths are at most 16")]
    fn fill_coefficients(&mut self) {
        for (window, &entry) in self.lookup.iter().enumerate() {
            let length = u32::from(entry >> 8);
            if length == 0 {
                continue;
            }
            let symbol = entry & 0xFF;
            let run = i32::from(symbol >> 4);
            let size = u32::from(symbol & 15);
            let total = length + size;
            if symbol == 0 {
                self.coefficient[window] = END | length as i32;
            }
            if symbol == 0xF0 {
                self.coefficient[window] = (15 << 8) | length as i32;
            }
            if size == 0 || total > LOOKAHEAD_BITS {
                continue;
            }
            let bits = (window as u32 >> (LOOKAHEAD_BITS - total)) & ((1 << size) - 1);
            let value = extend(bits, size);
            self.coefficient[window] = (value << 16) | (run << 8) | total as i32;
        }
    }
}

/// The signed value JPEG codes as `size` magnitude bits `bits`.
#[inline]
#[allow(clippy::cast_possible_wrap, reason = "`bits` is below 2^16")]
fn extend(bits: u32, size: u32) -> i32 {
    if size == 0 {
        return 0;
    }
    let value = bits as i32;
    if bits < 1 << (size - 1) {
        value - (1 << size) + 1
    } else {
        value
    }
}

/// `BitReader` reads the entropy-coded data of a scan, most significant bit
/// first, undoing 0xFF00 stuffing. At a marker or the end of the data it
/// stops and feeds zero bits, counting them, so that reading past the real
/// data is noticed (`overran`) rather than decoded as grey.
pub(crate) struct BitReader<'a> {
    data: &'a [u8],
    position: usize,
    /// Valid bits, from the most significant end.
    buffer: u64,
    bits: u32,
    /// Zero bits fed after a marker or the end; they sit at the low end of
    /// the valid bits.
    fed_zeros: u32,
    stopped: bool,
}

impl<'a> BitReader<'a> {
    pub(crate) fn new(data: &'a [u8], position: usize) -> Self {
        Self {
            data,
            position,
            buffer: 0,
            bits: 0,
            fed_zeros: 0,
            stopped: false,
        }
    }

    /// Fills the buffer to at least 57 bits.
    #[inline]
    fn refill(&mut self) {
        let (mut buffer, mut bits) = (self.buffer, self.bits);
        self.refill_into(&mut buffer, &mut bits);
        (self.buffer, self.bits) = (buffer, bits);
    }

    /// Fills `buffer`, the decoding loop's copy of `self.buffer` with
    /// `bits` valid bits, to at least 57 bits. Eight bytes without 0xFF
    /// are added at once; anything else goes byte by byte.
    #[inline]
    fn refill_into(&mut self, buffer: &mut u64, bits: &mut u32) {
        if !self.stopped
            && let Some(chunk) = self.data.get(self.position..self.position + 8)
        {
            let word = u64::from_be_bytes(chunk.try_into().unwrap_or([0xFF; 8]));
            // No byte is 0xFF when no byte of the complement is zero.
            let inverse = !word;
            let has_ff =
                inverse.wrapping_sub(0x0101_0101_0101_0101) & !inverse & 0x8080_8080_8080_8080;
            if has_ff == 0 {
                let bytes = (64 - *bits) / 8;
                // Bits of a byte beyond `bytes` land below the valid ones;
                // the next refill ORs the same byte into the same place.
                *buffer |= word >> *bits;
                *bits += bytes * 8;
                self.position += bytes as usize;
                return;
            }
        }
        (self.buffer, self.bits) = (*buffer, *bits);
        self.refill_slowly();
        (*buffer, *bits) = (self.buffer, self.bits);
    }

    #[cold]
    #[inline(never)]
    fn refill_slowly(&mut self) {
        while self.bits <= 56 {
            let byte = if self.stopped {
                self.fed_zeros += 8;
                0
            } else {
                // The data stops at its end and at any marker (0xFF not
                // followed by a stuffed 0x00).
                match self.data.get(self.position) {
                    Some(&0xFF) if self.data.get(self.position + 1) == Some(&0) => {
                        self.position += 2;
                        0xFF
                    }
                    Some(&byte) if byte != 0xFF => {
                        self.position += 1;
                        byte
                    }
                    _ => {
                        self.stopped = true;
                        continue;
                    }
                }
            };
            self.buffer |= u64::from(byte) << (56 - self.bits);
            self.bits += 8;
        }
    }

    #[inline]
    fn consume(&mut self, count: u32) {
        // `count` never exceeds `bits`: callers peek at most 32 bits after a
        // refill to at least 57, and take no more than they looked at.
        self.buffer <<= count;
        self.bits -= count;
    }

    #[inline]
    fn peek(&self, count: u32) -> u32 {
        (self.buffer >> (64 - count)) as u32
    }

    /// Makes at least 32 bits available.
    #[inline]
    fn ensure(&mut self) {
        if self.bits < 32 {
            self.refill();
        }
    }

    /// Whether the end marker (EOI) follows the data read so far, after
    /// fill bytes or anything else. The reader never moves past a marker,
    /// so it lies ahead of `position`; a file cut short lacks it.
    pub(crate) fn end_marker_follows(&self) -> bool {
        self.data
            .get(self.position..)
            .is_some_and(|rest| rest.windows(2).any(|pair| pair == [0xFF, 0xD9]))
    }

    /// Whether zero bits fed past the data have been consumed as if real.
    pub(crate) fn overran(&self) -> bool {
        self.fed_zeros > self.bits
    }

    /// Drops buffered bits and reads the restart marker that must come
    /// next, RSTn with n = `expected`.
    pub(crate) fn restart(&mut self, expected: u8) -> Result<(), Error> {
        if self.overran() {
            return Err(Error::Corrupt("the data ends before the restart marker"));
        }
        let mut position = self.position;
        while self.data.get(position) == Some(&0xFF) && self.data.get(position + 1) == Some(&0xFF) {
            position += 1;
        }
        if self.data.get(position) != Some(&0xFF)
            || self.data.get(position + 1) != Some(&(0xD0 + expected))
        {
            return Err(Error::Corrupt(
                "a restart marker is missing or out of order",
            ));
        }
        *self = Self::new(self.data, position + 2);
        Ok(())
    }

    /// Decodes one symbol (the unit tests' way in; decoding goes through
    /// `block`).
    #[cfg(test)]
    fn symbol(&mut self, table: &HuffmanTable) -> Result<u8, Error> {
        self.ensure();
        let entry = table.lookup[self.peek(LOOKAHEAD_BITS) as usize];
        if entry != 0 {
            self.consume(u32::from(entry >> 8));
            return Ok(entry as u8);
        }
        self.long_symbol(table)
    }

    #[cold]
    #[inline(never)]
    #[allow(clippy::cast_possible_wrap, reason = "a code is at most 16 bits")]
    fn long_symbol(&mut self, table: &HuffmanTable) -> Result<u8, Error> {
        for length in LOOKAHEAD_BITS + 1..=16 {
            let code = self.peek(length) as i32;
            if code <= table.max_code[length as usize] {
                let index = code + table.symbol_offset[length as usize];
                let symbol = usize::try_from(index)
                    .ok()
                    .and_then(|i| table.symbols.get(i))
                    .copied()
                    .ok_or(Error::Corrupt("a Huffman code is not in its table"))?;
                self.consume(length);
                return Ok(symbol);
            }
        }
        Err(Error::Corrupt("a Huffman code is not in its table"))
    }

    /// Decodes one block: returns its DC difference and a zigzag index at
    /// or after its last non-zero AC coefficient (0 when it has none), calling
    /// `store(k, value)` with the zigzag index (1..=63) and value of each
    /// non-zero AC coefficient.
    ///
    /// The buffer is kept in locals so that it stays in registers; it goes
    /// back to `self` only around a refill or a long code.
    #[inline]
    pub(crate) fn block(
        &mut self,
        dc: &HuffmanTable,
        table: &HuffmanTable,
        mut store: impl FnMut(usize, i32),
    ) -> Result<(i32, usize), Error> {
        self.ensure();
        let mut buffer = self.buffer;
        let mut bits = self.bits;
        let entry = dc.lookup[(buffer >> (64 - LOOKAHEAD_BITS)) as usize];
        let size = if entry == 0 {
            let symbol = self.long_symbol(dc)?;
            buffer = self.buffer;
            bits = self.bits;
            u32::from(symbol)
        } else {
            let length = u32::from(entry >> 8);
            buffer <<= length;
            bits -= length;
            u32::from(entry & 0xFF)
        };
        if size > 16 {
            return Err(Error::Corrupt("a DC difference is longer than 16 bits"));
        }
        // At least 16 bits are left after a code of at most 16.
        let difference = if size == 0 {
            0
        } else {
            let magnitude = (buffer >> (64 - size)) as u32;
            buffer <<= size;
            bits -= size;
            extend(magnitude, size)
        };
        let mut k = 1usize;
        while k < 64 {
            // A coefficient the window resolves takes at most its bits; any
            // other needs up to 31 (a 16-bit code and 15 magnitude bits).
            if bits < LOOKAHEAD_BITS {
                self.refill_into(&mut buffer, &mut bits);
            }
            let mut window = (buffer >> (64 - LOOKAHEAD_BITS)) as usize;
            let packed = table.coefficient[window];
            if packed != 0 {
                // The length is the low 6 bits, all that a 64-bit shift
                // looks at, so the shift needs no mask of its own.
                buffer = buffer.wrapping_shl(packed as u32);
                bits -= (packed & 63) as u32;
                if packed & END != 0 {
                    break;
                }
                k += ((packed >> 8) & 15) as usize;
                if k > 63 {
                    return Err(Error::Corrupt("a block has more than 64 coefficients"));
                }
                store(k, packed >> 16);
                k += 1;
                continue;
            }
            if bits < 32 {
                self.refill_into(&mut buffer, &mut bits);
                window = (buffer >> (64 - LOOKAHEAD_BITS)) as usize;
            }
            let entry = table.lookup[window];
            let symbol = if entry == 0 {
                self.buffer = buffer;
                self.bits = bits;
                let symbol = self.long_symbol(table)?;
                buffer = self.buffer;
                bits = self.bits;
                symbol
            } else {
                let length = u32::from(entry >> 8);
                buffer <<= length;
                bits -= length;
                entry as u8
            };
            let run = usize::from(symbol >> 4);
            let size = u32::from(symbol & 15);
            if size == 0 {
                if run == 15 {
                    k += 16;
                    continue;
                }
                break;
            }
            k += run;
            if k > 63 {
                return Err(Error::Corrupt("a block has more than 64 coefficients"));
            }
            // At least 16 bits are left after a code of at most 16.
            let magnitude = (buffer >> (64 - size)) as u32;
            buffer <<= size;
            bits -= size;
            store(k, extend(magnitude, size));
            k += 1;
        }
        self.buffer = buffer;
        self.bits = bits;
        if k > 64 {
            return Err(Error::Corrupt("a block has more than 64 coefficients"));
        }
        // The zigzag index past the last coefficient read (or 64): any
        // non-zero AC coefficient lies before it.
        Ok((difference, k - 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_that_overflow_their_lengths_are_refused() {
        let mut counts = [0u8; 16];
        counts[0] = 3;
        assert!(HuffmanTable::new(&counts, &[1, 2, 3]).is_err());
    }

    #[test]
    fn a_symbol_count_past_256_is_refused() {
        let mut counts = [0u8; 16];
        counts[15] = 255;
        counts[14] = 2;
        assert!(HuffmanTable::new(&counts, &[0; 257]).is_err());
    }

    #[test]
    fn short_and_long_codes_decode_and_stuffed_bytes_are_undone() {
        // Codes: "0" -> 0x05, "10" -> 0x11, then one 12-bit code
        // "110000000000" -> 0x22.
        let mut counts = [0u8; 16];
        counts[0] = 1;
        counts[1] = 1;
        counts[11] = 1;
        let table = HuffmanTable::new(&counts, &[0x05, 0x11, 0x22]).unwrap();
        // Bits: 0 | 10 | 110000000000 | padding ones.
        // 0101 1000 0000 0001 1111... => 0x58 0x01 0xFF(stuffed)
        let data = [0x58, 0x01, 0xFF, 0x00, 0xFF, 0xD9];
        let mut reader = BitReader::new(&data, 0);
        assert_eq!(reader.symbol(&table).unwrap(), 0x05);
        assert_eq!(reader.symbol(&table).unwrap(), 0x11);
        assert_eq!(reader.symbol(&table).unwrap(), 0x22);
        assert!(!reader.overran());
    }

    #[test]
    fn magnitudes_extend_to_signed_values() {
        for (bits, size, value) in [(0, 1, -1), (1, 1, 1), (0, 3, -7), (7, 3, 7), (3, 3, -4)] {
            assert_eq!(extend(bits, size), value);
        }
    }
}
