//! The sandbox's root filesystem, built by its init: a tmpfs with `/dev`, `/tmp`,
//! `/dev/shm`, a fresh `/proc` and the plan's binds, pivoted into and made read-only
//! (docs/sandbox.md, "Layers", 4); and the mount primitives it uses.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};

use super::super::plan::{MountStep, Plan};
use super::capture::loopback_up;
use super::{Context, Step, cstr};
use crate::syscall::cvt;

/// Builds the new root on a tmpfs over `/tmp` (this mount namespace's only), pivots into it
/// and makes it read-only (docs/sandbox.md, "Layers", 4).
pub(super) fn build_root(plan: &Plan, sources: &[Option<OwnedFd>]) -> Step<()> {
    mount(None, "/", None, libc::MS_REC | libc::MS_PRIVATE, None)
        .step(|| "making / private".into())?;
    let root = Path::new("/tmp");
    let opts = format!("size={},mode=0755", plan.root_size);
    mount(Some("tmpfs"), root, Some("tmpfs"), libc::MS_NOSUID | libc::MS_NODEV, Some(&opts))
        .step(|| "mounting the root tmpfs".into())?;
    mount_dev(root, plan)?;
    mount_scratch_and_proc(root, plan)?;
    // The binds last, so that one under /tmp (a workspace there, say) lands on the sandbox's
    // /tmp rather than being hidden by it.
    for (step, source) in plan.mounts.iter().zip(sources) {
        mount_step(root, step, source.as_ref())?;
    }
    let host = CString::new(plan.hostname.as_str()).unwrap_or_default();
    // SAFETY: a valid buffer and its length.
    cvt(unsafe { libc::sethostname(host.as_ptr(), plan.hostname.len()) })
        .step(|| "sethostname".into())?;
    if plan.network.is_some() {
        loopback_up().step(|| "bringing lo up".into())?;
    }
    pivot_into(root)
}

/// /dev: a tmpfs with the harmless nodes bound from the host, the fd links and /dev/shm.
fn mount_dev(root: &Path, plan: &Plan) -> Step<()> {
    let dev = root.join("dev");
    std::fs::create_dir_all(&dev).step(|| "mkdir /dev".into())?;
    mount(
        Some("tmpfs"),
        &dev,
        Some("tmpfs"),
        libc::MS_NOSUID | libc::MS_NOEXEC,
        Some("size=64k,mode=0755"),
    )
    .step(|| "mounting /dev".into())?;
    for node in ["null", "zero", "full", "random", "urandom"] {
        let target = dev.join(node);
        std::fs::write(&target, b"").step(|| format!("creating /dev/{node}"))?;
        mount(Some(&format!("/dev/{node}")), &target, None, libc::MS_BIND, None)
            .step(|| format!("binding /dev/{node}"))?;
    }
    for (name, target) in [
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ] {
        std::os::unix::fs::symlink(target, dev.join(name))
            .step(|| format!("symlink /dev/{name}"))?;
    }
    let shm = dev.join("shm");
    std::fs::create_dir_all(&shm).step(|| "mkdir /dev/shm".into())?;
    let tmp_opts = format!("size={},mode=1777", plan.tmp_size);
    mount(Some("tmpfs"), &shm, Some("tmpfs"), SCRATCH, Some(&tmp_opts))
        .step(|| "mounting /dev/shm".into())
}

/// Flags of the scratch file systems (/tmp, /dev/shm, /proc).
const SCRATCH: libc::c_ulong = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;

/// /tmp, and the /proc of the new pid namespace with its dangerous parts read-only.
fn mount_scratch_and_proc(root: &Path, plan: &Plan) -> Step<()> {
    let tmp_opts = format!("size={},mode=1777", plan.tmp_size);
    let tmp = root.join("tmp");
    std::fs::create_dir_all(&tmp).step(|| "mkdir /tmp".into())?;
    mount(Some("tmpfs"), &tmp, Some("tmpfs"), SCRATCH, Some(&tmp_opts))
        .step(|| "mounting /tmp".into())?;
    // A package runner's cache: a tmpfs of its own, the only writable place where exec is
    // allowed (nosuid and nodev still).
    for dir in &plan.exec_dirs {
        let target = inside(root, dir);
        std::fs::create_dir_all(&target).step(|| format!("mkdir {}", dir.display()))?;
        let flags = libc::MS_NOSUID | libc::MS_NODEV;
        mount(Some("tmpfs"), &target, Some("tmpfs"), flags, Some(&tmp_opts)).step(|| {
            format!("mounting {} (exec allowed: a package runner's cache)", dir.display())
        })?;
    }
    // /proc of the new pid namespace.
    let proc_ = root.join("proc");
    std::fs::create_dir_all(&proc_).step(|| "mkdir /proc".into())?;
    mount(Some("proc"), &proc_, Some("proc"), SCRATCH, None).step(|| "mounting /proc".into())?;
    for sub in ["sys", "sysrq-trigger", "irq", "bus"] {
        let p = proc_.join(sub);
        if p.exists() {
            mount(Some(&p.to_string_lossy()), &p, None, libc::MS_BIND | libc::MS_REC, None)
                .and_then(|()| set_readonly(&p, true))
                .step(|| format!("covering /proc/{sub} read-only"))?;
        }
    }
    Ok(())
}

