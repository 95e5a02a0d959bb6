//! A bounded follower of one log file (`tail -F` for a JSON-lines log, see
//! [`super::events_log`]), used by [`super::events`].
//!
//! [`Tail::read_new`] returns the complete lines appended since the last
//! call, reading at most [`TailLimits::max_read`] bytes per call, and:
//! - keeps an unfinished last line until its newline arrives; a line over
//!   [`TailLimits::max_line`] is skipped up to its newline and counted;
//! - a file shorter than the position read (truncated): starts over at 0;
//! - the path naming another file (rotated by rename, or deleted and
//!   created again): reads the rest of the old file through the descriptor
//!   it holds, then the new file from its start. While the path is missing
//!   the old descriptor is kept and still read (the writer may still append
//!   to it);
//! - opens with `O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC` and reads regular
//!   files only: a symbolic link, FIFO or device is refused, without
//!   blocking;
//! - made with [`Tail::trusting`], reads only while the path is trusted
//!   ([`super::trust`]): the path is checked before each read and the file
//!   opened by its descriptor; an untrusted log is closed, and once trusted
//!   again followed from its end as it is then, as [`Tail::at_end`] does.
//!
//! Not detected: a truncation followed, before the next call, by writes
//! past the old position (`copytruncate` racing the writer); the lines
//! written in between are then missed or cut. Nor lines the writer still
//! appends to a rotated file after the switch to the new one (the Puppet
//! daemon reopens its logs on `SIGUSR2`).
//!
//! All of it is blocking file I/O (short reads of a local file).

use super::trust::{Trust, Untrusted};
use std::fs::File;
use std::io;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// How much [`Tail`] reads and keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TailLimits {
    /// Longest line kept, in bytes, without its newline.
    pub max_line: usize,
    /// Most bytes read by one [`Tail::read_new`].
    pub max_read: usize,
}

impl Default for TailLimits {
    /// 64 KiB lines ([`super::events_log::MAX_LINE_BYTES`]), 1 MiB a call.
    fn default() -> Self {
        TailLimits {
            max_line: super::events_log::MAX_LINE_BYTES,
            max_read: 1 << 20,
        }
    }
}

/// The path's state at the end of a [`Tail::read_new`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum TailStatus {
    /// A regular file, being followed.
    #[default]
    Following,
    /// No file at the path (waiting for one; a file that then appears is
    /// read from its start).
    Missing,
    /// Something other than a regular file: a symbolic link, FIFO, device.
    Refused(String),
    /// Opening or reading failed (permissions, I/O error).
    Failed(String),
    /// The file or a directory above it may be written by someone other
    /// than root (or the trusted owner): not read.
    Untrusted(Untrusted),
}

/// What one [`Tail::read_new`] found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct TailRead {
    /// Complete, non-empty lines, without `\n` (nor a `\r` before it).
    pub lines: Vec<Vec<u8>>,
    /// Lines over [`TailLimits::max_line`], skipped.
    pub too_long: usize,
    /// Unfinished last lines dropped because their file was truncated or
    /// replaced before their newline came.
    pub incomplete: usize,
    /// The file was truncated (read again from its start).
    pub truncated: bool,
    /// The path now names another file, read from its start.
    pub rotated: bool,
    /// The byte budget ran out before the end: call again.
    pub more: bool,
    pub status: TailStatus,
}

/// Follows one path. See the module documentation.
pub struct Tail {
    path: PathBuf,
    limits: TailLimits,
    open: Option<Open>,
    /// The start of an unfinished line.
    partial: Vec<u8>,
    /// Discarding up to the next newline (an over-long line, or the end of
    /// the line that was unfinished when following began).
    skipping: bool,
    /// Who may write the log ([`Tail::trusting`]); `None`: not checked.
    trust: Option<Trust>,
    /// The log was refused as untrusted: what it holds when trusted again
    /// is not new.
    distrusted: bool,
}

