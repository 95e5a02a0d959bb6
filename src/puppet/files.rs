//! Reading a file of Puppet's safely: what the latest read of one found
//! ([`FileStatus`]), and [`read_capped`], the bounded, non-blocking,
//! no-symlink read of a regular file that the run files
//! (`super::state`) and the certificates (`super::certificates`) share.

use super::yaml::ParseError;
use std::io::{self, Read};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

/// What the latest read of one file found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum FileStatus {
    /// Not read yet.
    #[default]
    NotRead,
    Ok,
    /// The file does not exist (for the summary: Puppet has not run yet, or
    /// the path is wrong).
    Missing,
    /// It exists but could not be read; `permission` when the error was
    /// EACCES/EPERM (a non-root reader and Puppet's mode 0640).
    Unreadable {
        error: String,
        permission: bool,
    },
    /// It was read but its content is not usable.
    Invalid(ParseError),
}

impl FileStatus {
    pub fn is_ok(&self) -> bool {
        matches!(self, FileStatus::Ok)
    }

    /// Short name of the condition: `ok`, `missing`, `unreadable`,
    /// `invalid`, `not-read`.
    pub fn kind(&self) -> &'static str {
        match self {
            FileStatus::NotRead => "not-read",
            FileStatus::Ok => "ok",
            FileStatus::Missing => "missing",
            FileStatus::Unreadable { .. } => "unreadable",
            FileStatus::Invalid(_) => "invalid",
        }
    }
}

/// What identifies a file's content without reading it: Puppet replaces
/// the files by rename, so a new run is a new inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: i64,
    mtime_nsec: i64,
}

impl FileStamp {
    fn of(m: &std::fs::Metadata) -> FileStamp {
        FileStamp {
            dev: m.dev(),
            ino: m.ino(),
            len: m.len(),
            mtime: m.mtime(),
            mtime_nsec: m.mtime_nsec(),
        }
    }
}

pub enum Outcome {
    Content(Vec<u8>, FileStamp),
    Missing,
    Failed(FileStatus),
}

/// Read at most `max` bytes of `path`; a larger file is refused from its
/// size, before reading. `unchanged` short-cuts a file whose stamp is the
/// same as the last read's.
///
/// The directories are the `puppet` user's, so what is found there is not
/// trusted: the file is opened without following a symbolic link (one
/// pointing at a file only the agent may read would show its content in
/// error texts) and without blocking (opening a FIFO would wait for a
/// writer forever), and read only if it is a regular file.
pub fn read_capped(path: &Path, max: usize, unchanged: Option<FileStamp>) -> Option<Outcome> {
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path);
    let mut file = match opened {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Some(Outcome::Missing),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Some(Outcome::Failed(FileStatus::Unreadable {
                error: format!("{} is a symbolic link, not read", path.display()),
                permission: false,
            }))
        }
        Err(e) => return Some(Outcome::Failed(unreadable(path, &e))),
    };
    let meta = match file.metadata() {
        Ok(m) => m,
        Err(e) => return Some(Outcome::Failed(unreadable(path, &e))),
    };
    if !meta.is_file() {
        return Some(Outcome::Failed(FileStatus::Unreadable {
            error: format!("{} is not a regular file", path.display()),
            permission: false,
        }));
    }
    let stamp = FileStamp::of(&meta);
    if unchanged == Some(stamp) {
        return None;
    }
    if meta.len() > max as u64 {
        return Some(Outcome::Failed(FileStatus::Invalid(ParseError::TooLarge {
            len: meta.len(),
            max: max as u64,
        })));
    }
    let mut buf = Vec::with_capacity(meta.len() as usize);
    if let Err(e) = (&mut file).take(max as u64 + 1).read_to_end(&mut buf) {
        return Some(Outcome::Failed(unreadable(path, &e)));
    }
    if buf.len() > max {
        // It grew while being read.
        return Some(Outcome::Failed(FileStatus::Invalid(ParseError::TooLarge {
            len: buf.len() as u64,
            max: max as u64,
        })));
    }
    Some(Outcome::Content(buf, stamp))
}

fn unreadable(path: &Path, e: &io::Error) -> FileStatus {
    FileStatus::Unreadable {
        error: format!("reading {}: {e}", path.display()),
        permission: e.kind() == io::ErrorKind::PermissionDenied,
    }
}
