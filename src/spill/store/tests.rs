use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Barrier};

use bytes::Bytes;

use super::stale::{self, Liveness, ProcessTag};
use super::*;

/// A fresh folder under the temp dir, removed on drop.
struct TempBase(PathBuf);

impl TempBase {
    fn new(label: &str) -> Self {
        static N: AtomicU32 = AtomicU32::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir()
            .join(format!("ringmcp-spill-test-{}-{n}-{label}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        TempBase(path)
    }
}

impl Drop for TempBase {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn open(base: &Path, quota: u64) -> Arc<SpillStore> {
    SpillStore::open(StoreConfig::new().base_dir(base).quota_bytes(quota)).unwrap()
}

/// Bytes that differ at every offset for a long while, so misplaced reads show.
fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8 ^ (i / 251) as u8).collect()
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

fn spill(store: &Arc<SpillStore>, data: &[u8]) -> SpillFile {
    let mut w = store.create("t").unwrap();
    w.write_all(data).unwrap();
    w.finish().unwrap()
}

#[test]
fn write_finish_read_round_trips() {
    let base = TempBase::new("roundtrip");
    let store = open(&base.0, DEFAULT_QUOTA_BYTES);
    let data = pattern(1 << 20 | 4093);
    let mut w = store.create("tools/call result").unwrap();
    for chunk in data.chunks(65_537) {
        w.write_all(chunk).unwrap();
    }
    w.write_all(&[]).unwrap();
    assert_eq!(w.written(), data.len() as u64);
    let f = w.finish().unwrap();
    assert_eq!(f.len(), data.len() as u64);
    assert_eq!(store.used_bytes(), data.len() as u64);
    let tag = ProcessTag::current().unwrap();
    let prefix = format!("ringmcp-spill://{}-{}/", tag.pid, tag.start);
    let id = f.uri().strip_prefix(&prefix).unwrap();
    assert!(!id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()), "{}", f.uri());
    assert_eq!(f.clone().uri(), f.uri());
    assert_eq!(f.path().parent(), Some(store.dir()));

    // read_at at odd offsets, across the end, at and past it.
    let len = data.len() as u64;
    for (offset, size) in
        [(0, 10), (1, 4096), (4095, 3), (65_537, 70_000), (len - 1, 8), (len - 5, 5)]
    {
        let mut buf = vec![0xAA; size];
        let n = f.read_at(offset, &mut buf).unwrap();
        let end = (offset as usize + size).min(data.len());
        assert_eq!(n, end - offset as usize, "offset {offset}");
        assert_eq!(&buf[..n], &data[offset as usize..end]);
    }
    let mut buf = [0; 16];
    assert_eq!(f.read_at(len, &mut buf).unwrap(), 0);
    assert_eq!(f.read_at(len + 1000, &mut buf).unwrap(), 0);
    assert_eq!(f.read_at(u64::MAX, &mut buf).unwrap(), 0);
    assert_eq!(f.read_at(3, &mut []).unwrap(), 0);

    // read_range is bounded by len and by the end.
    assert_eq!(f.read_range(7, 1000).unwrap(), &data[7..1007]);
    assert_eq!(f.read_range(len - 3, 1 << 30).unwrap(), &data[data.len() - 3..]);
    assert!(f.read_range(len, 10).unwrap().is_empty());
    assert!(f.read_range(len + 1, usize::MAX).unwrap().is_empty());
    let mut chunked = Vec::new();
    let mut offset = 0;
    loop {
        let chunk = f.read_range(offset, 300_007).unwrap();
        if chunk.is_empty() {
            break;
        }
        offset += chunk.len() as u64;
        chunked.extend(chunk);
    }
    assert_eq!(chunked, data);

    // reader: Read + Seek, independent cursors.
    let mut r = f.reader();
    let mut all = Vec::new();
    r.read_to_end(&mut all).unwrap();
    assert_eq!(all, data);
    let mut other = f.reader();
    let mut five = [0; 5];
    other.read_exact(&mut five).unwrap();
    assert_eq!(five, data[..5]);
    assert_eq!(r.seek(SeekFrom::Start(12_345)).unwrap(), 12_345);
    r.read_exact(&mut five).unwrap();
    assert_eq!(five, data[12_345..12_350]);
    assert_eq!(r.seek(SeekFrom::Current(-10)).unwrap(), 12_340);
    r.read_exact(&mut five).unwrap();
    assert_eq!(five, data[12_340..12_345]);
    assert_eq!(r.seek(SeekFrom::End(-2)).unwrap(), len - 2);
    assert_eq!(r.read(&mut five).unwrap(), 2);
    assert_eq!(five[..2], data[data.len() - 2..]);
    assert_eq!(r.seek(SeekFrom::End(10)).unwrap(), len + 10);
    assert_eq!(r.read(&mut five).unwrap(), 0);
    let err = r.seek(SeekFrom::Current(-(len as i64) - 11)).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    assert_eq!(r.stream_position().unwrap(), len + 10, "a failed seek leaves the cursor");

    // Reads from many threads at once.
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let f = f.clone();
            let data = &data;
            s.spawn(move || {
                for i in 0..200u64 {
                    let offset = (t * 7919 + i * 104_729) % len;
                    let got = f.read_range(offset, 513).unwrap();
                    let end = (offset as usize + 513).min(data.len());
                    assert_eq!(got, &data[offset as usize..end]);
                }
            });
        }
    });

    let empty = store.create("").unwrap().finish().unwrap();
    assert!(empty.is_empty());
    assert!(empty.read_range(0, 10).unwrap().is_empty());
    assert_ne!(empty.uri(), f.uri());
}

