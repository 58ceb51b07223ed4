//! What a sandbox looks like: the user's settings ([`SandboxConfig`], the `sandbox` key of an
//! `mcpServers` entry) and the resolved plan the host hands to the sandbox helper ([`Plan`]).
//!
//! Resolution happens in the host, before anything is spawned: the server's program is looked
//! up and canonicalised, the folders it needs are found from its command (the interpreter named
//! by a `#!` line, a Python venv's base interpreter, the `node_modules` tree a script lives in,
//! absolute paths among its arguments), and every bind source is checked to be free of
//! symlinks. The helper then opens each source again with `openat2(RESOLVE_NO_SYMLINKS)`, so a
//! symlink planted after resolution cannot redirect a bind (docs/sandbox.md, item 6).

use std::collections::BTreeSet;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Deserializer, Serialize};

use super::capture::EgressPlan;
use crate::policy::egress::{Network, NetworkPolicy};

/// The seccomp and limit policy of a sandbox.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// Every layer the machine offers; limits that cannot be enforced are reported, and the
    /// server starts anyway. Exec is allowed, of read-only runtime binaries only.
    #[default]
    Standard,
    /// As `standard`, plus no sockets other than `AF_UNIX`, no exec after the server's own,
    /// and the server is refused when its memory or pids limit cannot be enforced.
    Strict,
    /// No sandbox: the server runs as a plain child process (scrubbed environment only).
    Off,
}

/// A folder or file made visible inside the sandbox, at the same path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum BindSpec {
    /// Read-only.
    Path(PathBuf),
    /// With an explicit mode.
    Full {
        /// The host path (it must contain no symlink).
        path: PathBuf,
        /// Writable inside the sandbox.
        #[serde(default)]
        writable: bool,
    },
}

impl BindSpec {
    fn parts(&self) -> (&Path, bool) {
        match self {
            BindSpec::Path(p) => (p, false),
            BindSpec::Full { path, writable } => (path, *writable),
        }
    }
}

/// Per-server sandbox settings (the `sandbox` key of an `mcpServers` entry). Every field is
/// optional; the defaults (docs/sandbox.md): memory 256 MiB, CPU half a core, 256 pids, no
/// network, no workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct SandboxConfig {
    /// `standard` (default), `strict` or `off`.
    pub profile: Profile,
    /// `memory.max` in bytes (a number, or a string such as `"512M"`, `"1GiB"`).
    #[serde(deserialize_with = "de_size")]
    pub memory: Option<u64>,
    /// CPU quota in cores (`0.5` = 50 ms per 100 ms).
    pub cpus: Option<Cores>,
    /// `pids.max`.
    pub pids: Option<u64>,
    /// A folder the server works on, bound at the same path and used as its working
    /// directory unless `cwd` is set.
    pub workspace: Option<PathBuf>,
    /// Whether the workspace is writable (default: read-only).
    pub workspace_writable: bool,
    /// More folders or files to make visible.
    pub binds: Vec<BindSpec>,
    /// Host environment variables passed through by name (on top of the allowlist).
    pub env: Vec<String>,
    /// `false` (default): no network at all. `true`: any public host on ports 80 and 443.
    /// `{"allow": [...], "deny": [...]}`: only those destinations. Either way every outbound
    /// connection is captured inside the sandbox and judged, resolved and dialled by the
    /// host's egress proxy (docs/egress.md); private, loopback, link-local and metadata
    /// addresses stay refused unless an entry names them.
    pub network: Network,
    /// Size of the sandbox's `/tmp` (and `$HOME`) tmpfs, in bytes (default 64 MiB).
    #[serde(deserialize_with = "de_size")]
    pub tmp_size: Option<u64>,
    /// `RLIMIT_NOFILE`, soft and hard (default 4096): the hard limit is what counts, since
    /// runtimes such as Node raise their soft limit to it at start.
    pub nofile: Option<u64>,
}

/// A number of CPU cores (`0.5` = half a core), compared bit for bit so configs are `Eq`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Cores(pub f64);