/// One bind, symlink or file of the plan, inside `root`.
fn mount_step(root: &Path, step: &MountStep, source: Option<&OwnedFd>) -> Step<()> {
    match step {
        MountStep::Bind { path, writable } => {
            let target = inside(root, path);
            let attach = match source {
                Some(tree) => attach_tree(tree, &target),
                None => open_no_symlinks(path).and_then(|fd| bind_from_fd(&fd, &target)),
            };
            attach
                .and_then(|()| set_bind_flags(&target, *writable))
                .step(|| format!("binding {}", path.display()))?;
        }
        MountStep::Symlink { path, target } => {
            let link = inside(root, path);
            if let Some(parent) = link.parent() {
                std::fs::create_dir_all(parent).step(|| format!("mkdir {}", parent.display()))?;
            }
            std::os::unix::fs::symlink(target, &link)
                .step(|| format!("symlink {}", path.display()))?;
        }
        MountStep::File { path, contents } => {
            let file = inside(root, path);
            if let Some(parent) = file.parent() {
                std::fs::create_dir_all(parent).step(|| format!("mkdir {}", parent.display()))?;
            }
            std::fs::write(&file, contents).step(|| format!("writing {}", path.display()))?;
        }
    }
    Ok(())
}

/// Makes `root` the root (the old one detached) and remounts it read-only.
fn pivot_into(root: &Path) -> Step<()> {
    let root_c = cstr(root).step(|| "root".into())?;
    // pivot_root(".", ".") stacks the old root under the new one, and the detach below
    // removes it (the documented idiom of pivot_root(2)).
    // SAFETY: a valid C string.
    cvt(unsafe { libc::chdir(root_c.as_ptr()) }).step(|| "chdir into the new root".into())?;
    // SAFETY: valid C strings.
    cvt(unsafe { libc::syscall(libc::SYS_pivot_root, c".".as_ptr(), c".".as_ptr()) })
        .step(|| "pivot_root".into())?;
    // SAFETY: a valid C string.
    cvt(unsafe { libc::umount2(c".".as_ptr(), libc::MNT_DETACH) })
        .step(|| "detaching the old root".into())?;
    // SAFETY: a valid C string.
    cvt(unsafe { libc::chdir(c"/".as_ptr()) }).step(|| "chdir /".into())?;
    set_readonly(Path::new("/"), false).step(|| "remounting / read-only".into())?;
    Ok(())
}

pub(super) fn inside(root: &Path, path: &Path) -> PathBuf {
    root.join(path.strip_prefix("/").unwrap_or(path))
}

pub(super) fn mount(
    src: Option<&str>,
    target: impl AsRef<Path>,
    fstype: Option<&str>,
    flags: libc::c_ulong,
    data: Option<&str>,
) -> io::Result<()> {
    let src = src.map(|s| CString::new(s).unwrap_or_default());
    let target = cstr(target.as_ref())?;
    let fstype = fstype.map(|s| CString::new(s).unwrap_or_default());
    let data = data.map(|s| CString::new(s).unwrap_or_default());
    let p = |c: &Option<CString>| c.as_ref().map_or(std::ptr::null(), |c| c.as_ptr());
    // SAFETY: every pointer is NULL or a valid C string alive for the call.
    cvt(unsafe { libc::mount(p(&src), target.as_ptr(), p(&fstype), flags, p(&data).cast()) })
        .map(drop)
}

/// Creates the mount point for the object behind `fd`: a folder or an empty file.
pub(super) fn make_mount_point(fd: &OwnedFd, target: &Path) -> io::Result<()> {
    // SAFETY: fstat into a zeroed struct of the right type.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: valid fd and out-pointer.
    cvt(unsafe { libc::fstat(fd.as_raw_fd(), &mut st) })?;
    if st.st_mode & libc::S_IFMT == libc::S_IFDIR {
        std::fs::create_dir_all(target)
    } else {
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(target, b"")
    }
}

/// Binds the object behind `fd` (an `O_PATH` fd opened in this mount namespace) at `target`.
pub(super) fn bind_from_fd(fd: &OwnedFd, target: &Path) -> io::Result<()> {
    make_mount_point(fd, target)?;
    let src = format!("/proc/self/fd/{}", fd.as_raw_fd());
    mount(Some(&src), target, None, libc::MS_BIND | libc::MS_REC, None)
}