#[test]
fn lookup_finds_live_files_only() {
    let base = TempBase::new("lookup");
    let store = open(&base.0, DEFAULT_QUOTA_BYTES);
    let f = spill(&store, b"hello");
    let uri = f.uri().to_owned();
    let again = store.lookup(&uri).unwrap();
    assert_eq!(again.read_range(0, 100).unwrap(), b"hello");
    drop(f);
    assert_eq!(store.resolve(&uri).unwrap().len(), 5, "a clone from lookup keeps it alive");
    drop(again);
    assert!(store.lookup(&uri).is_none());
    assert!(matches!(store.resolve(&uri), Err(SpillError::NotFound(u)) if u == uri));

    let f = spill(&store, b"x");
    let (prefix, id) = f.uri().rsplit_once('/').unwrap();
    for bad in [
        format!("{prefix}/+{id}"),
        format!("{prefix}/0{id}"),
        format!("{prefix}/{id}/"),
        format!("ringmcp-spill://1-2/{id}"),
        format!("other://{}", &f.uri()["ringmcp-spill://".len()..]),
        "ringmcp-spill://".to_owned(),
        String::new(),
    ] {
        assert!(store.lookup(&bad).is_none(), "{bad}");
    }
    // A writer's id is not looked up before it is finished.
    let w = store.create("pending").unwrap();
    let next = format!("{prefix}/{}", w.entry.id);
    assert!(store.lookup(&next).is_none());
}