impl PartialEq for Cores {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

impl Eq for Cores {}

impl Default for SandboxConfig {
    fn default() -> Self {
        SandboxConfig {
            profile: Profile::Standard,
            memory: None,
            cpus: None,
            pids: None,
            workspace: None,
            workspace_writable: false,
            binds: Vec::new(),
            env: Vec::new(),
            network: Network::Off,
            tmp_size: None,
            nofile: None,
        }
    }
}

/// Default `memory.max`: 256 MiB.
pub const DEFAULT_MEMORY: u64 = 256 << 20;
/// Default CPU quota: half a core.
pub const DEFAULT_CPUS: f64 = 0.5;
/// Default `pids.max`.
pub const DEFAULT_PIDS: u64 = 256;
/// Default `RLIMIT_NOFILE` (soft and hard).
pub const DEFAULT_NOFILE: u64 = 4096;
/// Default size of `/tmp`.
pub const DEFAULT_TMP_SIZE: u64 = 64 << 20;

impl SandboxConfig {
    /// The `standard` profile with every default.
    pub fn standard() -> Self {
        Self::default()
    }

    /// The `strict` profile with every default.
    pub fn strict() -> Self {
        SandboxConfig { profile: Profile::Strict, ..Self::default() }
    }

    /// Effective memory limit.
    pub fn memory_max(&self) -> u64 {
        self.memory.unwrap_or(DEFAULT_MEMORY)
    }

    /// Effective CPU quota in cores.
    pub fn cpu_cores(&self) -> f64 {
        self.cpus.map_or(DEFAULT_CPUS, |c| c.0)
    }

    /// Effective pids limit.
    pub fn pids_max(&self) -> u64 {
        self.pids.unwrap_or(DEFAULT_PIDS)
    }

    /// With `network` set to `network` (builder style): `Network::any()`,
    /// `Network::allow(["api.github.com"])?`, or [`Network::Off`].
    pub fn network(mut self, network: impl Into<Network>) -> Self {
        self.network = network.into();
        self
    }

    /// Effective `RLIMIT_NOFILE` (soft = hard).
    pub fn nofile_max(&self) -> u64 {
        self.nofile.unwrap_or(DEFAULT_NOFILE)
    }
}

fn de_size<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Size {
        Number(u64),
        Text(String),
    }
    match Option::<Size>::deserialize(d)? {
        None => Ok(None),
        Some(Size::Number(n)) => Ok(Some(n)),
        Some(Size::Text(t)) => parse_size(&t).map(Some).map_err(serde::de::Error::custom),
    }
}

/// `"512"`, `"64k"`, `"256M"`, `"1G"`, `"1GiB"` (binary multiples) into bytes.
///
/// # Errors
/// A message naming what is wrong.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num.parse().map_err(|_| format!("{text:?} is not a size"))?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        other => return Err(format!("unknown size unit {other:?} in {text:?}")),
    };
    n.checked_mul(1 << shift).ok_or_else(|| format!("{text:?} is too large"))
}

/// One step of building the sandbox's root, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum MountStep {
    /// Bind `path` (a host path free of symlinks) at the same path inside.
    Bind {
        /// Host path and path inside.
        path: PathBuf,
        /// Writable (else read-only, and always nosuid, nodev).
        writable: bool,
    },
    /// A symlink `path -> target` in the new root (for `/lib -> usr/lib` on merged-usr hosts).
    Symlink {
        /// Where the link is made.
        path: PathBuf,
        /// What it points to.
        target: PathBuf,
    },
    /// A small file written into the new root before it is made read-only.
    File {
        /// Where.
        path: PathBuf,
        /// Its contents.
        contents: String,
    },
}

