//! Suggestions for a name a caller mistyped ("did you mean …"): the edit
//! distance both servers rank known names by. Each server keeps its own
//! rule for how close is close enough.

/// Levenshtein distance between two strings, by characters: the fewest
/// insertions, deletions and substitutions that turn `a` into `b`.
#[must_use]
pub fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = if ca == *cb {
                diagonal
            } else {
                1 + diagonal.min(row[j]).min(above)
            };
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::distance;

    #[test]
    fn distance_counts_insertions_deletions_and_swaps() {
        let cases = [
            ("", "", 0),
            ("abc", "abc", 0),
            ("abc", "abd", 1),
            ("kitten", "sitting", 3),
            ("", "abc", 3),
            ("abc", "", 3),
            ("alice", "alice", 0),
            ("alcie", "alice", 2),
            ("alic", "alice", 1),
            ("bob", "rob", 1),
            ("café", "cafe", 1),
        ];
        for (a, b, want) in cases {
            assert_eq!(distance(a, b), want, "{a} {b}");
            assert_eq!(distance(b, a), want, "{b} {a}");
        }
    }
}