#[test]
fn quota_race_for_the_last_bytes_has_one_winner() {
    let base = TempBase::new("quota");
    let store = open(&base.0, 1000);
    for _ in 0..50 {
        let barrier = Arc::new(Barrier::new(2));
        let racers: Vec<_> = (0..2)
            .map(|_| {
                let (store, barrier) = (Arc::clone(&store), Arc::clone(&barrier));
                std::thread::spawn(move || {
                    let mut w = store.create("race").unwrap();
                    barrier.wait();
                    let result = w.write_all(&[7; 600]);
                    (w, result)
                })
            })
            .collect();
        let mut results: Vec<_> = racers.into_iter().map(|t| t.join().unwrap()).collect();
        let losers: Vec<_> = results.iter().filter(|(_, r)| r.is_err()).collect();
        assert_eq!(losers.len(), 1);
        let (loser, err) = losers[0];
        assert!(
            matches!(err, Err(SpillError::QuotaExceeded { quota: 1000, needed: 600, .. })),
            "{err:?}"
        );
        assert_eq!(loser.written(), 0);
        assert_eq!(std::fs::metadata(loser.path()).unwrap().len(), 0, "nothing was written");
        assert_eq!(store.used_bytes(), 600);

        // The loser can go on with what is left, and finish.
        let i = results.iter().position(|(_, r)| r.is_err()).unwrap();
        let (mut loser, _) = results.swap_remove(i);
        loser.write_all(&[1; 400]).unwrap();
        assert_eq!(store.used_bytes(), 1000);
        assert!(matches!(loser.write_all(&[1]), Err(SpillError::QuotaExceeded { needed: 1, .. })));
        let f = loser.finish().unwrap();
        drop(results);
        assert_eq!(store.used_bytes(), 400);
        drop(f);
        assert_eq!(store.used_bytes(), 0);
    }
    assert!(names(store.dir()).is_empty());
}

#[test]
fn files_go_with_their_last_handle() {
    let base = TempBase::new("drop");
    let store = open(&base.0, DEFAULT_QUOTA_BYTES);

    let f = spill(&store, &pattern(10_000));
    let path = f.path().to_owned();
    let (clone, reader) = (f.clone(), f.reader());
    drop(f);
    drop(clone);
    assert!(path.exists(), "the reader still holds it");
    assert_eq!(store.used_bytes(), 10_000);
    drop(reader);
    assert!(!path.exists());
    assert_eq!(store.used_bytes(), 0);

    // An unfinished writer leaves nothing behind.
    let mut w = store.create("../../escape/attempt").unwrap();
    w.write_all(&[1; 5000]).unwrap();
    let path = w.path().to_owned();
    assert_eq!(path.parent(), Some(store.dir()));
    assert!(path.file_name().unwrap().to_str().unwrap().ends_with("-.._.._escape_attempt"));
    assert!(path.exists());
    assert_eq!(store.used_bytes(), 5000);
    drop(w);
    assert!(!path.exists());
    assert_eq!(store.used_bytes(), 0);
    assert!(names(store.dir()).is_empty());
}

#[test]
fn store_drop_removes_its_folder_only() {
    let base = TempBase::new("storedrop");
    std::fs::create_dir(base.0.join("unrelated")).unwrap();
    std::fs::write(base.0.join("unrelated/file"), b"keep").unwrap();
    std::fs::write(base.0.join("spill-notes.txt"), b"keep").unwrap();
    let store = open(&base.0, DEFAULT_QUOTA_BYTES);
    let dir = store.dir().to_owned();
    let tag = ProcessTag::current().unwrap();
    assert_eq!(dir, base.0.join(format!("spill-{}-{}", tag.pid, tag.start)));
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);

    // A second store of this process on the same base is refused.
    assert!(matches!(
        SpillStore::open(StoreConfig::new().base_dir(&base.0)),
        Err(SpillError::AlreadyOpen { path }) if path == dir
    ));

    let f = spill(&store, b"payload");
    assert_eq!(std::fs::metadata(f.path()).unwrap().permissions().mode() & 0o777, 0o600);
    // Something left in the folder by hand goes with it.
    std::fs::write(dir.join("leftover"), b"x").unwrap();
    drop(store);
    assert!(dir.exists(), "a live file keeps the store");
    assert_eq!(f.read_range(0, 100).unwrap(), b"payload");
    drop(f);
    assert!(!dir.exists());
    assert_eq!(names(&base.0), ["spill-notes.txt", "unrelated"]);
    assert_eq!(std::fs::read(base.0.join("unrelated/file")).unwrap(), b"keep");

    // The folder can be opened again; old URIs do not resolve to new payloads.
    let store = open(&base.0, DEFAULT_QUOTA_BYTES);
    let f = spill(&store, b"new");
    let (prefix, id) = f.uri().rsplit_once('/').unwrap();
    let older = format!("{prefix}/{}", id.parse::<u64>().unwrap() - 1);
    assert!(store.lookup(&older).is_none());
}