/// Everything the sandbox helper needs, sent over a pipe (never in argv, which any process
/// can read in `/proc/*/cmdline`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Plan {
    /// The program, absolute, as it is seen inside.
    pub program: PathBuf,
    /// `argv`, including `argv[0]`.
    pub argv: Vec<Vec<u8>>,
    /// The server's environment, `KEY=VALUE`.
    pub envp: Vec<Vec<u8>>,
    /// Working directory inside.
    pub cwd: PathBuf,
    /// The root's construction.
    pub mounts: Vec<MountStep>,
    /// Size of the root tmpfs.
    pub root_size: u64,
    /// Size of `/tmp`.
    pub tmp_size: u64,
    /// Hostname inside.
    pub hostname: String,
    /// Host uid the sandbox runs as (its ns-root maps to it).
    pub host_uid: u32,
    /// Host gid, likewise.
    pub host_gid: u32,
    /// The uid/gid the server sees (a nested user namespace maps it; 0 stays unmapped).
    pub inner_id: u32,
    /// `setgroups` must be denied before writing the gid map (unprivileged hosts).
    pub deny_setgroups: bool,
    /// The network capture (loopback up, local routes, listeners, DNS stub), when the
    /// server has network.
    pub network: Option<EgressPlan>,
    /// `(resource, soft, hard)` for `setrlimit`.
    pub rlimits: Vec<(u32, u64, u64)>,
    /// The compiled seccomp filter, if any.
    pub seccomp: Option<Vec<u8>>,
    /// Execs allowed by the exec gate (strict profile), if the filter has one.
    pub exec_gate: Option<u32>,
    /// Folders (inside paths) where Landlock allows execution and reading.
    pub landlock_exec: Vec<PathBuf>,
    /// Folders where Landlock allows writing.
    pub landlock_write: Vec<PathBuf>,
    /// Folders where Landlock allows reading only.
    pub landlock_read: Vec<PathBuf>,
    /// The host's pid, to check that the parent is still the host (PDEATHSIG race).
    pub host_pid: u32,
    /// Folders under `/tmp` mounted as their own tmpfs *with* exec allowed (and in Landlock's
    /// execute set): a package runner's download cache, for a server started by one
    /// ([`runner`](super::runner)) whose registry is allowed. Empty otherwise.
    #[serde(default)]
    pub exec_dirs: Vec<PathBuf>,
}

/// The capture a network setting needs (`None`: no network).
pub fn egress_plan(network: &Network) -> Option<EgressPlan> {
    let policy: &NetworkPolicy = network.policy()?;
    let ports = crate::policy::egress::Matcher::new(policy).ports().into_iter().collect();
    Some(EgressPlan { policy: policy.clone(), ports, proxy_port: super::capture::PROXY_PORT })
}

