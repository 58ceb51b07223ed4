//! The attempts of the probe that take more than one call: copying and running binaries,
//! memfds, fexecve, setuid, mountinfo, fd and process piles, filling files. Each returns what
//! happened as the probe's outcome string.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use super::{errno_name, io_outcome, outcome};

/// Copies `/usr/bin/true` into `dir` as an executable file; its path.
pub(super) fn copy_true(dir: &str) -> Result<String, String> {
    let copy = format!("{dir}/true-copy-{}", std::process::id());
    std::fs::copy("/usr/bin/true", &copy).map_err(|e| format!("copy failed: {e}"))?;
    let _ = std::fs::set_permissions(&copy, std::os::unix::fs::PermissionsExt::from_mode(0o755));
    Ok(copy)
}

pub(super) fn exec_copy(dir: &str) -> String {
    let copy = match copy_true(dir) {
        Ok(c) => c,
        Err(e) => return e,
    };
    let got = io_outcome(std::process::Command::new(&copy).status());
    let _ = std::fs::remove_file(&copy);
    got
}

/// The dynamic loader run on a copied binary: it maps the file itself (`mmap(PROT_EXEC)`),
/// so only a noexec mount stops it, not the exec permission checks.
pub(super) fn ld_so_copy(dir: &str) -> String {
    let Some(ld) = ["/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
    else {
        return "refused".into(); // no dynamic loader to abuse
    };
    let copy = match copy_true(dir) {
        Ok(c) => c,
        Err(e) => return e,
    };
    let status =
        std::process::Command::new(ld).arg(&copy).stderr(std::process::Stdio::null()).status();
    let _ = std::fs::remove_file(&copy);
    match status {
        Ok(st) if st.success() => "ran".into(),
        Ok(_) => "refused".into(),
        Err(e) => io_outcome::<()>(Err(e)),
    }
}

/// `memfd_create` with `flags`; an fd we got would be writable and, with `ld.so
/// /proc/self/fd/N`, executable whatever its seals.
pub(super) fn memfd_create(flags: libc::c_long) -> String {
    // SAFETY: a valid C string and integer flags; a returned fd is closed at once.
    let fd = unsafe { libc::syscall(libc::SYS_memfd_create, c"probe".as_ptr(), flags) };
    if fd >= 0 {
        // SAFETY: our fd.
        unsafe { libc::close(fd as i32) };
    }
    outcome(fd)
}

/// `fexecve`: an `O_PATH` fd of a binary the sandbox may run, executed through
/// `execveat(AT_EMPTY_PATH)` in a child. "ok" means it ran.
pub(super) fn execveat_empty_path() -> String {
    // SAFETY: a valid C string; the fd is closed below.
    let fd = unsafe { libc::open(c"/usr/bin/true".as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    if fd < 0 {
        return outcome(-1);
    }
    let (r, w) = match pipe() {
        Ok(p) => p,
        Err(e) => return io_outcome::<()>(Err(e)),
    };
    // SAFETY: the child only makes raw syscalls and _exits.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let argv = [c"true".as_ptr(), std::ptr::null()];
        let envp = [std::ptr::null::<libc::c_char>()];
        // SAFETY: valid NULL-terminated arrays and an empty path with AT_EMPTY_PATH.
        unsafe {
            libc::syscall(
                libc::SYS_execveat,
                fd,
                c"".as_ptr(),
                argv.as_ptr(),
                envp.as_ptr(),
                libc::AT_EMPTY_PATH,
            )
        };
        let e = io::Error::last_os_error().raw_os_error().unwrap_or(0);
        // SAFETY: a valid 4-byte buffer and the write end of our pipe.
        unsafe { libc::write(w.as_raw_fd(), (&raw const e).cast(), 4) };
        // SAFETY: _exit takes an int; nothing is flushed in a forked child.
        unsafe { libc::_exit(126) }
    }
    // SAFETY: our fd.
    unsafe { libc::close(fd) };
    drop(w);
    let mut errno = [0u8; 4];
    let mut file = std::fs::File::from(r);
    let got = match io::Read::read(&mut file, &mut errno) {
        Ok(4) => errno_name(i32::from_ne_bytes(errno)),
        _ => "ok".into(), // EOF: the exec succeeded (the pipe is close-on-exec)
    };
    let mut status = 0;
    // SAFETY: our child; a valid out-pointer.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    got
}

pub(super) fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: a valid out-array of two ints.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fresh fds we own.
    let r = unsafe { OwnedFd::from_raw_fd(fds[0]) };
    // SAFETY: as above.
    Ok((r, unsafe { OwnedFd::from_raw_fd(fds[1]) }))
}

/// Runs a setuid binary visible in the sandbox with `LD_SHOW_AUXV=1`: the loader prints
/// the auxiliary vector only for an exec that gained no privilege (`AT_SECURE` 0), so the
/// output tells whether the set-user-id bit took effect.
pub(super) fn setuid_exec() -> String {
    use std::os::unix::fs::MetadataExt;
    let found = ["/usr/bin", "/usr/sbin", "/bin", "/sbin"]
        .iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flat_map(|d| d.flatten())
        .map(|e| e.path())
        // Any owner: the host's root is unmapped in the sandbox and shows as the overflow id.
        .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.mode() & 0o4000 != 0));
    let Some(bin) = found else {
        return "no setuid binary".into();
    };
    // SAFETY: geteuid takes no arguments.
    let euid = unsafe { libc::geteuid() };
    let out = std::process::Command::new(&bin)
        .arg("--version")
        .env("LD_SHOW_AUXV", "1")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output();
    let Ok(out) = out else {
        return format!("{} could not run", bin.display());
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let field =
        |name: &str| text.lines().find_map(|l| l.strip_prefix(name)).map(|v| v.trim().to_owned());
    match (field("AT_SECURE:"), field("AT_EUID:")) {
        (Some(secure), Some(e)) if secure == "0" && e == euid.to_string() => "unprivileged".into(),
        (Some(secure), e) => format!("{}: AT_SECURE {secure}, euid {e:?}", bin.display()),
        (None, _) => format!("{}: ran as a secure (set-user-id) exec", bin.display()),
    }
}

