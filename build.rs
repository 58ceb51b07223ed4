//! Makes `-lseccomp` linkable on machines that only have the runtime library.
//!
//! The `libseccomp` crate (via `libseccomp-sys`) links with `-lseccomp`, which needs the
//! unversioned `libseccomp.so` that only the `-dev` package installs. Our machines and CI have
//! just the runtime `libseccomp.so.2` (Debian `libseccomp2`). When no `libseccomp.so` is found,
//! this script puts a `libseccomp.so -> libseccomp.so.2` symlink in `$OUT_DIR/libseccomp-link`
//! and adds that directory to the link search path. The linker records the library's SONAME
//! (`libseccomp.so.2`) in the binary, so the result is the same as linking against `-dev`.
//!
//! Inputs: `LIBSECCOMP_LIB_PATH` (a directory searched first, as `libseccomp-sys` does),
//! `LIBSECCOMP_LINK_TYPE=static` (then a `libseccomp.a` is required and nothing is done here).

use std::env;
use std::path::{Path, PathBuf};

const LIB_PATH_VAR: &str = "LIBSECCOMP_LIB_PATH";
const LINK_TYPE_VAR: &str = "LIBSECCOMP_LINK_TYPE";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed={LIB_PATH_VAR}");
    println!("cargo:rerun-if-env-changed={LINK_TYPE_VAR}");

    if env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    if env::var(LINK_TYPE_VAR).as_deref() == Ok("static") {
        // A static link needs libseccomp.a; a symlink to the shared object would not help.
        return;
    }

    let dirs = search_dirs();
    if let Some(dev) = dirs.iter().map(|d| d.join("libseccomp.so")).find(|p| p.exists()) {
        // The -dev package (or a custom build) is there: the plain `-lseccomp` works.
        println!("cargo:rerun-if-changed={}", dev.display());
        return;
    }
    let Some(runtime) = dirs.iter().map(|d| d.join("libseccomp.so.2")).find(|p| p.exists()) else {
        let msg = format!(
            "libseccomp not found: neither libseccomp.so nor libseccomp.so.2 in {}. \
             Install the runtime library (Debian/Ubuntu: `apt-get install libseccomp2`; \
             scripts/deps.sh does it), or set {LIB_PATH_VAR} to the directory that holds it.",
            dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", ")
        );
        println!("cargo:warning={msg}");
        panic!("{msg}");
    };

    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let link_dir = out.join("libseccomp-link");
    std::fs::create_dir_all(&link_dir)
        .unwrap_or_else(|e| panic!("creating {}: {e}", link_dir.display()));
    let link = link_dir.join("libseccomp.so");
    // Replace a stale link (the runtime library may have moved since the last build).
    match std::fs::remove_file(&link) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => panic!("removing stale {}: {e}", link.display()),
    }
    std::os::unix::fs::symlink(&runtime, &link)
        .unwrap_or_else(|e| panic!("symlinking {} -> {}: {e}", link.display(), runtime.display()));
    // Silent on success: this is the normal case on our machines and CI.
    println!("cargo:rerun-if-changed={}", runtime.display());
    println!("cargo:rustc-link-search=native={}", link_dir.display());
}

/// Where to look, first match wins: `LIBSECCOMP_LIB_PATH`, the target's multiarch directories,
/// then the usual library directories.
fn search_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(p) = env::var_os(LIB_PATH_VAR).filter(|p| !p.is_empty()) {
        dirs.push(PathBuf::from(p));
    }
    if let Some(triple) = multiarch_triple() {
        for root in ["/usr/lib", "/lib", "/usr/local/lib"] {
            dirs.push(Path::new(root).join(&triple));
        }
    }
    for d in ["/usr/local/lib64", "/usr/local/lib", "/usr/lib64", "/lib64", "/usr/lib", "/lib"] {
        dirs.push(PathBuf::from(d));
    }
    dirs
}

/// Debian's multiarch name for the target, e.g. `x86_64-unknown-linux-gnu` -> `x86_64-linux-gnu`,
/// `i686-unknown-linux-gnu` -> `i386-linux-gnu`, `armv7-unknown-linux-gnueabihf` ->
/// `arm-linux-gnueabihf`.
fn multiarch_triple() -> Option<String> {
    let arch = env::var("CARGO_CFG_TARGET_ARCH").ok()?;
    let target = env::var("TARGET").ok()?;
    let abi = target.rsplit('-').next()?.to_owned();
    let arch = match arch.as_str() {
        "x86" => "i386".to_owned(),
        "powerpc64" if env::var("CARGO_CFG_TARGET_ENDIAN").as_deref() == Ok("little") => {
            "powerpc64le".to_owned()
        }
        _ => arch,
    };
    Some(format!("{arch}-linux-{abi}"))
}
