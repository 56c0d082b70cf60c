//! Output files that never destroy the user's data.
//!
//! Two rules hold for every file bcwire writes (`-w`, `-o`, `--out-dir`, `report`,
//! `man --out-dir`, `synth`):
//!
//! - An output that is the same file as an input — compared by device and inode after
//!   following links, so `./x`, `/abs/x`, a symbolic link and a hard link all count — is
//!   refused before anything is opened for writing ([`refuse_inputs`]).
//! - A regular file is written to a temporary file beside it and renamed over the target
//!   only when complete ([`OutputFile`]): a failed or interrupted run leaves the older
//!   file whole. A symbolic link is followed (its target is replaced, the link stays) and
//!   an existing file keeps its permissions. What is not a regular file (a FIFO, a
//!   device such as `/dev/null`) is written directly: renaming over it would replace the
//!   device node with a file.

use anyhow::{Context, Result};
use std::fs::{File, Permissions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// How many symbolic links are followed before giving up, as the kernel's ELOOP limit.
const MAX_LINKS: usize = 40;

/// Identity of an existing file: device and inode where the platform has them, the
/// canonical path elsewhere.
#[derive(Debug, PartialEq, Eq)]
struct FileId {
    #[cfg(unix)]
    dev_ino: (u64, u64),
    #[cfg(not(unix))]
    path: PathBuf,
}

fn file_id(path: &Path) -> Option<FileId> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path).ok()?;
        Some(FileId {
            dev_ino: (m.dev(), m.ino()),
        })
    }
    #[cfg(not(unix))]
    {
        Some(FileId {
            path: std::fs::canonicalize(path).ok()?,
        })
    }
}

/// Refuses `output` when it is the same file as one of `inputs` (`-` and files that do
/// not exist are never the same). `what` names the option in the message (`-w`, `-o`).
pub fn refuse_inputs<P: AsRef<Path>>(what: &str, output: &Path, inputs: &[P]) -> Result<()> {
    if output.as_os_str() == "-" {
        return Ok(());
    }
    let Some(out_id) = file_id(output) else {
        return Ok(());
    };
    for input in inputs {
        let input = input.as_ref();
        if input.as_os_str() == "-" {
            continue;
        }
        if file_id(input).as_ref() == Some(&out_id) {
            anyhow::bail!(
                "{what} {} is the same file as the input {}: refusing to write over it",
                output.display(),
                input.display()
            );
        }
    }
    Ok(())
}

/// The path a write to `path` lands on: symbolic links followed to their final target
/// (which need not exist yet).
fn resolve_links(path: &Path) -> Result<PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&current) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = std::fs::read_link(&current)
                    .with_context(|| format!("reading the link {}", current.display()))?;
                current = match current.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            _ => return Ok(current),
        }
    }
    anyhow::bail!("{}: too many levels of symbolic links", path.display())
}

/// A file being written: [`OutputFile::commit`] puts it in place; dropped without
/// committing, it leaves the target as it was.
pub struct OutputFile {
    inner: Inner,
    shown: PathBuf,
}

enum Inner {
    /// A FIFO or device: written in place.
    Direct(File),
    /// A regular file (or none yet): staged beside the target.
    Staged {
        temp: tempfile::NamedTempFile,
        target: PathBuf,
        keep: Option<Permissions>,
    },
}

impl OutputFile {
    /// Opens `path` for writing as the module documentation says.
    pub fn create(path: &Path) -> Result<Self> {
        let target = resolve_links(path)?;
        let existing = std::fs::metadata(&target).ok();
        let inner = match existing {
            Some(m) if !m.is_file() && !m.is_dir() => Inner::Direct(
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(&target)
                    .with_context(|| format!("opening {}", path.display()))?,
            ),
            Some(m) if m.is_dir() => {
                anyhow::bail!("{} is a directory", path.display())
            }
            existing => {
                let dir = match target.parent() {
                    Some(d) if !d.as_os_str().is_empty() => d,
                    _ => Path::new("."),
                };
                let name = target
                    .file_name()
                    .map_or_else(|| "output".into(), |n| n.to_string_lossy().into_owned());
                let prefix = format!(".{name}.");
                let mut builder = tempfile::Builder::new();
                builder.prefix(&prefix).suffix(".part");
                // A new file gets the mode File::create would give it (0666 less the
                // umask) rather than the temporary file's private 0600.
                #[cfg(unix)]
                {
                    use std::os::unix::fs::PermissionsExt;
                    builder.permissions(Permissions::from_mode(0o666));
                }
                let temp = builder
                    .tempfile_in(dir)
                    .with_context(|| format!("creating a file in {}", dir.display()))?;
                Inner::Staged {
                    temp,
                    target,
                    keep: existing.map(|m| m.permissions()),
                }
            }
        };
        Ok(Self {
            inner,
            shown: path.to_path_buf(),
        })
    }

