//! The limits every conversion holds, with the defaults of the file view spec.

/// `MAX_FILE_BYTES` is the most of a file that is read (64 MiB): over it the
/// file is described from its name and size alone.
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// `WINDOW_LINES` is how many numbered lines a window holds when the caller
/// does not say.
pub const WINDOW_LINES: u64 = 500;
/// `MAX_WINDOW_LINES` is the most lines one window may hold; a bigger request
/// is cut to it and the header says so.
pub const MAX_WINDOW_LINES: u64 = 2000;
/// `WINDOW_BYTES` is the most numbered text in one window (32 KiB, about
/// 8k tokens), so that a window of long lines cannot flood a context.
pub const WINDOW_BYTES: usize = 32 * 1024;
/// `IMAGE_BYTES` is the most an image is returned in: 3,750,000 bytes are
/// 5,000,000 base64 characters, the size clients commonly accept.
pub const IMAGE_BYTES: usize = 3_750_000;
/// `IMAGE_EDGE_PX` is the longest edge an image is returned with.
pub const IMAGE_EDGE_PX: u32 = 2048;
/// `IMAGE_DECODE_PIXELS` is the largest image decoded to be scaled (50 MP);
/// a bigger one is described rather than risk the memory.
pub const IMAGE_DECODE_PIXELS: u64 = 50_000_000;
/// `MEDIA_BYTES` is the most audio, video or PDF returned as itself.
pub const MEDIA_BYTES: usize = 3_750_000;
/// `OFFICE_TEXT_BYTES` is the most text taken out of one Office document.
pub const OFFICE_TEXT_BYTES: usize = 8 * 1024 * 1024;
/// `OFFICE_XML_BYTES` is the most decompressed XML read from one Office
/// package, across all its parts.
pub const OFFICE_XML_BYTES: u64 = 128 * 1024 * 1024;
/// `XML_DEPTH` is the deepest element nesting an Office part may have.
pub const XML_DEPTH: usize = 1000;
/// `ARCHIVE_ENTRIES` is the most entries an archive listing shows.
pub const ARCHIVE_ENTRIES: usize = 100_000;
/// `ARCHIVE_LISTING_BYTES` is the most listing text produced for an archive.
pub const ARCHIVE_LISTING_BYTES: usize = 8 * 1024 * 1024;
/// `ARCHIVE_EXPANDED_BYTES` is the most a compressed tar is decompressed
/// while it is listed (1 GiB).
pub const ARCHIVE_EXPANDED_BYTES: u64 = 1024 * 1024 * 1024;
/// `PDF_PAGES` is the most pages whose text is taken from one PDF; the
/// Markdown says which were read ("pages 1–2,000 of 100,000").
pub const PDF_PAGES: usize = 2000;
/// `PDF_PAGE_TREE_PAGES` is the most pages a PDF may list (20,000) for more
/// than its first 63 to be read: reading further makes the PDF library
/// load every page's dictionary, about 4.5 KiB each, so 100,000 listed
/// pages would take 450 MiB before any text.
pub const PDF_PAGE_TREE_PAGES: usize = 20_000;
/// `PDF_CONTENT_BYTES` is the most one PDF page's content streams (and the
/// form pictures it names) may decode to (32 MiB); a page past it is not
/// read, and its place says why. Real pages stay under a few MiB.
pub const PDF_CONTENT_BYTES: u64 = 32 * 1024 * 1024;
/// `PDF_OPERATORS` is the most operators one PDF page's content may hold
/// (4,000,000); a page past it is not read.
pub const PDF_OPERATORS: u64 = 4_000_000;
/// `PDF_GLYPHS` is the most bytes of text one PDF page's content may show
/// (2,000,000, about 300 dense pages' worth); a page past it is not read.
pub const PDF_GLYPHS: u64 = 2_000_000;
/// `PDF_CMAP_BYTES` is the most one font's `ToUnicode` map may decode to
/// (8 MiB); a page using a font past it is not read.
pub const PDF_CMAP_BYTES: u64 = 8 * 1024 * 1024;
/// `PDF_CMAP_ENTRIES` is the most entries the `ToUnicode` maps of one
/// page's fonts may make together (1,000,000; a range counts every code it
/// covers); a page past it is not read.
pub const PDF_CMAP_ENTRIES: u64 = 1_000_000;
/// `WORKER_MEMORY_BYTES` is the most memory the worker that reads one file
/// may take beyond what it holds when it starts (512 MiB, its address
/// space); past it the file is described as needing more.
pub const WORKER_MEMORY_BYTES: u64 = 512 * 1024 * 1024;
/// `WORKER_CPU_SECONDS` is the most CPU time the worker that reads one file
/// may use (10 s).
pub const WORKER_CPU_SECONDS: u64 = 10;
/// `WORKER_WALL_SECONDS` is how long the reader of one file may take by the
/// clock (30 s), waiting included, before porter stops it.
pub const WORKER_WALL_SECONDS: u64 = 30;