#[test]
fn open_removes_exactly_the_stale_folders() {
    let base = TempBase::new("stale");
    let own = ProcessTag::current().unwrap();

    let mut dead = Command::new("true").spawn().unwrap();
    let dead_pid = dead.id();
    dead.wait().unwrap();
    let live = Command::new("sleep").arg("30").spawn().unwrap();
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let live_pid = live.id();
    let live_start = loop {
        // `sleep` has been forked but may not show up at once; its start time never changes.
        match stale::proc_liveness(live_pid) {
            Liveness::Alive { start } => break start,
            _ => std::thread::yield_now(),
        }
    };
    let _live = Kill(live);

    let stale_dead = format!("spill-{dead_pid}-12345");
    let stale_reused = format!("spill-{}-{}", own.pid, own.start + 1);
    let kept_live = format!("spill-{live_pid}-{live_start}");
    for dir in [&stale_dead, &stale_reused, &kept_live, "unrelated", "spill-x-1", "spill-1-2-3"] {
        std::fs::create_dir(base.0.join(dir)).unwrap();
        std::fs::write(base.0.join(dir).join("data"), b"d").unwrap();
    }
    // A nested folder in a stale one goes too.
    std::fs::create_dir(base.0.join(&stale_dead).join("sub")).unwrap();
    // Not folders: a file and a symlink (to a folder outside) with stale-looking names.
    let outside = TempBase::new("stale-outside");
    std::fs::write(outside.0.join("precious"), b"p").unwrap();
    std::fs::write(base.0.join(format!("spill-{dead_pid}-1")), b"file").unwrap();
    std::os::unix::fs::symlink(&outside.0, base.0.join(format!("spill-{dead_pid}-2"))).unwrap();
    // A symlink inside a stale folder is removed, not followed.
    std::os::unix::fs::symlink(&outside.0, base.0.join(&stale_dead).join("link")).unwrap();

    let store = open(&base.0, DEFAULT_QUOTA_BYTES);
    let mut expected = vec![
        kept_live,
        format!("spill-{dead_pid}-1"),
        format!("spill-{dead_pid}-2"),
        own.folder_name(),
        "spill-1-2-3".to_owned(),
        "spill-x-1".to_owned(),
        "unrelated".to_owned(),
    ];
    expected.sort();
    assert_eq!(names(&base.0), expected);
    assert_eq!(std::fs::read(outside.0.join("precious")).unwrap(), b"p");
    assert_eq!(std::fs::read(base.0.join("unrelated/data")).unwrap(), b"d");
    drop(store);
}

#[test]
fn stale_cleanup_trusts_only_what_proc_says() {
    let base = TempBase::new("liveness");
    let own = ProcessTag { pid: 1, start: 1 };
    for name in ["spill-10-5", "spill-11-5", "spill-12-5", "spill-13-5", "spill-1-1"] {
        std::fs::create_dir(base.0.join(name)).unwrap();
    }
    let removed = stale::remove_stale(&base.0, own, |pid| match pid {
        10 => Liveness::Gone,
        11 => Liveness::Alive { start: 6 },
        12 => Liveness::Alive { start: 5 },
        1 => Liveness::Gone, // never asked about: it is `own`
        _ => Liveness::Unknown,
    });
    assert_eq!(removed, 2);
    assert_eq!(names(&base.0), ["spill-1-1", "spill-12-5", "spill-13-5"]);
    // A missing base is logged, not fatal.
    assert_eq!(stale::remove_stale(&base.0.join("missing"), own, |_| Liveness::Gone), 0);
}