/// `open_tree(fd, "", OPEN_TREE_CLONE | AT_RECURSIVE)`: a detached copy of the mount tree at
/// `fd` (Linux 5.2+), attachable in another mount namespace with `move_mount`.
pub(super) fn clone_tree(fd: &OwnedFd) -> io::Result<OwnedFd> {
    const OPEN_TREE_CLONE: libc::c_uint = 1;
    let flags = OPEN_TREE_CLONE
        | libc::O_CLOEXEC as libc::c_uint
        | AT_RECURSIVE
        | libc::AT_EMPTY_PATH as libc::c_uint;
    // SAFETY: a valid fd and an empty C string path.
    let tree =
        cvt(unsafe { libc::syscall(libc::SYS_open_tree, fd.as_raw_fd(), c"".as_ptr(), flags) })?;
    // SAFETY: a fresh fd we own.
    Ok(unsafe { OwnedFd::from_raw_fd(tree as RawFd) })
}

/// Attaches a detached tree from [`clone_tree`] at `target`.
pub(super) fn attach_tree(tree: &OwnedFd, target: &Path) -> io::Result<()> {
    const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x4;
    make_mount_point(tree, target)?;
    let t = cstr(target)?;
    // SAFETY: a valid fd, an empty path and a valid target path.
    cvt(unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            tree.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_FDCWD,
            t.as_ptr(),
            MOVE_MOUNT_F_EMPTY_PATH,
        )
    })
    .map(drop)
}

/// A bind's flags: read-only (or noexec when writable), always nosuid and nodev, recursively.
pub(super) fn set_bind_flags(target: &Path, writable: bool) -> io::Result<()> {
    if writable {
        set_attrs(
            target,
            true,
            MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
            MOUNT_ATTR_RDONLY,
        )
    } else {
        set_readonly(target, true)
    }
}

const MOUNT_ATTR_RDONLY: u64 = 0x1;
const MOUNT_ATTR_NOSUID: u64 = 0x2;
const MOUNT_ATTR_NODEV: u64 = 0x4;
const MOUNT_ATTR_NOEXEC: u64 = 0x8;
const AT_RECURSIVE: libc::c_uint = 0x8000;

#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// `mount_setattr(2)` (Linux 5.12+), recursive or not.
pub(super) fn set_attrs(target: &Path, recursive: bool, set: u64, clear: u64) -> io::Result<()> {
    let t = cstr(target)?;
    let attr = MountAttr { attr_set: set, attr_clr: clear, propagation: 0, userns_fd: 0 };
    let flags = if recursive { AT_RECURSIVE } else { 0 };
    // SAFETY: valid path and attribute struct with its size.
    cvt(unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            t.as_ptr(),
            flags,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    })
    .map(drop)
}

/// Read-only, nosuid, nodev; `mount_setattr` where the kernel has it, else a bind remount that
/// keeps the flags already set (a user namespace may not clear locked ones).
pub(super) fn set_readonly(target: &Path, recursive: bool) -> io::Result<()> {
    match set_attrs(target, recursive, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 0)
    {
        Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {
            let t = cstr(target)?;
            // SAFETY: zeroed statvfs and a valid path.
            let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
            // SAFETY: as above.
            cvt(unsafe { libc::statvfs(t.as_ptr(), &mut st) })?;
            let mut flags = libc::MS_REMOUNT
                | libc::MS_BIND
                | libc::MS_RDONLY
                | libc::MS_NOSUID
                | libc::MS_NODEV;
            for (st_flag, ms) in [
                (libc::ST_NOEXEC, libc::MS_NOEXEC),
                (libc::ST_NOATIME, libc::MS_NOATIME),
                (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
                (libc::ST_RELATIME, libc::MS_RELATIME),
            ] {
                if st.f_flag & st_flag != 0 {
                    flags |= ms;
                }
            }
            mount(None, target, None, flags, None)
        }
        other => other,
    }
}

/// `openat2(path, O_PATH, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)`.
pub(super) fn open_no_symlinks(path: &Path) -> io::Result<OwnedFd> {
    #[repr(C)]
    struct OpenHow {
        flags: u64,
        mode: u64,
        resolve: u64,
    }
    const RESOLVE_NO_MAGICLINKS: u64 = 0x02;
    const RESOLVE_NO_SYMLINKS: u64 = 0x04;
    let p = cstr(path)?;
    let how = OpenHow {
        flags: (libc::O_PATH | libc::O_CLOEXEC) as u64,
        mode: 0,
        resolve: RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    };
    // SAFETY: valid path and open_how struct with its size.
    let fd = cvt(unsafe {
        libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD,
            p.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        )
    })?;
    // SAFETY: a fresh fd we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}