/// `OCR_LANGUAGES` are the Tesseract languages OCR reads with unless told
/// ("eng"; several are joined with `+`, as "eng+deu"; each needs its
/// language data installed, Debian's `tesseract-ocr-LANG`).
pub const OCR_LANGUAGES: &str = "eng";
/// `OCR_PAGES` is the most pages of one file read by OCR (20); the note names
/// those past it.
pub const OCR_PAGES: usize = 20;
/// `OCR_PAGE_SECONDS` is how long the OCR of one page may take by the clock
/// (5 s); a page past it is left unread, its place says so, and OCR of that
/// file stops.
pub const OCR_PAGE_SECONDS: u64 = 5;
/// `OCR_SECONDS` is how long OCR may take over one file by the clock (6 s,
/// within the worker's 10 s of CPU): no page is started past it, and the
/// note names the pages left.
pub const OCR_SECONDS: u64 = 6;
/// `OCR_PIXEL_BYTES` is the most one page is given to OCR in, as 8-bit grey
/// pixels (one byte each): 16 MiB holds an A4 or Letter page at 300 dpi
/// with room to spare; a bigger picture is scaled down to fit.
pub const OCR_PIXEL_BYTES: u64 = 16 * 1024 * 1024;
/// `OCR_WORD_CONFIDENCE` is the confidence (0–100, Tesseract's own) under
/// which a word read by OCR is marked as unsure: written with `(?)` after
/// it, never corrected or guessed at.
pub const OCR_WORD_CONFIDENCE: u8 = 50;
/// `TABLE_MODEL_SECONDS` is how long the table model may read the tables
/// of one file by the clock (a table takes a few tenths of a second): no
/// table is started past it, and it stops between decoding passes at it.
pub const TABLE_MODEL_SECONDS: u64 = 6;
/// `TABLE_MODEL_TABLES` is the most tables of one file the table model
/// reads; the rest are read by the layout rules, and a note says so.
pub const TABLE_MODEL_TABLES: usize = 24;

/// `SPEECH_SECONDS` is the most of a recording transcribed (one hour);
/// the transcript says where it stopped.
pub const SPEECH_SECONDS: u64 = 3600;
/// `SPEECH_CPU_SECONDS` is the CPU time transcribing one recording may
/// take (120 s; about seven minutes of speech with Whisper base, beam 5,
/// fourteen with tiny.en: the two-minute bench clip took 34 s and 17 s of
/// CPU time on a loaded machine); the transcript
/// says where it stopped. A worker that transcribes needs this much CPU
/// time beyond [`WORKER_CPU_SECONDS`].
pub const SPEECH_CPU_SECONDS: u64 = 120;
/// `SPEECH_THREADS` is how many threads transcription runs on (2).
pub const SPEECH_THREADS: usize = 2;