#[test]
fn default_base_prefers_an_absolute_xdg_runtime_dir() {
    use std::ffi::OsString;
    assert_eq!(
        xdg_base(Some(OsString::from("/run/user/1000"))),
        Some(PathBuf::from("/run/user/1000/ringmcp"))
    );
    assert_eq!(xdg_base(Some(OsString::from("relative/dir"))), None);
    assert_eq!(xdg_base(Some(OsString::new())), None);
    assert_eq!(xdg_base(None), None);
    assert_eq!(StoreConfig::default().quota_bytes, 8 << 30);
    assert_eq!(StoreConfig::default().base_dir, None);
}

#[test]
fn names_are_sanitised() {
    assert_eq!(file_name(7, ""), "7");
    assert_eq!(file_name(7, "fs/read_file"), "7-fs_read_file");
    assert_eq!(file_name(7, "../x"), "7-.._x");
    assert_eq!(file_name(7, "é\0\n"), "7-___");
    assert_eq!(file_name(7, &"a".repeat(100)), format!("7-{}", "a".repeat(MAX_HINT_LEN)));
}

/// Unmounts on drop, so a failing test does not leave the mount behind.
struct Mount(PathBuf);

impl Drop for Mount {
    fn drop(&mut self) {
        let ok = Command::new("umount").arg(&self.0).status().is_ok_and(|s| s.success());
        if !ok {
            let _ = Command::new("umount").arg("-l").arg(&self.0).status();
        }
    }
}

#[test]
fn a_full_disk_is_disk_full_and_leaves_nothing() {
    let base = TempBase::new("tmpfs");
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs"])
        .arg(&base.0)
        .output();
    match mounted {
        Ok(out) if out.status.success() => {}
        Ok(out) => {
            crate::testkit::skip(
                crate::testkit::SkipKind::Machine,
                format!(
                    "mounting a tmpfs failed (not root?): {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                ),
            );
            return;
        }
        Err(e) => {
            crate::testkit::skip(
                crate::testkit::SkipKind::Machine,
                format!("cannot run mount: {e}"),
            );
            return;
        }
    }
    // Declared after `base` and before `store`: unmounted after the store is gone, before
    // the mount point is removed.
    let _mount = Mount(base.0.clone());
    let store = open(&base.0, DEFAULT_QUOTA_BYTES);

    let mut w = store.create("big").unwrap();
    let path = w.path().to_owned();
    let chunk = pattern(64 * 1024);
    let err = (0..64).find_map(|_| w.write_all(&chunk).err()).expect("256 KiB tmpfs never filled");
    assert!(matches!(&err, SpillError::DiskFull { path: p, .. } if *p == path), "{err:?}");
    assert!(err.to_string().contains(&*path.to_string_lossy()), "{err}");
    assert!(w.written() < 256 * 1024 + 64 * 1024);
    assert_eq!(store.used_bytes(), w.written(), "only what landed stays reserved");
    assert!(path.exists());
    assert!(matches!(w.write_all(b"more"), Err(SpillError::WriterFailed { .. })));
    assert!(matches!(w.finish(), Err(SpillError::WriterFailed { .. })));
    assert!(!path.exists(), "the partial file is gone");
    assert_eq!(store.used_bytes(), 0);

    // The space is back.
    let f = spill(&store, &chunk);
    assert_eq!(f.read_range(0, chunk.len()).unwrap(), chunk);
    drop(f);

    // The same through dropping an unfinished writer.
    let mut w = store.create("big").unwrap();
    let path = w.path().to_owned();
    assert!(matches!(
        (0..64).find_map(|_| w.write_all(&chunk).err()),
        Some(SpillError::DiskFull { .. })
    ));
    drop(w);
    assert!(!path.exists());
    assert_eq!(store.used_bytes(), 0);
    assert!(names(store.dir()).is_empty());
}

#[test]
fn stream_yields_the_range_in_chunks_and_stops_when_dropped() {
    use futures::StreamExt;
    let base = TempBase::new("stream");
    let store = open(&base.0, DEFAULT_QUOTA_BYTES);
    let data = pattern(3 << 20 | 17);
    let file = spill(&store, &data);

    let chunks: Vec<Bytes> =
        futures::executor::block_on(file.stream().map(Result::unwrap).collect());
    assert_eq!(chunks.iter().map(Bytes::len).collect::<Vec<_>>(), [1 << 20, 1 << 20, 1 << 20, 17]);
    assert_eq!(chunks.concat(), data);

    // A range: chunk sizes that do not divide it, a length running past the end, past the end.
    for (offset, len, chunk) in [(5, 1000, 7), (data.len() as u64 - 10, 100, 3), (1 << 40, 5, 4)] {
        let got: Vec<Bytes> = futures::executor::block_on(
            file.stream_range(offset, len, chunk).map(Result::unwrap).collect(),
        );
        assert!(got.iter().all(|c| c.len() <= chunk));
        let start = (offset as usize).min(data.len());
        let end = (offset.saturating_add(len) as usize).min(data.len());
        assert_eq!(got.concat(), &data[start..end], "{offset} {len} {chunk}");
    }

    // Dropping the stream early ends its thread, which lets go of the payload: the file goes
    // with the last handle.
    let path = file.path().to_owned();
    let mut stream = file.stream_range(0, data.len() as u64, 1);
    assert_eq!(futures::executor::block_on(stream.next()).unwrap().unwrap().len(), 1);
    drop(file);
    drop(stream);
    let gone = (0..500).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(10));
        !path.exists()
    });
    assert!(gone, "the reader thread still holds {}", path.display());
}

