//! Reading the binary PGM pictures the examples take.

/// Width, height and pixels of a binary PGM (P5, 8-bit).
pub fn pgm(bytes: &[u8]) -> Option<(usize, usize, &[u8])> {
    let mut fields = Vec::new();
    let mut at = 0;
    while fields.len() < 4 {
        while bytes.get(at)?.is_ascii_whitespace() {
            at += 1;
        }
        let start = at;
        while !bytes.get(at)?.is_ascii_whitespace() {
            at += 1;
        }
        fields.push(std::str::from_utf8(&bytes[start..at]).ok()?);
    }
    let (width, height) = (fields[1].parse().ok()?, fields[2].parse().ok()?);
    (fields[0] == "P5").then_some((width, height, bytes.get(at + 1..at + 1 + width * height)?))
}
