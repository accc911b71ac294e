//! `porter-tesseract` is Tesseract's C API, loaded from the system's
//! `libtesseract` the first time OCR is needed, behind a safe interface.
//!
//! Linking Tesseract into porter would make every porter process load it
//! and the fifty or so libraries it links (Leptonica and its image codecs,
//! libarchive, libcurl and its TLS and Kerberos stacks) before `main`, to
//! read a Word file or a born-digital PDF that never needs OCR; and it would
//! make building porter need Tesseract's headers and libclang. Here the
//! library is opened with the system's dynamic loader ([`Library::load`])
//! only when a page or picture must be read, and found by its usual names
//! (`libtesseract.so.5` on Linux). Without it, OCR is unavailable and says
//! so; everything else works.
//!
//! It deliberately does little: start an engine for a set of languages,
//! read one picture of 8-bit grey or colour pixels, and give Tesseract's TSV
//! of the words found. What a page is, how it is prepared and how the words
//! are laid out is the caller's.
//!
//! ```no_run
//! use porter_tesseract::{Engine, EngineMode, Library, PageSegMode};
//!
//! let library = Library::load()?;
//! let mut engine = Engine::new(library)?;
//! engine.init(None, "eng", EngineMode::LstmOnly)?;
//! engine.set_page_seg_mode(PageSegMode::Auto);
//! let white = vec![255u8; 64 * 64];
//! engine.set_image(&white, 64, 64, 1)?;
//! engine.set_source_resolution(300);
//! engine.recognize()?;
//! let tsv = engine.tsv_text(0)?;
//! # Ok::<(), porter_tesseract::Error>(())
//! ```

use std::ffi::{CStr, CString, c_char, c_int, c_uint, c_void};
use std::ptr::NonNull;
use std::sync::OnceLock;

/// Why Tesseract could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// No Tesseract library could be opened.
    #[error(
        "Tesseract is not installed (no {tried} could be loaded); install it (Debian: tesseract-ocr and tesseract-ocr-eng)"
    )]
    NotInstalled {
        /// The library names tried, joined.
        tried: String,
    },
    /// The library opened but lacks a function porter calls.
    #[error("the Tesseract library {library} lacks {symbol}, so it is not a Tesseract 4 or 5")]
    Incomplete {
        /// The library's name.
        library: String,
        /// The missing function.
        symbol: String,
    },
    /// `TessBaseAPICreate` gave no engine.
    #[error("Tesseract could not create an engine")]
    NotCreated,
    /// The engine did not start for these languages (their data is
    /// missing or unreadable).
    #[error("Tesseract could not load the language data for {languages:?}")]
    NoLanguage {
        /// The languages asked for.
        languages: String,
    },
    /// A string handed to Tesseract holds a NUL character.
    #[error("{what} holds a NUL character")]
    Nul {
        /// What it was.
        what: &'static str,
    },
    /// The picture's sizes do not match its pixels.
    #[error("the picture's pixels do not fill {width}×{height} at {bytes_per_pixel} bytes a pixel")]
    BadPicture {
        /// Width in pixels.
        width: u32,
        /// Height in pixels.
        height: u32,
        /// Bytes per pixel.
        bytes_per_pixel: u32,
    },
    /// Recognition failed.
    #[error("Tesseract could not recognise the picture")]
    NotRecognised,
    /// Recognition gave no text.
    #[error("Tesseract gave no text for the picture")]
    NoText,
}

/// How Tesseract segments a page (its `TessPageSegMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageSegMode {
    /// Orientation and script detection, then automatic segmentation.
    AutoOsd,
    /// Automatic segmentation, without orientation detection.
    Auto,
}

impl PageSegMode {
    fn value(self) -> c_uint {
        match self {
            Self::AutoOsd => 1,
            Self::Auto => 3,
        }
    }
}

/// Which recogniser Tesseract runs (its `TessOcrEngineMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineMode {
    /// The LSTM recogniser only, whatever else the language data holds.
    LstmOnly,
    /// What the language data offers.
    Default,
}

impl EngineMode {
    fn value(self) -> c_uint {
        match self {
            Self::LstmOnly => 1,
            Self::Default => 3,
        }
    }
}

type Handle = c_void;