/// Lines of `/proc/self/mountinfo` whose source path inside its filesystem differs from
/// where it is mounted: a bind of a host folder at another place would name the host path.
/// (Device names and filesystem options of the binds are a documented residual.)
pub(super) fn mountinfo_host_paths() -> String {
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let leaks: Vec<String> = info
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let (root, point) = (*f.get(3)?, *f.get(4)?);
            let own = root == "/"
                || root == point
                || point.strip_prefix("/dev").is_some_and(|rest| rest == root)
                || point.strip_prefix("/proc").is_some_and(|rest| rest == root);
            (!own).then(|| format!("{root} at {point}"))
        })
        .collect();
    if info.is_empty() {
        "unreadable".into()
    } else if leaks.is_empty() {
        "none".into()
    } else {
        leaks.join(", ")
    }
}

/// Raises the soft `RLIMIT_NOFILE` to the hard one (as Node does at start) and opens fds
/// until refused: more than `max` open is a failure.
pub(super) fn fd_ceiling(max: u64) -> String {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: a valid out-pointer.
    unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
    let raised = libc::rlimit { rlim_cur: lim.rlim_max, rlim_max: lim.rlim_max };
    // SAFETY: a valid rlimit (soft up to hard is always allowed).
    unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) };
    let mut files = Vec::new();
    let got = loop {
        match std::fs::File::open("/dev/null") {
            Ok(_) if files.len() as u64 > max => break format!("{} fds open", files.len() + 3),
            Ok(f) => files.push(f),
            Err(e) => break io_outcome::<()>(Err(e)),
        }
    };
    drop(files);
    got
}

