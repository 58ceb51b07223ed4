//! The other host layouts: pure v2, v1 only, nothing usable; and the stale-cgroup cleanup.

use super::*;

// ---- (a) pure v2 with memory, cpu and pids delegated ----

const V2_MOUNTINFO: &str = "\
22 1 253:1 / / rw,relatime - ext4 /dev/vda rw
30 22 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot
";

fn pure_v2(cgroup: &str, own: &str, setup: impl FnOnce(&TempTree)) -> Fake {
    let own = own.to_owned();
    fake(V2_MOUNTINFO, cgroup, &[("/sys/fs/cgroup", &[V2_CORE, V2_CONTROLLERS])], move |tree, _| {
        tree.put(
            &format!("{own}/cgroup.controllers"),
            "cpuset cpu io memory hugetlb pids rdma misc\n",
        );
        tree.put(&format!("{own}/cgroup.subtree_control"), "");
        setup(tree);
    })
}

#[test]
fn pure_v2_enables_controllers_then_writes_v2_files() {
    let f =
        pure_v2("0::/\n", "sys/fs/cgroup", |tree| tree.put("sys/fs/cgroup/cgroup.procs", "1\n"));
    for c in Controller::ALL {
        assert_eq!(f.layout.backend(c), Some(Backend::V2));
    }
    let report = f.layout.report(&Limits::default());
    assert_eq!(report.memory, enforced(Backend::V2, "memory.max=268435456, memory.swap.max=0"));
    assert_eq!(report.cpu, enforced(Backend::V2, "cpu.max=50000 100000"));
    assert_eq!(report.pids, enforced(Backend::V2, "pids.max=256"));

    let (cg, report) = SandboxCgroup::create(&f.layout, &Limits::default()).unwrap();
    let name = cg.name().to_owned();
    let own = |v: &str| ("sys/fs/cgroup/cgroup.subtree_control".to_owned(), v.to_owned());
    let parent =
        |v: &str| ("sys/fs/cgroup/ringmcp/cgroup.subtree_control".to_owned(), v.to_owned());
    let sbx = |file: &str, v: &str| (format!("sys/fs/cgroup/ringmcp/{name}/{file}"), v.to_owned());
    assert_eq!(
        f.fs.writes_to(""),
        vec![
            own("+memory"),
            parent("+memory"),
            own("+cpu"),
            parent("+cpu"),
            own("+pids"),
            parent("+pids"),
            sbx("memory.max", "268435456"),
            sbx("memory.swap.max", "0"),
            sbx("cpu.max", "50000 100000"),
            sbx("pids.max", "256"),
        ]
    );
    assert_eq!(report.memory, enforced(Backend::V2, "memory.max=268435456, memory.swap.max=0"));
    assert_eq!(report.cpu, enforced(Backend::V2, "cpu.max=50000 100000"));
    assert_eq!(report.pids, enforced(Backend::V2, "pids.max=256"));
    assert_eq!(report.kill, enforced(Backend::V2, "cgroup.kill"));
    assert_eq!(cg.dirs().count(), 1, "one hierarchy carries everything");
    assert!(cg.v2_dir_fd().is_some());

    // Already enabled: the second sandbox writes only its limits.
    let (cg2, _) = SandboxCgroup::create(&f.layout, &Limits::default()).unwrap();
    assert!(f.fs.writes_to(&format!("{}/", cg2.name())).len() == 4);
    assert_eq!(f.fs.writes_to("subtree_control").len(), 6);

    // v2 stats.
    let dir = dir_of(&cg, &name);
    std::fs::write(dir.join("memory.events"), "low 0\nhigh 0\nmax 9\noom 2\noom_kill 2\n").unwrap();
    std::fs::write(dir.join("memory.peak"), "4096\n").unwrap();
    std::fs::write(dir.join("pids.events"), "max 1\n").unwrap();
    std::fs::write(
        dir.join("cpu.stat"),
        "usage_usec 1\nuser_usec 1\nsystem_usec 0\nnr_periods 5\nnr_throttled 3\nthrottled_usec 777\n",
    )
    .unwrap();
    assert_eq!(
        cg.stats(),
        CgroupStats {
            oom_kills: Some(2),
            pids_max_hits: Some(1),
            nr_throttled: Some(3),
            throttled_usec: Some(777),
            memory_peak_bytes: Some(4096),
            procs: 0,
        }
    );
}

