//! How raylb names a failed file operation in its one-line errors: the operating system's
//! reason without its error number, and what a path that is not a regular file is instead.
//! Reading (`input`), writing (`output`) and the image codecs (`image_io`) all say it so.

use std::fs::Metadata;
use std::io;

/// The operating system's reason for `e`, without the "(os error N)" suffix, in lower case
/// (it follows a colon in our messages).
///
/// ```
/// use renderer::file_errors::io_reason;
/// use std::io;
///
/// let e = io::Error::from(io::ErrorKind::NotFound);
/// assert_eq!(io_reason(&e), "entity not found");
/// let e = io::Error::from_raw_os_error(2);
/// assert!(!io_reason(&e).contains("os error"));
/// ```
pub fn io_reason(e: &io::Error) -> String {
    let text = e.to_string();
    let text = text
        .find(" (os error")
        .map_or(text.as_str(), |i| &text[..i]);
    let mut chars = text.chars();
    chars.next().map_or(String::new(), |first| {
        first.to_lowercase().chain(chars).collect()
    })
}

/// What kind of file `metadata` describes, for errors: `a directory`, `a FIFO`, …
pub(crate) fn file_kind(metadata: &Metadata) -> &'static str {
    let t = metadata.file_type();
    if t.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    "not a file"
}