/// On the store's file system a payload is saved as a link (nothing copied), across file
/// systems as a copy; either way the saved file replaces what was there and outlives the store.
#[test]
fn save_as_links_on_the_same_file_system_and_copies_across() {
    let base = TempBase::new("save");
    let store = open(&base.0, DEFAULT_QUOTA_BYTES);
    let data = pattern(300_000);
    let f = spill(&store, &data);

    let dest = base.0.join("saved");
    std::fs::write(&dest, b"old contents").unwrap();
    assert_eq!(f.save_as(&dest).unwrap(), Saved::Linked);
    use std::os::unix::fs::MetadataExt;
    assert_eq!(std::fs::metadata(&dest).unwrap().ino(), std::fs::metadata(f.path()).unwrap().ino());

    // /dev/shm is a tmpfs on every Linux this runs on; /tmp is not one here (and when it is,
    // the copy path is still taken through a folder on another mount, or the check says so).
    let shm = Path::new("/dev/shm");
    let other = shm.is_dir().then(|| shm.join(format!("ringmcp-save-test-{}", std::process::id())));
    let copied = other.as_ref().map(|o| (o.clone(), f.save_as(o).unwrap()));

    let spill_path = f.path().to_owned();
    drop(f);
    drop(store);
    assert!(!spill_path.exists(), "the store's own name is gone");
    assert_eq!(std::fs::read(&dest).unwrap(), data, "the saved link outlives the store");
    if let Some((o, how)) = copied {
        let same_fs =
            std::fs::metadata(&o).unwrap().dev() == std::fs::metadata(&dest).unwrap().dev();
        assert_eq!(how, if same_fs { Saved::Linked } else { Saved::Copied });
        assert_eq!(std::fs::read(&o).unwrap(), data);
        std::fs::remove_file(&o).unwrap();
    }

    // A destination that cannot be made is an error naming it.
    let store = open(&base.0, DEFAULT_QUOTA_BYTES);
    let f = spill(&store, b"x");
    let bad = base.0.join("no-such-folder").join("out");
    let err = f.save_as(&bad).unwrap_err();
    assert!(matches!(&err, SpillError::Save { path, .. } if *path == bad), "{err:?}");
}