/// The functions porter calls, taken from the library once.
struct Functions {
    create: unsafe extern "C" fn() -> *mut Handle,
    delete: unsafe extern "C" fn(*mut Handle),
    init2: unsafe extern "C" fn(*mut Handle, *const c_char, *const c_char, c_uint) -> c_int,
    set_page_seg_mode: unsafe extern "C" fn(*mut Handle, c_uint),
    set_image: unsafe extern "C" fn(*mut Handle, *const u8, c_int, c_int, c_int, c_int),
    set_source_resolution: unsafe extern "C" fn(*mut Handle, c_int),
    recognize: unsafe extern "C" fn(*mut Handle, *mut c_void) -> c_int,
    tsv_text: unsafe extern "C" fn(*mut Handle, c_int) -> *mut c_char,
    delete_text: unsafe extern "C" fn(*const c_char),
    version: unsafe extern "C" fn() -> *const c_char,
}

/// Tesseract's library, opened once per process and kept open for its
/// lifetime (an engine must never outlive the code it runs).
pub struct Library {
    functions: Functions,
    /// Keeps the code behind `functions` mapped.
    _library: libloading::Library,
}

/// `NAMES` are the names Tesseract's library goes by, tried in order.
const NAMES: &[&str] = if cfg!(target_os = "macos") {
    &[
        "libtesseract.5.dylib",
        "/opt/homebrew/lib/libtesseract.5.dylib",
        "/usr/local/lib/libtesseract.5.dylib",
        "libtesseract.dylib",
    ]
} else if cfg!(windows) {
    &["libtesseract-5.dll", "tesseract55.dll", "tesseract50.dll"]
} else {
    &["libtesseract.so.5", "libtesseract.so.4", "libtesseract.so"]
};

static LOADED: OnceLock<Result<Library, Error>> = OnceLock::new();

impl Library {
    /// Opens Tesseract's library the first time it is asked for (and
    /// answers the same, library or reason, every time after).
    pub fn load() -> Result<&'static Self, Error> {
        LOADED
            .get_or_init(Self::open)
            .as_ref()
            .map_err(Clone::clone)
    }

    fn open() -> Result<Self, Error> {
        for name in NAMES {
            // SAFETY: opening Tesseract runs its libraries' initialisers,
            // which set up their own state only (no code of porter's runs,
            // and none of them is known to misbehave when loaded late).
            let Ok(library) = (unsafe { libloading::Library::new(name) }) else {
                continue;
            };
            let functions = Functions::of(&library, name)?;
            return Ok(Self {
                functions,
                _library: library,
            });
        }
        Err(Error::NotInstalled {
            tried: NAMES.join(", "),
        })
    }

    /// Tesseract's version, as it gives it ("5.3.0").
    #[must_use]
    pub fn version(&self) -> String {
        // SAFETY: `TessVersion` takes nothing and returns a pointer to a
        // static NUL-terminated string owned by the library, which stays
        // loaded for the process's lifetime.
        let version = unsafe { (self.functions.version)() };
        if version.is_null() {
            return String::new();
        }
        // SAFETY: non-null, NUL-terminated and static, as above.
        unsafe { CStr::from_ptr(version) }
            .to_string_lossy()
            .into_owned()
    }
}

impl Functions {
    fn of(library: &libloading::Library, name: &str) -> Result<Self, Error> {
        /// Takes one function by its C name; the type is the one capi.h
        /// of Tesseract 4 and 5 declares for it.
        fn take<T: Copy>(
            library: &libloading::Library,
            name: &str,
            symbol: &str,
        ) -> Result<T, Error> {
            // SAFETY: every call below names a function of Tesseract's C
            // API with the signature its header declares (the same in
            // Tesseract 4 and 5); the symbol is copied out as a plain
            // function pointer, valid while the library stays loaded,
            // which `Library` guarantees by keeping it.
            unsafe { library.get::<T>(symbol.as_bytes()) }
                .map(|found| *found)
                .map_err(|_| Error::Incomplete {
                    library: name.to_owned(),
                    symbol: symbol.to_owned(),
                })
        }
        Ok(Self {
            create: take(library, name, "TessBaseAPICreate")?,
            delete: take(library, name, "TessBaseAPIDelete")?,
            init2: take(library, name, "TessBaseAPIInit2")?,
            set_page_seg_mode: take(library, name, "TessBaseAPISetPageSegMode")?,
            set_image: take(library, name, "TessBaseAPISetImage")?,
            set_source_resolution: take(library, name, "TessBaseAPISetSourceResolution")?,
            recognize: take(library, name, "TessBaseAPIRecognize")?,
            tsv_text: take(library, name, "TessBaseAPIGetTsvText")?,
            delete_text: take(library, name, "TessDeleteText")?,
            version: take(library, name, "TessVersion")?,
        })
    }
}