/// Double-forks 20 short-lived grandchildren (orphans, re-parented to the sandbox's init)
/// and waits up to 5 s for every one of them to be reaped.
pub(super) fn orphans() -> String {
    let mut pids = Vec::new();
    for _ in 0..20 {
        let (r, w) = match pipe() {
            Ok(p) => p,
            Err(e) => return io_outcome::<()>(Err(e)),
        };
        // SAFETY: the child only forks, writes and _exits.
        let child = unsafe { libc::fork() };
        if child == 0 {
            // SAFETY: as above; the grandchild exits after a short sleep.
            let grandchild = unsafe { libc::fork() };
            if grandchild == 0 {
                // SAFETY: usleep takes an integer.
                unsafe { libc::usleep(50_000) };
                // SAFETY: _exit takes an int.
                unsafe { libc::_exit(0) }
            }
            // SAFETY: a valid 4-byte buffer and the write end of our pipe.
            unsafe { libc::write(w.as_raw_fd(), (&raw const grandchild).cast(), 4) };
            // SAFETY: _exit takes an int (the grandchild becomes an orphan).
            unsafe { libc::_exit(0) }
        }
        drop(w);
        let mut buf = [0u8; 4];
        if io::Read::read(&mut std::fs::File::from(r), &mut buf).is_ok_and(|n| n == 4) {
            pids.push(i32::from_ne_bytes(buf));
        }
        let mut status = 0;
        // SAFETY: our child; a valid out-pointer.
        unsafe { libc::waitpid(child, &mut status, 0) };
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let left = pids.iter().filter(|p| std::path::Path::new(&format!("/proc/{p}")).exists());
        let n = left.count();
        if n == 0 {
            return "reaped".into();
        }
        if std::time::Instant::now() > deadline {
            return format!("{n} of {} orphans still in /proc", pids.len());
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

pub(super) fn fill(path: &str, max: u64) -> String {
    use std::io::Write;
    let mut f = match std::fs::File::create(path) {
        Ok(f) => f,
        Err(e) => return io_outcome::<()>(Err(e)),
    };
    let buf = vec![0u8; 1 << 20];
    let mut written = 0u64;
    let got = loop {
        if written >= max {
            break "ok".into();
        }
        match f.write_all(&buf) {
            Ok(()) => written += buf.len() as u64,
            Err(e) => break io_outcome::<()>(Err(e)),
        }
    };
    drop(f);
    let _ = std::fs::remove_file(path);
    got
}

pub(super) fn fsize() -> String {
    // SAFETY: ignoring SIGXFSZ so the write fails with EFBIG instead of killing us.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    let mut old = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: valid out-pointer.
    unsafe { libc::getrlimit(libc::RLIMIT_FSIZE, &mut old) };
    let small = libc::rlimit { rlim_cur: 4096, rlim_max: old.rlim_max };
    // SAFETY: a valid rlimit.
    unsafe { libc::setrlimit(libc::RLIMIT_FSIZE, &small) };
    let got = fill("/tmp/fsize", 1 << 20);
    // SAFETY: a valid rlimit.
    unsafe { libc::setrlimit(libc::RLIMIT_FSIZE, &old) };
    got
}

/// Lowers the hard `RLIMIT_NOFILE` by one (always allowed), then asks for the old value back:
/// only `CAP_SYS_RESOURCE` may raise a hard limit, and asking for the old value (rather than
/// one more) stays within `fs.nr_open`, so outside a sandbox root gets "ok".
pub(super) fn raise_nofile() -> String {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: valid out-pointer.
    unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
    let top = lim.rlim_max;
    let lower = libc::rlimit { rlim_cur: lim.rlim_cur.min(top - 1), rlim_max: top - 1 };
    // SAFETY: a valid rlimit (lowering is always allowed).
    unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lower) };
    let back = libc::rlimit { rlim_cur: lower.rlim_cur, rlim_max: top };
    // SAFETY: a valid rlimit.
    outcome(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &back) }.into())
}

pub(super) fn nofile() -> String {
    let small = libc::rlimit { rlim_cur: 64, rlim_max: 64 };
    // SAFETY: a valid rlimit (lowering is always allowed).
    unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &small) };
    let mut files = Vec::new();
    let got = loop {
        match std::fs::File::open("/dev/null") {
            Ok(f) if files.len() < 100 => files.push(f),
            Ok(_) => break "ok".into(),
            Err(e) => break io_outcome::<()>(Err(e)),
        }
    };
    drop(files);
    got
}

pub(super) fn connect_abstract(name: &str) -> String {
    use std::os::linux::net::SocketAddrExt;
    match std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()) {
        Ok(addr) => io_outcome(std::os::unix::net::UnixStream::connect_addr(&addr)),
        Err(e) => e.to_string(),
    }
}