struct Open {
    file: File,
    dev: u64,
    ino: u64,
    offset: u64,
}

enum OpenError {
    Missing,
    Status(TailStatus),
}

impl Tail {
    /// Follow `path` from its current end: what it holds now is not new.
    /// A path that is missing or refused now is read from the start of the
    /// file that appears there later.
    pub fn at_end(path: &Path, limits: TailLimits) -> Tail {
        let mut tail = Tail {
            path: path.to_path_buf(),
            limits,
            open: None,
            partial: Vec::new(),
            skipping: false,
            trust: None,
            distrusted: false,
        };
        tail.open_at_end();
        tail
    }

    /// As [`Tail::at_end`], reading the log only while `trust` trusts it
    /// (and the directories above it).
    pub fn trusting(path: &Path, limits: TailLimits, trust: Trust) -> Tail {
        let mut tail = Tail {
            path: path.to_path_buf(),
            limits,
            open: None,
            partial: Vec::new(),
            skipping: false,
            trust: Some(trust),
            distrusted: false,
        };
        if tail.judge().is_ok() {
            tail.open_at_end();
        }
        tail
    }

    /// Open the file at its end (if there is a trusted regular file).
    fn open_at_end(&mut self) {
        self.partial.clear();
        self.skipping = false;
        match open_regular(&self.path, self.trust.as_ref()) {
            Ok((file, meta)) => {
                let len = meta.len();
                // Skip the rest of a line that was unfinished at the start.
                let mut last = [0u8; 1];
                self.skipping =
                    len > 0 && file.read_at(&mut last, len - 1).is_ok() && last[0] != b'\n';
                self.open = Some(Open {
                    file,
                    dev: meta.dev(),
                    ino: meta.ino(),
                    offset: len,
                });
            }
            // Replaced between the check of the path and the open.
            Err(OpenError::Status(TailStatus::Untrusted(_))) => self.distrusted = true,
            Err(_) => {}
        }
    }

    /// Whether the path is trusted now; when it is not, the log is closed
    /// and what it holds once trusted again is not new.
    fn judge(&mut self) -> Result<(), Untrusted> {
        let Some(trust) = &self.trust else {
            return Ok(());
        };
        match trust.check(&self.path) {
            Ok(()) => {
                if std::mem::take(&mut self.distrusted) {
                    self.open_at_end();
                }
                Ok(())
            }
            Err(e) => {
                self.open = None;
                self.partial.clear();
                self.skipping = false;
                self.distrusted = true;
                Err(e)
            }
        }
    }

    /// The complete lines appended since the last call (at most
    /// `max_read` bytes read).
    pub fn read_new(&mut self) -> TailRead {
        let mut out = TailRead::default();
        if let Err(e) = self.judge() {
            out.status = TailStatus::Untrusted(e);
            return out;
        }
        let mut budget = self.limits.max_read;
        let at_path = std::fs::symlink_metadata(&self.path);
        if let Some(open) = &self.open {
            let replaced = match &at_path {
                Ok(m) => m.dev() != open.dev || m.ino() != open.ino,
                Err(_) => false,
            };
            if let Err(e) = self.read_open(&mut budget, &mut out) {
                out.status = TailStatus::Failed(format!("reading {}: {e}", self.path.display()));
                return out;
            }
            match &at_path {
                Err(e) if e.kind() == io::ErrorKind::NotFound => out.status = TailStatus::Missing,
                // Not known to be replaced: keep the file held.
                Err(e) => out.status = TailStatus::Failed(format!("{}: {e}", self.path.display())),
                Ok(_) => {}
            }
            if !replaced || out.more {
                return out;
            }
            // Replaced, and the old file is read to its end.
            self.open = None;
            drop_partial(&mut self.partial, &mut self.skipping, &mut out);
            out.rotated = true;
        }
        match open_regular(&self.path, self.trust.as_ref()) {
            Ok((file, meta)) => {
                self.open = Some(Open {
                    file,
                    dev: meta.dev(),
                    ino: meta.ino(),
                    offset: 0,
                });
                if let Err(e) = self.read_open(&mut budget, &mut out) {
                    out.status =
                        TailStatus::Failed(format!("reading {}: {e}", self.path.display()));
                }
            }
            Err(OpenError::Missing) => out.status = TailStatus::Missing,
            Err(OpenError::Status(s)) => {
                self.distrusted |= matches!(s, TailStatus::Untrusted(_));
                out.status = s;
            }
        }
        out
    }