#[test]
fn v2_controllers_in_a_cgroup_with_processes_are_reported_unavailable() {
    // A delegated non-root cgroup that holds the host: enabling controllers would be EBUSY.
    let own = "sys/fs/cgroup/user.slice/app.scope";
    let f = pure_v2("0::/user.slice/app.scope\n", own, |tree| {
        tree.put(&format!("{own}/cgroup.events"), "populated 1\nfrozen 0\n");
        tree.put(&format!("{own}/cgroup.kill"), "");
        tree.put(&format!("{own}/cgroup.procs"), "777\n");
    });
    let report = f.layout.report(&Limits::default());
    for c in Controller::ALL {
        let why = reason(report.status(c));
        assert!(why.contains("holds processes") && why.contains("EBUSY"), "{why}");
    }
    assert_eq!(report.kill, enforced(Backend::V2, "cgroup.kill"));

    let (cg, created) = SandboxCgroup::create(&f.layout, &Limits::default()).unwrap();
    assert_eq!(created, report, "create agrees with the prediction");
    assert_eq!(cg.dirs().count(), 1, "the lifecycle directory is still made");
    assert!(f.fs.writes_to("subtree_control").is_empty());
}

// ---- (c) v1 only: co-mounted cpu,cpuacct, a bind-mounted subtree, no swap accounting ----

const V1_MOUNTINFO: &str = "\
22 1 253:1 / / rw,relatime - ext4 /dev/vda rw
30 22 0:25 / /sys/fs/cgroup ro,nosuid,nodev,noexec - tmpfs tmpfs ro,mode=755
31 30 0:26 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:7 - cgroup cgroup rw,cpu,cpuacct
32 30 0:27 /docker/abc /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime - cgroup cgroup rw,memory
33 30 0:28 / /sys/fs/cgroup/pids rw,nosuid,nodev,noexec,relatime - cgroup cgroup rw,pids
34 30 0:29 / /sys/fs/cgroup/freezer rw,nosuid,nodev,noexec,relatime - cgroup cgroup rw,freezer
";
const V1_CGROUP: &str = "\
5:freezer:/docker/abc
4:pids:/docker/abc
3:memory:/docker/abc
2:cpu,cpuacct:/docker/abc
";