/// `Options` holds every limit of the file view. `Options::default()` is the
/// spec's safe setting; a caller loosens a limit by setting its field, and
/// takes on the memory and time that costs.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Options {
    /// Most bytes of a file that are read; see [`MAX_FILE_BYTES`].
    pub max_file_bytes: u64,
    /// Lines in a window when the request names none; see [`WINDOW_LINES`].
    pub window_lines: u64,
    /// Most lines in one window; see [`MAX_WINDOW_LINES`].
    pub max_window_lines: u64,
    /// Most numbered text in one window; see [`WINDOW_BYTES`].
    pub window_bytes: usize,
    /// Most bytes of a returned image; see [`IMAGE_BYTES`].
    pub image_bytes: usize,
    /// Longest edge of a returned image; see [`IMAGE_EDGE_PX`].
    pub image_edge_px: u32,
    /// Most pixels decoded to scale an image; see [`IMAGE_DECODE_PIXELS`].
    pub image_decode_pixels: u64,
    /// Most bytes of audio, video or PDF returned as itself; see [`MEDIA_BYTES`].
    pub media_bytes: usize,
    /// Whether a PDF whose text was read is returned as itself too (an
    /// embedded resource after its Markdown, up to `media_bytes`). Off by
    /// default: the Markdown is what a model can use, and the bytes would
    /// only fill its context. A PDF whose text could not be read is
    /// returned as itself either way, as its only content.
    pub attach_pdf: bool,
    /// Most text taken from an Office document; see [`OFFICE_TEXT_BYTES`].
    pub office_text_bytes: usize,
    /// Most decompressed XML read from an Office package; see [`OFFICE_XML_BYTES`].
    pub office_xml_bytes: u64,
    /// Deepest XML nesting accepted; see [`XML_DEPTH`].
    pub xml_depth: usize,
    /// Most entries listed from an archive; see [`ARCHIVE_ENTRIES`].
    pub archive_entries: usize,
    /// Most listing text for an archive; see [`ARCHIVE_LISTING_BYTES`].
    pub archive_listing_bytes: usize,
    /// Most bytes a compressed tar is expanded to; see [`ARCHIVE_EXPANDED_BYTES`].
    pub archive_expanded_bytes: u64,
    /// Most PDF pages whose text is extracted; see [`PDF_PAGES`].
    pub pdf_pages: usize,
    /// Most pages a PDF may list to be read past its 63rd; see
    /// [`PDF_PAGE_TREE_PAGES`].
    pub pdf_page_tree_pages: usize,
    /// Most bytes one PDF page's content decodes to; see [`PDF_CONTENT_BYTES`].
    pub pdf_content_bytes: u64,
    /// Most operators in one PDF page's content; see [`PDF_OPERATORS`].
    pub pdf_operators: u64,
    /// Most bytes of text one PDF page shows; see [`PDF_GLYPHS`].
    pub pdf_glyphs: u64,
    /// Most bytes one font's `ToUnicode` map decodes to; see [`PDF_CMAP_BYTES`].
    pub pdf_cmap_bytes: u64,
    /// Most `ToUnicode` entries of one PDF page's fonts; see [`PDF_CMAP_ENTRIES`].
    pub pdf_cmap_entries: u64,
    /// Most memory the worker reading one file may take; see
    /// [`WORKER_MEMORY_BYTES`]. Only holds where a worker is installed (see
    /// [`crate::worker`]).
    pub worker_memory_bytes: u64,
    /// Most CPU seconds the worker reading one file may use; see
    /// [`WORKER_CPU_SECONDS`].
    pub worker_cpu_seconds: u64,
    /// Most seconds by the clock the worker reading one file may take; see
    /// [`WORKER_WALL_SECONDS`].
    pub worker_wall_seconds: u64,
    /// Whether scanned PDF pages and pictures of text are read by OCR (on;
    /// a build without the `ocr` feature says OCR is not available instead).
    pub ocr: bool,
    /// The languages OCR reads with; see [`OCR_LANGUAGES`].
    pub ocr_languages: String,
    /// Most pages of one file read by OCR; see [`OCR_PAGES`].
    pub ocr_pages: usize,
    /// Most seconds the OCR of one page may take; see [`OCR_PAGE_SECONDS`].
    pub ocr_page_seconds: u64,
    /// Most seconds OCR may take over one file; see [`OCR_SECONDS`].
    pub ocr_seconds: u64,
    /// Most bytes of grey pixels one page is read by OCR in; see
    /// [`OCR_PIXEL_BYTES`].
    pub ocr_pixel_bytes: u64,
    /// Confidence under which a word read by OCR is marked unsure; see
    /// [`OCR_WORD_CONFIDENCE`].
    pub ocr_word_confidence: u8,
    /// Whether recordings are transcribed (on, where a speech model is
    /// installed; see [`crate::install_models`]).
    pub speech: bool,
    /// Most seconds of a recording transcribed; see [`SPEECH_SECONDS`].
    pub speech_seconds: u64,
    /// Most CPU seconds spent transcribing one recording; see
    /// [`SPEECH_CPU_SECONDS`].
    pub speech_cpu_seconds: u64,
    /// Threads transcription runs on; see [`SPEECH_THREADS`].
    pub speech_threads: usize,
    /// The folder the learned models are in (the table model's
    /// `slanet-plus.onnx`, the speech model's `whisper-base/` or
    /// `whisper-tiny.en/`; see
    /// `docs/models.md`), or `None` for the one the program installed with
    /// [`crate::install_models`] (none: tables are read by the layout rules
    /// alone and recordings described). The library never looks for it.
    pub models_dir: Option<std::path::PathBuf>,
    /// Most seconds the table model may take over one file; see
    /// [`TABLE_MODEL_SECONDS`].
    pub table_model_seconds: u64,
    /// Most tables of one file the table model reads; see
    /// [`TABLE_MODEL_TABLES`].
    pub table_model_tables: usize,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            max_file_bytes: MAX_FILE_BYTES,
            window_lines: WINDOW_LINES,
            max_window_lines: MAX_WINDOW_LINES,
            window_bytes: WINDOW_BYTES,
            image_bytes: IMAGE_BYTES,
            image_edge_px: IMAGE_EDGE_PX,
            image_decode_pixels: IMAGE_DECODE_PIXELS,
            media_bytes: MEDIA_BYTES,
            attach_pdf: false,
            office_text_bytes: OFFICE_TEXT_BYTES,
            office_xml_bytes: OFFICE_XML_BYTES,
            xml_depth: XML_DEPTH,
            archive_entries: ARCHIVE_ENTRIES,
            archive_listing_bytes: ARCHIVE_LISTING_BYTES,
            archive_expanded_bytes: ARCHIVE_EXPANDED_BYTES,
            pdf_pages: PDF_PAGES,
            pdf_page_tree_pages: PDF_PAGE_TREE_PAGES,
            pdf_content_bytes: PDF_CONTENT_BYTES,
            pdf_operators: PDF_OPERATORS,
            pdf_glyphs: PDF_GLYPHS,
            pdf_cmap_bytes: PDF_CMAP_BYTES,
            pdf_cmap_entries: PDF_CMAP_ENTRIES,
            worker_memory_bytes: WORKER_MEMORY_BYTES,
            worker_cpu_seconds: WORKER_CPU_SECONDS,
            worker_wall_seconds: WORKER_WALL_SECONDS,
            ocr: true,
            ocr_languages: OCR_LANGUAGES.to_owned(),
            ocr_pages: OCR_PAGES,
            ocr_page_seconds: OCR_PAGE_SECONDS,
            ocr_seconds: OCR_SECONDS,
            ocr_pixel_bytes: OCR_PIXEL_BYTES,
            ocr_word_confidence: OCR_WORD_CONFIDENCE,
            speech: true,
            speech_seconds: SPEECH_SECONDS,
            speech_cpu_seconds: SPEECH_CPU_SECONDS,
            speech_threads: SPEECH_THREADS,
            models_dir: None,
            table_model_seconds: TABLE_MODEL_SECONDS,
            table_model_tables: TABLE_MODEL_TABLES,
        }
    }
}