    /// Read the open file from its offset to its end or the budget.
    fn read_open(&mut self, budget: &mut usize, out: &mut TailRead) -> io::Result<()> {
        let Some(open) = self.open.as_mut() else {
            return Ok(());
        };
        let len = open.file.metadata()?.len();
        if len < open.offset {
            open.offset = 0;
            out.truncated = true;
            drop_partial(&mut self.partial, &mut self.skipping, out);
        }
        // A buffer the size of what is there (a line or two, mostly), at
        // least a page, at most 64 KiB: a zeroed 64 KiB for every event
        // cost its memset and, freed, a consolidation of malloc's bins.
        let pending = usize::try_from(len - open.offset).unwrap_or(usize::MAX);
        let mut buf = vec![0u8; pending.clamp(4 << 10, 64 << 10).min(*budget)];
        while *budget > 0 {
            let want = (*budget).min(buf.len());
            let n = match open.file.read_at(&mut buf[..want], open.offset) {
                Ok(0) => return Ok(()),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            open.offset += n as u64;
            *budget -= n;
            split_lines(
                &buf[..n],
                &mut self.partial,
                &mut self.skipping,
                self.limits.max_line,
                out,
            );
        }
        out.more = open.file.metadata()?.len() > open.offset;
        Ok(())
    }
}

/// Forget an unfinished line whose file was truncated or replaced.
fn drop_partial(partial: &mut Vec<u8>, skipping: &mut bool, out: &mut TailRead) {
    if !partial.is_empty() {
        out.incomplete += 1;
        partial.clear();
    }
    *skipping = false;
}

/// Cut `chunk` into lines, continuing `partial`.
fn split_lines(
    chunk: &[u8],
    partial: &mut Vec<u8>,
    skipping: &mut bool,
    max_line: usize,
    out: &mut TailRead,
) {
    let mut rest = chunk;
    while let Some(nl) = rest.iter().position(|&b| b == b'\n') {
        let piece = &rest[..nl];
        rest = &rest[nl + 1..];
        if std::mem::take(skipping) {
            continue;
        }
        let mut line = std::mem::take(partial);
        if line.len() + piece.len() > max_line {
            out.too_long += 1;
            continue;
        }
        line.extend_from_slice(piece);
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        if !line.is_empty() {
            out.lines.push(line);
        }
    }
    if *skipping {
        return;
    }
    if partial.len() + rest.len() > max_line {
        out.too_long += 1;
        partial.clear();
        *skipping = true;
    } else {
        partial.extend_from_slice(rest);
    }
}

/// Open a regular file for reading, refusing anything else without
/// blocking (like `state::read_capped`), and, with `trust`, a file it does
/// not trust (judged by the descriptor: what is read is what was judged).
fn open_regular(
    path: &Path,
    trust: Option<&Trust>,
) -> Result<(File, std::fs::Metadata), OpenError> {
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path);
    let file = match opened {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(OpenError::Missing),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(OpenError::Status(TailStatus::Refused(format!(
                "{} is a symbolic link, not read",
                path.display()
            ))))
        }
        Err(e) => {
            return Err(OpenError::Status(TailStatus::Failed(format!(
                "opening {}: {e}",
                path.display()
            ))))
        }
    };
    let meta = file
        .metadata()
        .map_err(|e| OpenError::Status(TailStatus::Failed(format!("{}: {e}", path.display()))))?;
    if !meta.is_file() {
        return Err(OpenError::Status(TailStatus::Refused(format!(
            "{} is not a regular file",
            path.display()
        ))));
    }
    if let Some(trust) = trust {
        trust
            .check_file(path, &meta)
            .map_err(|e| OpenError::Status(TailStatus::Untrusted(e)))?;
    }
    Ok((file, meta))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const SMALL: TailLimits = TailLimits {
        max_line: 100,
        max_read: 1 << 20,
    };

    fn append(path: &Path, bytes: &[u8]) {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .unwrap();
        f.write_all(bytes).unwrap();
    }

    fn lines(read: &TailRead) -> Vec<&str> {
        read.lines
            .iter()
            .map(|l| std::str::from_utf8(l).unwrap())
            .collect()
    }

    #[test]
    fn starts_at_the_end_and_completes_partial_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        append(&path, b"old 1\nold 2\nold unfinished");
        let mut tail = Tail::at_end(&path, SMALL);
        assert_eq!(tail.read_new(), TailRead::default());
        // The end of the line that was unfinished at the start is not a line.
        append(&path, b" end\nfirst\nsec");
        let read = tail.read_new();
        assert_eq!(lines(&read), ["first"]);
        assert_eq!(read.status, TailStatus::Following);
        append(&path, b"ond\r\n\nthi");
        assert_eq!(lines(&tail.read_new()), ["second"]);
        assert!(tail.read_new().lines.is_empty());
        append(&path, b"rd\n");
        assert_eq!(lines(&tail.read_new()), ["third"]);
    }

    #[test]
    fn reads_at_most_the_budget_per_call() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        append(&path, b"");
        let limits = TailLimits {
            max_line: 100,
            max_read: 25,
        };
        let mut tail = Tail::at_end(&path, limits);
        let text: String = (0..20).map(|i| format!("line {i:02}\n")).collect();
        append(&path, text.as_bytes());
        let mut got = Vec::new();
        let mut calls = 0;
        loop {
            let read = tail.read_new();
            calls += 1;
            assert!(read.lines.len() <= 3);
            got.extend(lines(&read).iter().map(|s| s.to_string()));
            if !read.more {
                break;
            }
        }
        assert_eq!(calls, 7); // 160 bytes, 25 a call
        assert_eq!(got.join("\n") + "\n", text);
    }

    #[test]
    fn rotation_delivers_the_old_files_last_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        append(&path, b"before\n");
        let mut tail = Tail::at_end(&path, SMALL);
        append(&path, b"a\nb\n");
        std::fs::rename(&path, dir.path().join("events.jsonl.1")).unwrap();
        // The writer still has the old file until it reopens.
        append(&dir.path().join("events.jsonl.1"), b"c\nunfinished");
        let read = tail.read_new();
        assert_eq!(lines(&read), ["a", "b", "c"]);
        assert_eq!(read.status, TailStatus::Missing);
        append(&path, b"new 1\n");
        let read = tail.read_new();
        assert_eq!(lines(&read), ["new 1"]);
        assert!(read.rotated);
        assert_eq!(read.incomplete, 1);
        assert_eq!(read.status, TailStatus::Following);
        append(&path, b"new 2\n");
        assert_eq!(lines(&tail.read_new()), ["new 2"]);
    }

    #[test]
    fn rotation_between_two_reads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        append(&path, b"");
        let mut tail = Tail::at_end(&path, SMALL);
        append(&path, b"old\n");
        std::fs::rename(&path, dir.path().join("events.jsonl.1")).unwrap();
        append(&path, b"new\n");
        let read = tail.read_new();
        assert_eq!(lines(&read), ["old", "new"]);
        assert!(read.rotated);
    }

    #[test]
    fn rotation_with_the_budget_spent_on_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        append(&path, b"");
        let limits = TailLimits {
            max_line: 100,
            max_read: 8,
        };
        let mut tail = Tail::at_end(&path, limits);
        append(
            &path,
            b"old 1
old 2
old 3
",
        );
        std::fs::rename(&path, dir.path().join("events.jsonl.1")).unwrap();
        append(
            &path, b"new
",
        );
        let mut got = Vec::new();
        loop {
            let read = tail.read_new();
            got.extend(lines(&read).iter().map(|s| s.to_string()));
            if !read.more {
                break;
            }
        }
        assert_eq!(got, ["old 1", "old 2", "old 3", "new"]);
    }

    #[test]
    fn truncation_starts_over() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        append(&path, b"");
        let mut tail = Tail::at_end(&path, SMALL);
        append(&path, b"one\ntwo\nhalf");
        assert_eq!(lines(&tail.read_new()), ["one", "two"]);
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(0)
            .unwrap();
        append(&path, b"x\n");
        let read = tail.read_new();
        assert_eq!(lines(&read), ["x"]);
        assert!(read.truncated && !read.rotated);
        assert_eq!(read.incomplete, 1);
    }

    #[test]
    fn deleted_then_created_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        append(&path, b"");
        let mut tail = Tail::at_end(&path, SMALL);
        append(&path, b"last\n");
        std::fs::remove_file(&path).unwrap();
        let read = tail.read_new();
        assert_eq!(
            (lines(&read), &read.status),
            (vec!["last"], &TailStatus::Missing)
        );
        assert_eq!(tail.read_new().status, TailStatus::Missing);
        append(&path, b"again\n");
        let read = tail.read_new();
        assert_eq!(lines(&read), ["again"]);
        assert!(read.rotated);

        // Missing from the start: the file that appears is new, read whole.
        let other = dir.path().join("later.jsonl");
        let mut tail = Tail::at_end(&other, SMALL);
        assert_eq!(tail.read_new().status, TailStatus::Missing);
        append(&other, b"first\n");
        assert_eq!(lines(&tail.read_new()), ["first"]);
    }

    #[test]
    fn a_huge_line_is_skipped_and_counted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        append(&path, b"");
        let mut tail = Tail::at_end(&path, SMALL);
        append(&path, b"ok 1\n");
        append(&path, &[b'x'; 70]);
        assert_eq!(lines(&tail.read_new()), ["ok 1"]);
        append(&path, &vec![b'y'; 1 << 20]); // 1 MiB, no newline yet
        let read = tail.read_new();
        assert_eq!((read.lines.len(), read.too_long), (0, 1));
        append(&path, b"yyy\nok 2\n");
        let read = tail.read_new();
        assert_eq!((lines(&read), read.too_long), (vec!["ok 2"], 0));
        // Over the cap by its newline only: exactly max_line is fine.
        let mut exact = vec![b'z'; 100];
        exact.extend_from_slice(b"\n");
        exact.extend_from_slice(&[b'w'; 101]);
        exact.extend_from_slice(b"\n");
        append(&path, &exact);
        let read = tail.read_new();
        assert_eq!((read.lines, read.too_long), (vec![vec![b'z'; 100]], 1));
    }

    #[test]
    fn a_fifo_or_symlink_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo.jsonl");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let started = std::time::Instant::now();
        let mut tail = Tail::at_end(&fifo, SMALL);
        assert!(matches!(tail.read_new().status, TailStatus::Refused(_)));
        assert!(started.elapsed() < std::time::Duration::from_secs(1));

        let target = dir.path().join("real.jsonl");
        append(&target, b"");
        let link = dir.path().join("link.jsonl");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let mut tail = Tail::at_end(&link, SMALL);
        append(&target, b"hidden\n");
        let read = tail.read_new();
        assert!(read.lines.is_empty());
        assert!(matches!(read.status, TailStatus::Refused(m) if m.contains("symbolic link")));

        // A regular file replaced by a FIFO: the old file is read, then refused.
        let path = dir.path().join("events.jsonl");
        append(&path, b"");
        let mut tail = Tail::at_end(&path, SMALL);
        append(&path, b"kept\n");
        std::fs::remove_file(&path).unwrap();
        let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let read = tail.read_new();
        assert_eq!(lines(&read), ["kept"]);
        assert!(matches!(read.status, TailStatus::Refused(_)));
    }

    /// With a trust: a log anyone may write is not read, and once fixed is
    /// followed from its end then; a log that appears in a trusted
    /// directory is read from its start, as without one.
    #[test]
    fn an_untrusted_log_is_closed_and_followed_from_its_end_once_fixed() {
        use std::os::unix::fs::PermissionsExt;
        let chmod = |p: &Path, mode: u32| {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap()
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        append(&path, b"old\n");
        chmod(&path, 0o644);
        let mut tail = Tail::trusting(&path, SMALL, Trust::default());
        append(&path, b"one\n");
        assert_eq!(lines(&tail.read_new()), ["one"]);
        // World-writable: refused, and nothing read.
        chmod(&path, 0o666);
        append(&path, b"forged\n");
        let read = tail.read_new();
        assert!(read.lines.is_empty());
        assert!(
            matches!(
                &read.status,
                TailStatus::Untrusted(Untrusted::OtherWritable { .. })
            ),
            "{:?}",
            read.status
        );
        // Fixed: what was written meanwhile is not read, what follows is.
        chmod(&path, 0o644);
        let read = tail.read_new();
        assert_eq!(
            (read.lines.len(), &read.status),
            (0, &TailStatus::Following)
        );
        append(&path, b"two\n");
        assert_eq!(lines(&tail.read_new()), ["two"]);
        // The directory opened to its group: refused as well.
        chmod(dir.path(), 0o770);
        append(&path, b"forged\n");
        assert!(matches!(
            tail.read_new().status,
            TailStatus::Untrusted(Untrusted::GroupWritable { .. })
        ));
        chmod(dir.path(), 0o700);
        // Gone while refused, then a new file: read from its start.
        std::fs::remove_file(&path).unwrap();
        assert_eq!(tail.read_new().status, TailStatus::Missing);
        append(&path, b"new\n");
        chmod(&path, 0o644);
        assert_eq!(lines(&tail.read_new()), ["new"]);
        // Untrusted from the start: nothing of it is new either.
        let other = dir.path().join("other.jsonl");
        append(&other, b"before\n");
        chmod(&other, 0o646);
        let mut tail = Tail::trusting(&other, SMALL, Trust::default());
        assert!(matches!(tail.read_new().status, TailStatus::Untrusted(_)));
        append(&other, b"while\n");
        chmod(&other, 0o644);
        assert!(tail.read_new().lines.is_empty());
        append(&other, b"after\n");
        assert_eq!(lines(&tail.read_new()), ["after"]);
    }

    #[test]
    fn garbage_lines_are_counted_by_the_parser() {
        use super::super::events_log::{parse_line, LineKind};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        append(&path, b"");
        let mut tail = Tail::at_end(&path, TailLimits::default());
        let capture = std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/puppet/logdest/log.jsonl"),
        )
        .unwrap();
        append(&path, &capture[..capture.len() / 2]);
        append(&path, b"\x00\xff not json\n{\"level\":");
        let first = tail.read_new();
        append(&path, b"\"notice\"}\n");
        append(&path, &capture[capture.len() / 2..]);
        let second = tail.read_new();
        let all: Vec<_> = first
            .lines
            .iter()
            .chain(&second.lines)
            .map(|l| parse_line(l))
            .collect();
        let errors = all.iter().filter(|r| r.is_err()).count();
        // The first half of a cut line with the garbage after it, a line
        // without `message`, and the second half of the cut line.
        assert_eq!(errors, 3);
        let ok: Vec<_> = all.into_iter().filter_map(Result::ok).collect();
        assert_eq!(ok.len(), 27);
        assert!(matches!(ok.last().unwrap().kind, LineKind::RunEnd { .. }));
    }
}