    /// Flushes the data to disk and puts the file in place.
    pub fn commit(self) -> Result<()> {
        let shown = self.shown;
        match self.inner {
            Inner::Direct(mut f) => f
                .flush()
                .with_context(|| format!("writing {}", shown.display())),
            Inner::Staged { temp, target, keep } => {
                let file = temp.as_file();
                if let Some(p) = keep {
                    file.set_permissions(p)
                        .with_context(|| format!("keeping the mode of {}", shown.display()))?;
                }
                file.sync_all()
                    .with_context(|| format!("writing {}", shown.display()))?;
                temp.persist(&target)
                    .map_err(|e| e.error)
                    .with_context(|| format!("putting {} in place", shown.display()))?;
                Ok(())
            }
        }
    }
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.inner {
            Inner::Direct(f) => f.write(buf),
            Inner::Staged { temp, .. } => temp.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match &mut self.inner {
            Inner::Direct(f) => f.write_all(buf),
            Inner::Staged { temp, .. } => temp.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.inner {
            Inner::Direct(f) => f.flush(),
            Inner::Staged { temp, .. } => temp.flush(),
        }
    }
}

/// Writes `bytes` to `path` whole, as [`OutputFile`] does.
pub fn write_whole(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut f = OutputFile::create(path)?;
    f.write_all(bytes)
        .with_context(|| format!("writing {}", path.display()))?;
    f.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_write_leaves_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.bin");
        std::fs::write(&path, b"old").unwrap();
        {
            let mut f = OutputFile::create(&path).unwrap();
            f.write_all(b"new, but never committed").unwrap();
        }
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        // No temporary file is left behind either.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn committed_write_replaces_and_keeps_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.bin");
        std::fs::write(&path, b"old").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, Permissions::from_mode(0o640)).unwrap();
        }
        let mut f = OutputFile::create(&path).unwrap();
        f.write_all(b"new").unwrap();
        f.commit().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o640);
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_link_is_followed_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.bin");
        let link = dir.path().join("link.bin");
        std::fs::write(&real, b"old").unwrap();
        std::os::unix::fs::symlink("real.bin", &link).unwrap();
        write_whole(&link, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&real).unwrap(), b"new");
    }

    #[cfg(unix)]
    #[test]
    fn same_file_by_any_name_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.pcapng");
        std::fs::write(&input, b"capture").unwrap();
        let hard = dir.path().join("hard.pcapng");
        std::fs::hard_link(&input, &hard).unwrap();
        let soft = dir.path().join("soft.pcapng");
        std::os::unix::fs::symlink(&input, &soft).unwrap();
        let dotted = dir.path().join(".").join("in.pcapng");
        for out in [&input, &hard, &soft, &dotted] {
            assert!(refuse_inputs("-w", out, &[&input]).is_err(), "{out:?}");
        }
        let other = dir.path().join("other.pcapng");
        assert!(refuse_inputs("-w", &other, &[&input]).is_ok());
        std::fs::write(&other, b"x").unwrap();
        assert!(refuse_inputs("-w", &other, &[&input]).is_ok());
        assert!(refuse_inputs("-w", Path::new("-"), &[&input]).is_ok());
    }

    #[cfg(unix)]
    #[test]
    fn a_device_is_written_in_place() {
        use std::os::unix::fs::FileTypeExt;
        write_whole(Path::new("/dev/null"), b"anything").unwrap();
        let kind = std::fs::metadata("/dev/null").unwrap().file_type();
        assert!(kind.is_char_device(), "/dev/null was replaced by a file");
    }
}
