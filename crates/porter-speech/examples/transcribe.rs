//! Transcribes the recordings named on the command line with the model in
//! the directory given first: `transcribe MODEL_DIR FILE...`. For trying
//! the crate by hand; porter itself is `porter extract FILE`.

use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = args.next().ok_or("usage: transcribe MODEL_DIR FILE...")?;
    let started = Instant::now();
    let model = porter_speech::Model::load(std::path::Path::new(&dir))?;
    eprintln!("loaded in {:.2} s", started.elapsed().as_secs_f64());
    for file in args {
        let bytes = std::fs::read(&file)?;
        let started = Instant::now();
        let extension = std::path::Path::new(&file)
            .extension()
            .and_then(|e| e.to_str());
        let audio = porter_speech::decode(
            &bytes,
            extension,
            &porter_speech::AudioLimits::default(),
            &|| false,
        )?;
        let decoded = started.elapsed().as_secs_f64();
        let threads = std::env::var("THREADS")
            .ok()
            .and_then(|t| t.parse().ok())
            .unwrap_or(2);
        let beam_size = std::env::var("BEAM")
            .ok()
            .and_then(|t| t.parse().ok())
            .unwrap_or(porter_speech::BEAM_SIZE);
        let transcript = model.transcribe(
            &audio,
            &porter_speech::Options {
                threads,
                beam_size,
                ..porter_speech::Options::default()
            },
            &|| false,
            &mut |_| {},
        );
        let took = started.elapsed().as_secs_f64();
        eprintln!(
            "{file}: {:.1} s of audio, decoded in {decoded:.2} s, transcribed in {took:.2} s (RTF {:.3})",
            audio.seconds(),
            took / audio.seconds().max(0.01)
        );
        for window in &transcript.windows {
            eprintln!(
                "  window at {}: no-speech {:.2}, mean log-prob {:.2}, {}",
                porter_speech::clock(window.start),
                window.no_speech,
                window.mean_logprob,
                if window.kept { "kept" } else { "dropped" }
            );
        }
        for segment in &transcript.segments {
            println!(
                "[{} - {}] {}",
                porter_speech::clock(segment.start),
                porter_speech::clock(segment.end),
                segment.text
            );
        }
    }
    Ok(())
}
