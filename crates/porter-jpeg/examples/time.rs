//! Times porter-jpeg and jpeg-decoder on one file at the same scale.
//!
//! `cargo run --release -p porter-jpeg --example time -- FILE [MIN_WIDTH MIN_HEIGHT [RUNS]]`
//! decodes FILE RUNS times (default 9) with each decoder at the smallest
//! scale that gives at least MIN_WIDTH x MIN_HEIGHT (default 2048 x 1365)
//! and prints the median milliseconds of each.

use std::time::Instant;

fn median_ms(runs: usize, mut decode: impl FnMut() -> (u32, u32)) -> (f64, (u32, u32)) {
    let mut times = Vec::with_capacity(runs);
    let mut size = (0, 0);
    for _ in 0..runs {
        let started = Instant::now();
        size = decode();
        times.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    (times[times.len() / 2], size)
}

fn main() {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let path = arguments
        .first()
        .map_or("/work/scratch/s23/photo.jpg", String::as_str);
    let number = |index: usize, default: u32| {
        arguments
            .get(index)
            .map_or(default, |a| a.parse().expect("a number"))
    };
    let (min_width, min_height) = (number(1, 2048), number(2, 1365));
    let runs = number(3, 9) as usize;
    let bytes = std::fs::read(path).expect("a readable file");

    let (ours, size) = median_ms(runs, || {
        let image = porter_jpeg::decode_scaled(&bytes, min_width, min_height, u64::MAX, &|| false)
            .expect("porter-jpeg decodes it");
        (image.width, image.height)
    });
    println!("porter-jpeg   {ours:8.1} ms  {}x{}", size.0, size.1);

    let (theirs, size) = median_ms(runs, || {
        let mut decoder = jpeg_decoder::Decoder::new(&bytes[..]);
        decoder.read_info().expect("jpeg-decoder reads it");
        decoder
            .scale(
                u16::try_from(min_width).unwrap_or(u16::MAX),
                u16::try_from(min_height).unwrap_or(u16::MAX),
            )
            .expect("jpeg-decoder scales it");
        decoder.decode().expect("jpeg-decoder decodes it");
        let info = decoder.info().expect("an image");
        (u32::from(info.width), u32::from(info.height))
    });
    println!("jpeg-decoder  {theirs:8.1} ms  {}x{}", size.0, size.1);
}