fn v1_only() -> Fake {
    fake(
        V1_MOUNTINFO,
        V1_CGROUP,
        &[
            ("/sys/fs/cgroup/cpu,cpuacct", &[V1_CPU]),
            ("/sys/fs/cgroup/memory", &[V1_MEMORY_NO_SWAP_ACCOUNTING]),
            ("/sys/fs/cgroup/pids", &[V1_PIDS]),
            ("/sys/fs/cgroup/freezer", &[V1_FREEZER]),
        ],
        |tree, _| {
            tree.put("sys/fs/cgroup/cpu,cpuacct/docker/abc/cgroup.procs", "1\n");
            tree.put("sys/fs/cgroup/memory/cgroup.procs", "1\n");
            tree.put("sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
            tree.put("sys/fs/cgroup/memory/memory.oom_control", "oom_kill_disable 0\n");
            tree.put("sys/fs/cgroup/pids/docker/abc/cgroup.procs", "1\n");
            tree.put("sys/fs/cgroup/freezer/docker/abc/cgroup.procs", "1\n");
        },
    )
}

#[test]
fn v1_only_maps_mount_roots_and_co_mounts_and_reports_missing_swap_accounting() {
    let f = v1_only();
    let l = &f.layout;
    assert_eq!(
        l.cgroup_dir(Controller::Memory),
        Some(f.tree.path("sys/fs/cgroup/memory").as_path())
    );
    assert_eq!(
        l.cgroup_dir(Controller::Cpu),
        Some(f.tree.path("sys/fs/cgroup/cpu,cpuacct/docker/abc").as_path())
    );
    assert_eq!(l.lifecycle_dir(), Some(f.tree.path("sys/fs/cgroup/freezer/docker/abc").as_path()));
    let predicted = l.report(&Limits::default());
    assert_eq!(
        predicted.memory,
        enforced(
            Backend::V1,
            "memory.limit_in_bytes=268435456, memory.oom_control=0; \
             no memory.memsw.limit_in_bytes: swap is not limited"
        )
    );
    assert_eq!(
        predicted.kill,
        enforced(Backend::V1, "freezer: freeze, SIGKILL every member, thaw")
    );

    let (cg, report) = SandboxCgroup::create(l, &Limits::default()).unwrap();
    assert_eq!(
        report.memory,
        enforced(
            Backend::V1,
            "memory.limit_in_bytes=268435456, memory.oom_control=0; \
             memory.memsw.limit_in_bytes not set (ENOENT (No such file or directory)): \
             swap is not limited"
        )
    );
    assert_eq!(report.kill, predicted.kill);
    assert!(cg.v2_dir_fd().is_none());
    assert_eq!(cg.dirs().count(), 4, "cpu,cpuacct + memory + pids + freezer");
}

#[test]
fn v1_kill_freezes_signals_every_member_including_sub_cgroups_and_thaws() {
    let f = v1_only();
    let (cg, _) = SandboxCgroup::create(&f.layout, &Limits::default()).unwrap();
    cg.place(4242).unwrap();
    // A sub-cgroup (as a delegated server might make) with a process of its own.
    let nested = dir_of(&cg, "/memory/").join("child");
    f.fs.mkdir(&nested).unwrap();
    std::fs::write(nested.join("cgroup.procs"), "4343\n").unwrap();
    assert_eq!(cg.pids(), vec![4242, 4343]);
    assert_eq!(cg.stats().procs, 2);

    cg.kill().unwrap();
    assert_eq!(f.fs.killed(), vec![4242, 4343]);
    let freezer: Vec<String> =
        f.fs.writes_to("freezer.state").into_iter().map(|(_, v)| v).collect();
    assert_eq!(freezer, ["FROZEN", "THAWED"]);
    assert!(cg.pids().is_empty());

    let dirs: Vec<PathBuf> = cg.dirs().map(|(_, p)| p.to_path_buf()).collect();
    drop(cg);
    assert!(!nested.exists());
    for d in dirs {
        assert!(!d.exists(), "{} left behind", d.display());
    }
}

// ---- (d) nothing usable ----

#[test]
fn read_only_mounts_make_everything_unavailable() {
    let f = fake(
        &HYBRID_MOUNTINFO.replace(" rw,relatime - cgroup", " ro,relatime - cgroup"),
        HYBRID_CGROUP,
        &[],
        |_, _| {},
    );
    let report = f.layout.report(&Limits::default());
    for c in Controller::ALL {
        assert!(reason(report.status(c)).contains("read-only"), "{report}");
    }
    assert!(reason(&report.kill).contains("read-only"), "{report}");
    let err = SandboxCgroup::create(&f.layout, &Limits::default()).unwrap_err();
    assert!(
        matches!(&err, CgroupError::NoHierarchy { reason } if reason.contains("read-only")),
        "{err}"
    );
}

#[test]
fn no_permission_is_reported_with_the_errno() {
    let f = hybrid(|_, fs| fs.deny = Some(libc::EACCES));
    let report = f.layout.report(&Limits::default());
    for c in Controller::ALL {
        let why = reason(report.status(c));
        assert!(why.contains("cannot create cgroups in") && why.contains("EACCES"), "{why}");
    }
    assert!(matches!(report.kill, LimitStatus::Unavailable { .. }));
    let err = SandboxCgroup::create(&f.layout, &Limits::default()).unwrap_err();
    assert!(matches!(err, CgroupError::NoHierarchy { .. }), "{err}");
    assert!(f.fs.writes_to("").is_empty());
}

#[test]
fn no_cgroup_mount_at_all() {
    let f = fake("22 1 253:1 / / rw - ext4 /dev/vda rw\n", "", &[], |_, _| {});
    let report = f.layout.report(&Limits::default());
    let why = reason(&report.memory);
    assert!(why.contains("no cgroup hierarchy carries the memory controller"), "{why}");
    assert!(matches!(
        SandboxCgroup::create(&f.layout, &Limits::default()),
        Err(CgroupError::NoHierarchy { .. })
    ));
}

#[test]
fn v2_without_the_controller_and_no_v1_says_what_v2_offers() {
    let f = fake(V2_MOUNTINFO, "0::/\n", &[], |tree, _| {
        tree.put("sys/fs/cgroup/cgroup.controllers", "hugetlb\n");
    });
    let why = f.layout.report(&Limits::default()).memory;
    assert!(reason(&why).contains("offers [hugetlb]"), "{why}");
}

// ---- stale cleanup ----

#[test]
fn remove_stale_kills_and_removes_only_dead_hosts_cgroups() {
    let me = std::process::id();
    let f = hybrid(|_, fs| fs.alive = vec![900_003]);
    let mkdir = |p: &str| f.fs.mkdir(&f.tree.path(p)).unwrap();
    let v2 = "sys/fs/cgroup/unified/ringmcp";
    let mem = format!("{MEM}/ringmcp");
    let pids = "sys/fs/cgroup/pids/ringmcp";
    let freezer = "sys/fs/cgroup/freezer/ringmcp";
    for parent in [v2, &mem, pids, freezer] {
        mkdir(parent);
    }
    // A dead host's sandbox across v2 and v1, with a process left in it.
    for parent in [v2, &mem, pids] {
        mkdir(&format!("{parent}/ringmcp-sbx.900001.0"));
        f.tree.put(&format!("{parent}/ringmcp-sbx.900001.0/cgroup.procs"), "4242\n");
    }
    // A dead host's v1-only sandbox: killed through the freezer.
    for parent in [freezer, &mem] {
        mkdir(&format!("{parent}/ringmcp-sbx.900002.5"));
        f.tree.put(&format!("{parent}/ringmcp-sbx.900002.5/cgroup.procs"), "4343\n");
    }
    // Left alone: a live host's, ours, and names that are not sandbox names.
    let keep = [
        format!("{v2}/ringmcp-sbx.900003.0"),
        format!("{v2}/ringmcp-sbx.{me}.999999"),
        format!("{v2}/not-ours"),
        format!("{v2}/ringmcp-sbx.x.1"),
    ];
    for k in &keep {
        mkdir(k);
    }

    assert_eq!(remove_stale(&f.layout), 5);
    assert_eq!(f.fs.killed(), vec![4343], "4242 went by cgroup.kill");
    assert_eq!(f.fs.writes_to("cgroup.kill").len(), 1);
    let freezer_writes: Vec<String> =
        f.fs.writes_to("freezer.state").into_iter().map(|(_, v)| v).collect();
    assert_eq!(freezer_writes, ["FROZEN", "THAWED"]);
    for parent in [v2, &mem, pids, freezer] {
        let left: BTreeSet<String> =
            subdirs(&f.tree.path(parent)).iter().map(|p| f.fs.rel(p)).collect();
        let expected: BTreeSet<String> =
            keep.iter().filter(|k| k.starts_with(parent)).cloned().collect();
        assert_eq!(left, expected);
    }
}