/// Folders of the host's `/` that a server may need, bound read-only when they are real
/// directories and recreated as symlinks when they are symlinks (merged /usr).
const SYSTEM_DIRS: &[&str] = &["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

/// Files and folders of `/etc` that runtimes read (TLS roots, the loader cache, time zone).
const ETC_ENTRIES: &[&str] = &[
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/ld.so.cache",
    "/etc/localtime",
    "/etc/alternatives",
];

/// Why a sandbox plan could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError {
    /// The program was not found in `PATH`.
    #[error("sandbox: the program {0:?} was not found in PATH")]
    ProgramNotFound(OsString),
    /// A path could not be resolved.
    #[error("sandbox: resolving {}: {source}", path.display())]
    Resolve {
        /// The path.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A configured bind or workspace path goes through a symlink (item 6 of docs/sandbox.md:
    /// a planted link must not redirect a bind).
    #[error("sandbox: {} contains a symlink (it resolves to {}); give the real path", path.display(), resolved.display())]
    Symlink {
        /// The configured path.
        path: PathBuf,
        /// Where it leads.
        resolved: PathBuf,
    },
    /// A configured path is not absolute, or is `/`.
    #[error("sandbox: {} cannot be bound (it must be absolute and not /)", .0.display())]
    BadPath(PathBuf),
}

/// Looks `program` up the way `execvp` would, in `path` (a `PATH` value).
pub fn find_program(program: &OsStr, path: Option<&OsStr>) -> Option<PathBuf> {
    let p = Path::new(program);
    if p.components().count() > 1 || p.is_absolute() {
        return p.is_file().then(|| p.to_path_buf());
    }
    std::env::split_paths(path?).map(|dir| dir.join(p)).find(|c| is_executable(c))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The folder to bind so that `file` (canonical) works with what sits around it: the parent of
/// the outermost `node_modules`, a Python venv's root, the prefix of a `bin/` program, else
/// the file's own folder. Never `/`, never a folder directly under `/` other than `/opt`-like
/// trees' children (`/root`, `/home` themselves are not bound whole).
pub fn package_root(file: &Path) -> PathBuf {
    let ancestors: Vec<&Path> = file.ancestors().skip(1).collect();
    if let Some(nm) =
        ancestors.iter().rev().find(|a| a.file_name() == Some(OsStr::new("node_modules")))
        && let Some(parent) = nm.parent()
        && is_bindable(parent)
    {
        return parent.to_path_buf();
    }
    if let Some(venv) = ancestors.iter().find(|a| a.join("pyvenv.cfg").is_file())
        && is_bindable(venv)
    {
        return venv.to_path_buf();
    }
    let parent = file.parent().unwrap_or(Path::new("/"));
    if parent.file_name() == Some(OsStr::new("bin"))
        && let Some(prefix) = parent.parent()
        && is_bindable(prefix)
    {
        return prefix.to_path_buf();
    }
    if is_bindable(parent) { parent.to_path_buf() } else { file.to_path_buf() }
}

/// Not `/` and not a top-level folder that holds everyone's files.
fn is_bindable(dir: &Path) -> bool {
    let depth = dir.components().filter(|c| matches!(c, Component::Normal(_))).count();
    depth >= 2
        || (depth == 1
            && !matches!(
                dir.to_str(),
                Some(
                    "/root"
                        | "/home"
                        | "/tmp"
                        | "/var"
                        | "/etc"
                        | "/run"
                        | "/proc"
                        | "/sys"
                        | "/dev"
                )
            ))
}

/// The interpreter named by a `#!` line of `file`, looked up in `path` when it is
/// `/usr/bin/env NAME`.
pub fn shebang_interpreter(file: &Path, path: Option<&OsStr>) -> Option<PathBuf> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let n = std::fs::File::open(file).ok()?.read(&mut head).ok()?;
    let head = &head[..n];
    let line = head.strip_prefix(b"#!")?;
    let line = &line[..line.iter().position(|&b| b == b'\n').unwrap_or(line.len())];
    let mut words = line.split(|b| b.is_ascii_whitespace()).filter(|w| !w.is_empty());
    let interp = Path::new(OsStr::from_bytes(words.next()?));
    if interp.file_name() == Some(OsStr::new("env")) {
        let mut name = words.next()?;
        if name == b"-S" {
            name = words.next()?;
        }
        return find_program(OsStr::from_bytes(name), path);
    }
    Some(interp.to_path_buf())
}

/// The base interpreter prefix of a Python venv (`home = …/bin` in `pyvenv.cfg`).
fn venv_home(venv: &Path) -> Option<PathBuf> {
    let cfg = std::fs::read_to_string(venv.join("pyvenv.cfg")).ok()?;
    let home = cfg.lines().find_map(|l| {
        let (k, v) = l.split_once('=')?;
        (k.trim() == "home").then(|| PathBuf::from(v.trim()))
    })?;
    Some(home)
}

/// Canonicalises `path` and refuses it when that changes it (a symlink on the way).
fn no_symlinks(path: &Path) -> Result<PathBuf, PlanError> {
    if !path.is_absolute() || path == Path::new("/") {
        return Err(PlanError::BadPath(path.to_path_buf()));
    }
    let real = path
        .canonicalize()
        .map_err(|source| PlanError::Resolve { path: path.to_path_buf(), source })?;
    if real != path {
        return Err(PlanError::Symlink { path: path.to_path_buf(), resolved: real });
    }
    Ok(real)
}

/// The binds a program needs: its package root, and the same for its `#!` interpreter and a
/// venv's base interpreter, each canonicalised (symlinks are resolved here, in the host, and
/// each source is then bound at its real path). Paths under `/usr` need nothing more.
pub fn program_binds(program: &Path, path_var: Option<&OsStr>) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    let mut todo = vec![program.to_path_buf()];
    let mut seen = BTreeSet::new();
    while let Some(p) = todo.pop() {
        if !seen.insert(p.clone()) || seen.len() > 16 {
            continue;
        }
        // The path as given (a venv's bin/python is a symlink whose folder matters) and the
        // real file.
        let real = p.canonicalize().unwrap_or_else(|_| p.clone());
        for candidate in [p.clone(), real.clone()] {
            if let Some(dir) = candidate.parent()
                && let Ok(dir) = dir.canonicalize()
            {
                let file = dir.join(candidate.file_name().unwrap_or_default());
                let root = package_root(&file);
                if !root.starts_with("/usr") && root.is_absolute() {
                    if let Some(home) = venv_home(&root) {
                        todo.push(home.join("python3"));
                    }
                    out.insert(root);
                }
            }
        }
        if let Some(interp) = shebang_interpreter(&real, path_var) {
            todo.push(interp);
        }
    }
    // Drop binds already covered by another bind.
    let all: Vec<PathBuf> = out.iter().cloned().collect();
    out.retain(|p| !all.iter().any(|q| q != p && p.starts_with(q)));
    out
}

