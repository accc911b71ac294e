//! Pixel work the file view (`porter-fileview`) needs fast even in test
//! builds, kept apart so that its build profile can optimise it on its own
//! (a debug build of the file view scales a camera's photo in seconds, an
//! optimised one in tens of milliseconds).
//!
//! Today: [`resize`], scaling of 8-bit grey, RGB and RGBA pixels.

mod resize;

pub use resize::resize;
