//! The Landlock layer (docs/sandbox.md, "Layers", 5): inside the sandbox's root, execution is allowed
//! only beneath the read-only runtime folders, writing only beneath the writable mounts.
//!
//! The mount namespace already decides what is visible; Landlock is the second lock on what
//! may be *executed* (a binary copied to `/tmp` or a writable workspace cannot run even if a
//! mount flag were missed) and *written*. Best effort: on a kernel without Landlock, or with an
//! older ABI, the rules that can be enforced are, and `ringmcp sandbox check` says which.

use landlock::{
    ABI, Access, AccessFs, BitFlags, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, path_beneath_rules,
};

use super::plan::Plan;

/// The newest ABI whose rights we ask for (ioctl on devices included).
const ABI_WANTED: ABI = ABI::V5;

/// Restricts the calling process (the server child, after no_new_privs).
///
/// # Errors
/// Only a ruleset that cannot be built; an unsupported kernel is not an error.
pub(crate) fn restrict(plan: &Plan) -> std::io::Result<()> {
    if plan.landlock_exec.is_empty() {
        return Ok(());
    }
    status(plan).map(drop).map_err(std::io::Error::other)
}

fn status(plan: &Plan) -> Result<RulesetStatus, landlock::RulesetError> {
    let abi = ABI_WANTED;
    let all = AccessFs::from_all(abi);
    let read: BitFlags<AccessFs> = AccessFs::ReadFile | AccessFs::ReadDir;
    let exec = read | AccessFs::Execute;
    let write = all & !(AccessFs::Execute | AccessFs::MakeChar | AccessFs::MakeBlock);
    let dev = read | AccessFs::WriteFile | AccessFs::IoctlDev;
    let ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(all)?
        .create()?
        .add_rules(path_beneath_rules(["/"], read))?
        .add_rules(path_beneath_rules(&plan.landlock_read, read))?
        .add_rules(path_beneath_rules(&plan.landlock_exec, exec))?
        .add_rules(path_beneath_rules(&plan.landlock_write, write))?
        .add_rules(path_beneath_rules(["/dev", "/proc"], dev))?;
    Ok(ruleset.restrict_self()?.ruleset)
}

/// The Landlock ABI this kernel offers (0 when none).
pub(crate) fn abi_version() -> i32 {
    // SAFETY: landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION) only returns the
    // ABI version; it takes no buffer.
    let v = unsafe {
        libc::syscall(libc::SYS_landlock_create_ruleset, std::ptr::null::<u8>(), 0usize, 1u32)
    };
    if v < 0 { 0 } else { v as i32 }
}