/// Builds the mount steps: system folders, `/etc` pieces, generated `/etc` files, the binds the
/// program needs, then the configured binds and the workspace (writable ones last so that no
/// read-only bind is mounted over them).
///
/// # Errors
/// A configured path that is relative, `/`, missing or reached through a symlink.
pub fn mount_steps(
    config: &SandboxConfig,
    program_dirs: &BTreeSet<PathBuf>,
    inner_id: u32,
) -> Result<Vec<MountStep>, PlanError> {
    let mut steps = Vec::new();
    // System folders only when they are real folders (or links to them); `/etc` entries may
    // be files too.
    for (list, dirs_only) in [(SYSTEM_DIRS, true), (ETC_ENTRIES, false)] {
        for entry in list {
            let p = Path::new(entry);
            match std::fs::symlink_metadata(p) {
                Ok(m) if m.file_type().is_symlink() => {
                    if let Ok(target) = std::fs::read_link(p) {
                        steps.push(MountStep::Symlink { path: p.to_path_buf(), target });
                    }
                }
                Ok(m) if m.is_dir() || !dirs_only => {
                    steps.push(MountStep::Bind { path: p.to_path_buf(), writable: false });
                }
                _ => {}
            }
        }
    }
    if config.network.is_on() {
        // The sandbox's own DNS stub (it answers itself and never forwards), and files
        // before DNS so that `localhost` never reaches it.
        steps.push(MountStep::File {
            path: "/etc/resolv.conf".into(),
            contents: "nameserver 127.0.0.1\noptions attempts:1 timeout:2\n".into(),
        });
        steps.push(MountStep::File {
            path: "/etc/nsswitch.conf".into(),
            contents: "hosts: files dns\n".into(),
        });
    }
    let id = inner_id;
    steps.push(MountStep::File {
        path: "/etc/passwd".into(),
        contents: format!("root:x:0:0::/:/usr/sbin/nologin\nsandbox:x:{id}:{id}::/tmp:/bin/sh\nnobody:x:65534:65534::/:/usr/sbin/nologin\n"),
    });
    steps.push(MountStep::File {
        path: "/etc/group".into(),
        contents: format!("root:x:0:\nsandbox:x:{id}:\nnogroup:x:65534:\n"),
    });
    steps.push(MountStep::File {
        path: "/etc/hosts".into(),
        contents: "127.0.0.1 localhost\n::1 localhost\n".into(),
    });
    steps.push(MountStep::File { path: "/etc/hostname".into(), contents: "sandbox\n".into() });
    let mut ro: BTreeSet<PathBuf> = program_dirs.clone();
    let mut rw = BTreeSet::new();
    for bind in &config.binds {
        let (path, writable) = bind.parts();
        let real = no_symlinks(path)?;
        if writable {
            rw.insert(real)
        } else {
            ro.insert(real)
        };
    }
    if let Some(ws) = &config.workspace {
        let real = no_symlinks(ws)?;
        if config.workspace_writable {
            rw.insert(real)
        } else {
            ro.insert(real)
        };
    }
    for p in ro.iter().filter(|p| !p.starts_with("/usr") && !rw.contains(*p)) {
        steps.push(MountStep::Bind { path: p.clone(), writable: false });
    }
    for p in &rw {
        steps.push(MountStep::Bind { path: p.clone(), writable: true });
    }
    Ok(steps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_parses_the_documented_keys() {
        let c: SandboxConfig = serde_json::from_value(serde_json::json!({
            "profile": "strict", "memory": "128M", "cpus": 0.25, "pids": 16,
            "workspace": "/srv/ws", "workspaceWritable": true,
            "binds": ["/opt/tool", {"path": "/data", "writable": true}],
            "env": ["GITHUB_TOKEN"], "network": {"allow": ["api.github.com"]}, "tmpSize": 1048576,
            "nofile": 512
        }))
        .unwrap();
        assert_eq!(c.profile, Profile::Strict);
        assert_eq!(c.memory_max(), 128 << 20);
        assert_eq!(c.cpu_cores(), 0.25);
        assert_eq!(c.pids_max(), 16);
        assert_eq!(c.binds[1], BindSpec::Full { path: "/data".into(), writable: true });
        assert_eq!(c.tmp_size, Some(1 << 20));
        assert_eq!(c.nofile_max(), 512);
        assert_eq!(c.network, Network::allow(["api.github.com"]).unwrap());
        let t: SandboxConfig = serde_json::from_str(r#"{"network": true}"#).unwrap();
        assert_eq!(t.network, Network::any());
        let d: SandboxConfig = serde_json::from_str("{}").unwrap();
        assert_eq!(d, SandboxConfig::default());
        assert_eq!((d.memory_max(), d.cpu_cores(), d.pids_max()), (256 << 20, 0.5, 256));
        assert_eq!(d.nofile_max(), 4096);
        assert!(serde_json::from_str::<SandboxConfig>(r#"{"memroy": 1}"#).is_err());
        assert!(serde_json::from_str::<SandboxConfig>(r#"{"memory": "12Q"}"#).is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("512"), Ok(512));
        assert_eq!(parse_size("64k"), Ok(64 << 10));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert!(parse_size("x").is_err());
        assert!(parse_size("99999999999G").is_err());
    }

    #[test]
    fn package_roots() {
        let base = std::env::temp_dir().join(format!("ringmcp-plan-{}", std::process::id()));
        let nm = base.join("app/node_modules/@scope/pkg/dist");
        std::fs::create_dir_all(&nm).unwrap();
        std::fs::create_dir_all(base.join("venv/bin")).unwrap();
        std::fs::write(base.join("venv/pyvenv.cfg"), "home = /usr/bin\n").unwrap();
        std::fs::create_dir_all(base.join("prefix/bin")).unwrap();
        assert_eq!(package_root(&nm.join("index.js")), base.join("app"));
        assert_eq!(package_root(&base.join("venv/bin/python")), base.join("venv"));
        assert_eq!(package_root(&base.join("prefix/bin/tool")), base.join("prefix"));
        assert_eq!(package_root(Path::new("/opt/x")), PathBuf::from("/opt"));
        assert_eq!(package_root(Path::new("/root/server.py")), PathBuf::from("/root/server.py"));
        std::fs::write(nm.join("index.js"), "#!/usr/bin/env sh\n").unwrap();
        assert_eq!(
            shebang_interpreter(&nm.join("index.js"), Some(OsStr::new("/usr/bin:/bin"))),
            Some(PathBuf::from("/usr/bin/sh"))
        );
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn configured_paths_must_be_real() {
        let base = std::env::temp_dir().join(format!("ringmcp-plan-ln-{}", std::process::id()));
        std::fs::create_dir_all(base.join("real")).unwrap();
        let _ = std::fs::remove_file(base.join("link"));
        std::os::unix::fs::symlink(base.join("real"), base.join("link")).unwrap();
        let mut c = SandboxConfig { workspace: Some(base.join("link")), ..Default::default() };
        let err = mount_steps(&c, &BTreeSet::new(), 1000).unwrap_err();
        assert!(matches!(err, PlanError::Symlink { .. }), "{err}");
        c.workspace = Some(base.join("real"));
        c.workspace_writable = true;
        let steps = mount_steps(&c, &BTreeSet::new(), 1000).unwrap();
        assert!(steps.contains(&MountStep::Bind { path: base.join("real"), writable: true }));
        c.workspace = Some("relative".into());
        assert!(matches!(mount_steps(&c, &BTreeSet::new(), 1000), Err(PlanError::BadPath(_))));
        std::fs::remove_dir_all(&base).unwrap();
    }
}
