//! Freeing the big buffers a capture is done with, off the caller's path.

/// `BACKGROUND_FREE_BYTES` is the buffer size from which [`release`] frees
/// on another thread.
const BACKGROUND_FREE_BYTES: usize = 8 << 20;

/// Frees a buffer the capture is done with. A big one (a replaced 50 MB
/// text, a decoded file) is freed on a thread of its own: handing tens of
/// megabytes of pages back to the system takes milliseconds that the
/// caller, who is waiting to send the result on, need not wait for.
pub(crate) fn release(buffer: Vec<u8>) {
    if buffer.capacity() >= BACKGROUND_FREE_BYTES {
        // Should the thread not start, the closure and the buffer are
        // dropped right here instead.
        let _ = std::thread::Builder::new()
            .name("porter-capture-free".to_owned())
            .spawn(move || drop(buffer));
    }
}