/// One Tesseract engine (a `TessBaseAPI`): started for a set of languages,
/// then given pictures to read one at a time. It is used from one thread
/// at a time (`&mut self` throughout) and deleted when dropped.
pub struct Engine {
    library: &'static Library,
    handle: NonNull<Handle>,
}

impl Engine {
    /// A new engine, not yet started for any language.
    pub fn new(library: &'static Library) -> Result<Self, Error> {
        // SAFETY: `TessBaseAPICreate` takes nothing and returns a new
        // engine owned by the caller (null only when out of memory).
        let handle = unsafe { (library.functions.create)() };
        let handle = NonNull::new(handle).ok_or(Error::NotCreated)?;
        Ok(Self { library, handle })
    }

    /// Starts the engine for `languages` ("eng", "eng+deu") with the data
    /// in `datapath`, or where Tesseract looks by default (`TESSDATA_PREFIX`,
    /// else where the system installed its data) when `None`. It reads the
    /// language data from disk.
    pub fn init(
        &mut self,
        datapath: Option<&str>,
        languages: &str,
        mode: EngineMode,
    ) -> Result<(), Error> {
        let language = CString::new(languages).map_err(|_| Error::Nul {
            what: "the language list",
        })?;
        let datapath = datapath
            .map(CString::new)
            .transpose()
            .map_err(|_| Error::Nul {
                what: "the data path",
            })?;
        let path = datapath.as_ref().map_or(std::ptr::null(), |p| p.as_ptr());
        // SAFETY: the handle is a live engine owned by `self`; both strings
        // are NUL-terminated and outlive the call (Tesseract copies them);
        // a null data path means its default, as the API documents.
        let status = unsafe {
            (self.library.functions.init2)(
                self.handle.as_ptr(),
                path,
                language.as_ptr(),
                mode.value(),
            )
        };
        if status == 0 {
            Ok(())
        } else {
            Err(Error::NoLanguage {
                languages: languages.to_owned(),
            })
        }
    }

    /// How the next pictures are segmented.
    pub fn set_page_seg_mode(&mut self, mode: PageSegMode) {
        // SAFETY: a live engine owned by `self`; the mode is one of the
        // values the C enum defines.
        unsafe { (self.library.functions.set_page_seg_mode)(self.handle.as_ptr(), mode.value()) }
    }

    /// The picture to read: `pixels` rows of `width` pixels of
    /// `bytes_per_pixel` bytes (1 for grey, 3 for RGB, 4 for RGBA), top to
    /// bottom, no padding. Tesseract copies them.
    pub fn set_image(
        &mut self,
        pixels: &[u8],
        width: u32,
        height: u32,
        bytes_per_pixel: u32,
    ) -> Result<(), Error> {
        let bad = || Error::BadPicture {
            width,
            height,
            bytes_per_pixel,
        };
        if !matches!(bytes_per_pixel, 1 | 3 | 4) || width == 0 || height == 0 {
            return Err(bad());
        }
        let line = u64::from(width) * u64::from(bytes_per_pixel);
        if line * u64::from(height) != pixels.len() as u64 {
            return Err(bad());
        }
        let (Ok(w), Ok(h), Ok(line), Ok(depth)) = (
            c_int::try_from(width),
            c_int::try_from(height),
            c_int::try_from(line),
            c_int::try_from(bytes_per_pixel),
        ) else {
            return Err(bad());
        };
        // SAFETY: a live engine owned by `self`; `pixels` holds exactly
        // `height` rows of `line` bytes (checked above), and Tesseract
        // copies them into a picture of its own before returning.
        unsafe {
            (self.library.functions.set_image)(
                self.handle.as_ptr(),
                pixels.as_ptr(),
                w,
                h,
                depth,
                line,
            );
        }
        Ok(())
    }

