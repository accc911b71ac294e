//! The table model's output, HTML structure tokens with a box for each
//! cell, read into rows and cells with their spans and places.

/// What the model read in a picture of a table.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TableGuess {
    /// How many rows and columns the cells lay out.
    pub rows: usize,
    pub columns: usize,
    /// The cells in reading order (row by row, left to right).
    pub cells: Vec<CellGuess>,
    /// How many decoding passes it took (one a token).
    pub passes: usize,
}

/// One cell: where it starts in the grid, how far it spans, and its box
/// in the picture's pixels (x grows rightwards, y downwards).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CellGuess {
    pub row: usize,
    pub column: usize,
    pub row_span: usize,
    pub col_span: usize,
    pub x0: f32,
    pub y0: f32,
    pub x1: f32,
    pub y1: f32,
}

/// `MAX_SPAN` is the most rows or columns one cell may cover (the model's
/// vocabulary goes to 20).
const MAX_SPAN: usize = 20;

/// `MAX_COLUMNS` is the widest grid a table is laid out in; cells past it
/// are dropped (the model's passes bound it anyway).
const MAX_COLUMNS: usize = 512;

/// Reads the structure tokens `tokens` (an index into `vocabulary` each,
/// with the box the model gave at that pass, in units of the padded
/// square's side) of a picture whose longer side is `longer` pixels.
pub(crate) fn read(
    tokens: &[(usize, [f32; 8])],
    vocabulary: &[String],
    longer: f32,
    size: (f32, f32),
) -> TableGuess {
    let mut guess = TableGuess {
        passes: tokens.len(),
        ..TableGuess::default()
    };
    // Which places of the grid are taken, row by row (spans reach down).
    let mut taken: Vec<Vec<bool>> = Vec::new();
    let mut row: Option<usize> = None;
    let mut column = 0usize;
    let mut open: Option<CellGuess> = None;
    let place = |cell: &mut CellGuess, taken: &mut Vec<Vec<bool>>, column: &mut usize| {
        let r = cell.row;
        while taken.len() < r + cell.row_span {
            taken.push(Vec::new());
        }
        while taken[r].get(*column).copied().unwrap_or(false) {
            *column += 1;
        }
        cell.column = *column;
        if cell.column + cell.col_span > MAX_COLUMNS {
            return false;
        }
        for line in taken.iter_mut().skip(r).take(cell.row_span) {
            if line.len() < cell.column + cell.col_span {
                line.resize(cell.column + cell.col_span, false);
            }
            for place in line.iter_mut().skip(cell.column).take(cell.col_span) {
                *place = true;
            }
        }
        *column += cell.col_span;
        true
    };
    for (index, (token, loc)) in tokens.iter().enumerate() {
        let Some(text) = vocabulary.get(*token) else {
            continue;
        };
        match text.as_str() {
            "eos" if index > 0 => break,
            "<tr>" => {
                row = Some(row.map_or(0, |r| r + 1));
                column = 0;
            }
            "<td></td>" | "<td" => {
                let Some(r) = row else { continue };
                let cell = cell_at(r, loc, longer, size);
                if text == "<td" {
                    open = Some(cell);
                } else {
                    let mut cell = cell;
                    if place(&mut cell, &mut taken, &mut column) {
                        guess.cells.push(cell);
                    }
                }
            }
            "</td>" => {
                if let Some(mut cell) = open.take()
                    && place(&mut cell, &mut taken, &mut column)
                {
                    guess.cells.push(cell);
                }
            }
            attribute => {
                if let Some(cell) = open.as_mut() {
                    if let Some(n) = span_of(attribute, "colspan") {
                        cell.col_span = n;
                    } else if let Some(n) = span_of(attribute, "rowspan") {
                        cell.row_span = n;
                    }
                }
            }
        }
    }
    guess.rows = taken.len();
    guess.columns = taken.iter().map(Vec::len).max().unwrap_or(0);
    guess
}

/// A cell of one row and column at row `row`, its box from the model's
/// four corners.
fn cell_at(row: usize, loc: &[f32; 8], longer: f32, (width, height): (f32, f32)) -> CellGuess {
    let xs = [loc[0], loc[2], loc[4], loc[6]];
    let ys = [loc[1], loc[3], loc[5], loc[7]];
    let low = |v: [f32; 4]| v.into_iter().fold(f32::INFINITY, f32::min);
    let high = |v: [f32; 4]| v.into_iter().fold(f32::NEG_INFINITY, f32::max);
    let clamp = |v: f32, limit: f32| {
        if v.is_finite() {
            v.clamp(0.0, limit)
        } else {
            0.0
        }
    };
    CellGuess {
        row,
        column: 0,
        row_span: 1,
        col_span: 1,
        x0: clamp(low(xs) * longer, width),
        y0: clamp(low(ys) * longer, height),
        x1: clamp(high(xs) * longer, width),
        y1: clamp(high(ys) * longer, height),
    }
}

/// The span an attribute token sets (` colspan="3"` for `colspan`).
fn span_of(token: &str, name: &str) -> Option<usize> {
    let value = token
        .trim()
        .strip_prefix(name)?
        .strip_prefix("=\"")?
        .strip_suffix('"')?;
    value.parse::<usize>().ok().map(|n| n.clamp(1, MAX_SPAN))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocabulary() -> Vec<String> {
        [
            "sos",
            "<tr>",
            "</tr>",
            "<td",
            ">",
            "</td>",
            " colspan=\"2\"",
            " rowspan=\"2\"",
            "<td></td>",
            "eos",
        ]
        .map(str::to_owned)
        .to_vec()
    }

    #[test]
    fn spans_take_their_places_and_the_next_cells_go_around_them() {
        // | a (2 rows) | b (2 columns)   |
        // |            | c      | d      |
        let v = vocabulary();
        let at = |name: &str| v.iter().position(|t| t == name).unwrap_or(0);
        let b = [0.1, 0.1, 0.2, 0.1, 0.2, 0.2, 0.1, 0.2];
        let tokens: Vec<(usize, [f32; 8])> = [
            "sos",
            "<tr>",
            "<td",
            " rowspan=\"2\"",
            ">",
            "</td>",
            "<td",
            " colspan=\"2\"",
            ">",
            "</td>",
            "</tr>",
            "<tr>",
            "<td></td>",
            "<td></td>",
            "</tr>",
            "eos",
            "<td></td>",
        ]
        .iter()
        .map(|t| (at(t), b))
        .collect();
        let guess = read(&tokens, &v, 100.0, (100.0, 50.0));
        let places: Vec<(usize, usize, usize, usize)> = guess
            .cells
            .iter()
            .map(|c| (c.row, c.column, c.row_span, c.col_span))
            .collect();
        assert_eq!(
            places,
            [(0, 0, 2, 1), (0, 1, 1, 2), (1, 1, 1, 1), (1, 2, 1, 1)]
        );
        assert_eq!((guess.rows, guess.columns), (2, 3));
        let first = guess.cells[0];
        assert!((first.x0 - 10.0).abs() < 1e-4 && (first.y1 - 20.0).abs() < 1e-4);
    }

    #[test]
    fn a_box_outside_the_picture_is_held_to_it() {
        let cell = cell_at(
            0,
            &[-1.0, 0.5, 9.0, 0.5, 9.0, f32::NAN, -1.0, 0.9],
            100.0,
            (80.0, 60.0),
        );
        assert_eq!((cell.x0, cell.x1, cell.y1), (0.0, 80.0, 60.0));
    }
}