    /// The picture's resolution, in pixels per inch.
    pub fn set_source_resolution(&mut self, ppi: u32) {
        let ppi = c_int::try_from(ppi).unwrap_or(c_int::MAX);
        // SAFETY: a live engine owned by `self`; any value is accepted.
        unsafe { (self.library.functions.set_source_resolution)(self.handle.as_ptr(), ppi) }
    }

    /// Reads the picture set last (segmentation and recognition).
    pub fn recognize(&mut self) -> Result<(), Error> {
        // SAFETY: a live engine owned by `self`; a null monitor means no
        // progress callback and no cancellation, as the API documents.
        let status = unsafe {
            (self.library.functions.recognize)(self.handle.as_ptr(), std::ptr::null_mut())
        };
        if status == 0 {
            Ok(())
        } else {
            Err(Error::NotRecognised)
        }
    }

    /// What the last reading found, as Tesseract's TSV (one row per page,
    /// block, paragraph, line and word, with its box and confidence);
    /// `page` is the number written in its page column.
    pub fn tsv_text(&mut self, page: i32) -> Result<String, Error> {
        // SAFETY: a live engine owned by `self`; the result is a new
        // NUL-terminated string owned by the caller (or null).
        let text = unsafe { (self.library.functions.tsv_text)(self.handle.as_ptr(), page) };
        if text.is_null() {
            return Err(Error::NoText);
        }
        // SAFETY: non-null and NUL-terminated, owned here until freed.
        let copied = unsafe { CStr::from_ptr(text) }
            .to_string_lossy()
            .into_owned();
        // SAFETY: `text` came from Tesseract and is freed once, by the
        // function it documents for that.
        unsafe { (self.library.functions.delete_text)(text) };
        Ok(copied)
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        // SAFETY: the handle was made by `TessBaseAPICreate`, is owned by
        // this engine alone, and is deleted once, here.
        unsafe { (self.library.functions.delete)(self.handle.as_ptr()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The system's Tesseract, which the test command installs.
    fn library() -> &'static Library {
        Library::load().unwrap_or_else(|error| {
            panic!("{error}: these tests need Tesseract (scripts/test installs it)")
        })
    }

    #[test]
    fn the_library_loads_once_and_says_its_version() {
        let version = library().version();
        assert!(
            version.starts_with('4') || version.starts_with('5'),
            "{version:?}"
        );
        assert!(std::ptr::eq(library(), library()));
    }

    #[test]
    fn a_blank_page_reads_as_tsv_without_a_word() {
        let mut engine = Engine::new(library()).expect("an engine is created");
        engine
            .init(None, "eng", EngineMode::LstmOnly)
            .expect("English is installed");
        engine.set_page_seg_mode(PageSegMode::Auto);
        engine
            .set_image(&vec![255u8; 200 * 100], 200, 100, 1)
            .expect("the picture fits its sizes");
        engine.set_source_resolution(300);
        engine.recognize().expect("a blank page is read");
        let tsv = engine.tsv_text(1).expect("TSV comes back");
        assert!(
            tsv.lines().all(|row| !row.starts_with("5\t")),
            "no word rows: {tsv:?}"
        );
    }

    #[test]
    fn a_picture_whose_sizes_do_not_match_its_pixels_is_refused_before_tesseract_sees_it() {
        let mut engine = Engine::new(library()).expect("an engine is created");
        for (pixels, width, height, bpp) in [
            (vec![0u8; 10], 4, 4, 1),
            (vec![0u8; 48], 4, 4, 2),
            (vec![0u8; 0], 0, 4, 1),
            (vec![0u8; 16], 4, 4, 3),
        ] {
            assert!(
                matches!(
                    engine.set_image(&pixels, width, height, bpp),
                    Err(Error::BadPicture { .. })
                ),
                "{width}x{height}x{bpp} of {} bytes",
                pixels.len()
            );
        }
        assert!(engine.set_image(&[255u8; 48], 4, 4, 3).is_ok());
    }

    #[test]
    fn a_missing_language_is_an_error_that_names_it() {
        let mut engine = Engine::new(library()).expect("an engine is created");
        let error = engine
            .init(None, "no-such-language", EngineMode::LstmOnly)
            .expect_err("no data for it");
        assert_eq!(
            error,
            Error::NoLanguage {
                languages: "no-such-language".to_owned()
            }
        );
        assert!(matches!(
            engine.init(None, "en\0g", EngineMode::LstmOnly),
            Err(Error::Nul { .. })
        ));
    }
}
