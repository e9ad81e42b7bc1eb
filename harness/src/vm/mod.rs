//! `wbspec vm`: run the harness in a QEMU guest on another kernel
//! (docs/vm.md).
//!
//! `vm (--kernel IMAGE [--fuse-module KO] | --debian 6.1|6.12) [--mem MIB]
//!  [--cpus N] [--timeout S] [--keep DIR] [--tcg] -- (conform|run) ARGS...`
//!
//! The host builds an initramfs ([`initramfs`]) from this build's own
//! binaries (`wbspec-harness`, `fuse-recorder`, the guest init
//! `wbspec-vm-init`), the helpers they run (fusermount3, umount) and the
//! libraries they link, boots the kernel with QEMU ([`qemu`]; KVM when it
//! works, TCG otherwise, and says which), and the guest runs
//! `wbspec-harness ARGS...`: `conform` there judges each trace against
//! the model state the guest's kernel stands for (checks/facts/
//! kernels.toml, `[[release]]`). The guest's output, traces and exit
//! status come back over a serial channel.
//!
//! Exit status: the guest command's (conform's codes, docs/conformance.md
//! §4) when the guest finished and its kernel reported no oops, BUG,
//! warning or panic; 1 when it did, when the guest hung (killed at the
//! timeout) or ended without a result; 2 for a usage or input error (a
//! bad image, a missing build); 77 when nothing could be run (no QEMU).
pub mod initramfs;
pub mod qemu;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub const USAGE: &str = "usage: wbspec vm (--kernel IMAGE [--fuse-module KO] | --debian 6.1|6.12) [--mem MIB] [--cpus N] [--timeout S] [--keep DIR] [--tcg] [--append ARGS] [--verbose] -- (conform|run) [ARGS...]";

/// Series `--debian` takes, with what `.ci/fetch-kernels` caches.
pub const DEBIAN_SERIES: &[&str] = &["6.1", "6.12"];

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Image {
    File {
        kernel: PathBuf,
        module: Option<PathBuf>,
    },
    Debian(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Opts {
    pub image: Image,
    pub mem_mib: u32,
    pub cpus: u32,
    pub timeout: Duration,
    pub keep: Option<PathBuf>,
    pub tcg_only: bool,
    pub verbose: bool,
    /// More kernel command-line arguments (after wbspec's own, so they
    /// win: `--append "panic=0"` makes a panic hang instead of ending).
    pub append: String,
    /// The guest command: `conform ...` or `run ...`.
    pub command: Vec<String>,
}

fn num(opt: &str, v: Option<&String>, lo: u64, hi: u64) -> Result<u64, String> {
    let v = v.ok_or(format!("{opt} needs a number {lo}..={hi}"))?;
    match v.parse::<u64>() {
        Ok(n) if (lo..=hi).contains(&n) => Ok(n),
        _ => Err(format!("{opt} {v:?} is not a number {lo}..={hi}")),
    }
}

/// Parse `vm`'s arguments; `Err` is a usage error (one line, exit 2).
pub fn parse_args(args: &[String]) -> Result<Opts, String> {
    let mut kernel = None;
    let mut module = None;
    let mut debian = None;
    let mut o = Opts {
        image: Image::Debian(String::new()),
        mem_mib: 1024,
        cpus: 2,
        timeout: Duration::from_secs(600),
        keep: None,
        tcg_only: false,
        verbose: false,
        append: String::new(),
        command: vec![],
    };
    let mut it = args.iter();
    let mut seen: Vec<&str> = vec![];
    while let Some(a) = it.next() {
        if a.starts_with("--") && a != "--" && !matches!(a.as_str(), "--tcg" | "--verbose") {
            if seen.contains(&a.as_str()) {
                return Err(format!("{a} is given twice"));
            }
            seen.push(a);
        }
        match a.as_str() {
            "--kernel" => kernel = Some(PathBuf::from(it.next().ok_or("--kernel needs IMAGE")?)),
            "--fuse-module" => {
                module = Some(PathBuf::from(it.next().ok_or("--fuse-module needs KO")?))
            }
            "--debian" => {
                let s = it.next().ok_or("--debian needs 6.1 or 6.12")?;
                if !DEBIAN_SERIES.contains(&s.as_str()) {
                    return Err(format!("--debian {s:?}: only 6.1 and 6.12 are known"));
                }
                debian = Some(s.clone());
            }
            "--mem" => o.mem_mib = num("--mem", it.next(), 256, 65536)? as u32,
            "--cpus" => o.cpus = num("--cpus", it.next(), 1, 64)? as u32,
            "--timeout" => {
                o.timeout = Duration::from_secs(num("--timeout", it.next(), 10, 86_400)?)
            }
            "--keep" => o.keep = Some(PathBuf::from(it.next().ok_or("--keep needs DIR")?)),
            "--tcg" => o.tcg_only = true,
            "--append" => {
                let a = it.next().ok_or("--append needs kernel arguments")?;
                if a.len() > 1024 || a.chars().any(|c| c.is_control()) {
                    return Err("--append: at most 1024 characters, no control characters".into());
                }
                o.append = a.clone();
            }
            "--verbose" | "-v" => o.verbose = true,
            "--" => {
                o.command = it.cloned().collect();
                break;
            }
            "-h" | "--help" => return Err(USAGE.trim_start_matches("usage: ").into()),
            s => {
                return Err(format!(
                    "unknown option {s} (the guest command goes after --)"
                ))
            }
        }
    }
    o.image = match (kernel, debian) {
        (Some(_), Some(_)) => return Err("--kernel and --debian exclude each other".into()),
        (Some(k), None) => Image::File { kernel: k, module },
        (None, Some(d)) if module.is_none() => Image::Debian(d),
        (None, Some(_)) => return Err("--fuse-module goes with --kernel".into()),
        (None, None) => return Err("say which kernel: --kernel IMAGE or --debian 6.1|6.12".into()),
    };
    match o.command.first().map(String::as_str) {
        Some("conform") => {
            for a in &o.command[1..] {
                if matches!(a.as_str(), "--trace" | "--keep-traces") {
                    return Err(format!(
                        "conform {a} is the host's business: the guest's traces come back with --keep DIR; check a recorded trace with `wbspec conform --trace` on the host"
                    ));
                }
            }
            // checked here, not by the guest after a boot (whose message
            // would stay on its console)
            match crate::conform::parse_args(&o.command[1..]) {
                Err(e) => return Err(format!("conform: {e}")),
                Ok(crate::conform::Parsed::Help) => {
                    return Err("conform --help: ask the host (`wbspec conform --help`)".into())
                }
                Ok(crate::conform::Parsed::Run(_)) => {}
            }
        }
        Some("run") => {
            let mut it = o.command[1..].iter();
            while let Some(a) = it.next() {
                match a.as_str() {
                    "--keep-traces" | "--json" => {
                        return Err(format!(
                            "run {a} is the host's business: the guest's traces and report come back with --keep DIR"
                        ))
                    }
                    // as `wbspec-harness run` takes them (main.rs)
                    "--hold-timeout-ms" | "--deadline-ms" => {
                        num(&format!("run {a}"), it.next(), 1, 3_600_000)?;
                    }
                    s if s.starts_with('-') => return Err(format!("run: unknown option {s}")),
                    s => {
                        let known = crate::scenarios::all()
                            .iter()
                            .chain(crate::scenarios::selftests().iter())
                            .any(|x| x.name == s);
                        if !known {
                            return Err(format!(
                                "run: unknown scenario {s} (see `wbspec-harness list`)"
                            ));
                        }
                    }
                }
            }
        }
        Some(c) => return Err(format!("the guest command is conform or run, not {c:?}")),
        None => {
            return Err(
                "no guest command: add -- conform [SCENARIO...] or -- run [SCENARIO...]".into(),
            )
        }
    }
    if let Some(k) = &o.keep {
        // a dangling symbolic link exists too
        if k.symlink_metadata().is_ok() {
            return Err(format!(
                "--keep {}: exists (give a new directory)",
                k.display()
            ));
        }
        if k.file_name().is_none() {
            return Err(format!("--keep {:?}: not a directory name", k.display()));
        }
        // checked now, not after a boot of minutes
        let parent = k
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        if !parent.is_dir() {
            return Err(format!(
                "--keep {}: {} is not a directory",
                k.display(),
                parent.display()
            ));
        }
    }
    Ok(o)
}

/// Where `.ci/fetch-kernels` caches Debian's kernels: $WBSPEC_CACHE, or
/// /var/cache/wbspec for root, or ~/.cache/wbspec.
pub fn cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("WBSPEC_CACHE").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    if crate::sys::is_root() {
        return PathBuf::from("/var/cache/wbspec");
    }
    std::env::var_os("HOME")
        .map(|h| PathBuf::from(h).join(".cache/wbspec"))
        .unwrap_or_else(|| PathBuf::from("/var/cache/wbspec"))
}

/// A kernel to boot: its image, its FUSE module if it builds FUSE as one,
/// and, for a cached Debian kernel, its release string.
struct Kernel {
    image: PathBuf,
    module: Option<PathBuf>,
    what: String,
}

fn resolve(image: &Image) -> Result<Kernel, String> {
    match image {
        Image::File { kernel, module } => {
            if !qemu::is_bzimage(kernel)? {
                return Err(format!(
                    "{}: not an x86 bzImage kernel (no HdrS header at 0x202)",
                    kernel.display()
                ));
            }
            if let Some(m) = module {
                let head = std::fs::read(m).map_err(|e| format!("{}: {e}", m.display()))?;
                if !head.starts_with(b"\x7fELF") {
                    return Err(format!("{}: not a kernel module (not ELF)", m.display()));
                }
            }
            Ok(Kernel {
                image: kernel.clone(),
                module: module.clone(),
                what: kernel.display().to_string(),
            })
        }
        Image::Debian(series) => {
            let d = cache_dir().join(format!("debian-{series}"));
            let image = d.join("vmlinuz");
            if !image.is_file() {
                return Err(format!(
                    "no cached Debian {series} kernel in {} (run .ci/fetch-kernels, or bash .ci/setup)",
                    d.display()
                ));
            }
            if !qemu::is_bzimage(&image)? {
                return Err(format!("{}: not an x86 bzImage kernel", image.display()));
            }
            let module = Some(d.join("fuse.ko")).filter(|m| m.is_file());
            let package = std::fs::read_to_string(d.join("package")).unwrap_or_default();
            Ok(Kernel {
                image,
                module,
                what: format!("Debian {}", package.trim()),
            })
        }
    }
}

/// The directory of this program's sibling binaries.
fn bin_dir() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    Ok(exe.parent().unwrap_or(Path::new(".")).to_path_buf())
}

fn build_initramfs(k: &Kernel, command: &[String]) -> Result<Vec<u8>, String> {
    let bins = bin_dir()?;
    let mut t = initramfs::Tree::default();
    for (name, guest) in [
        ("wbspec-vm-init", "/init"),
        ("wbspec-harness", "/bin/wbspec-harness"),
        ("fuse-recorder", "/bin/fuse-recorder"),
    ] {
        let p = bins.join(name);
        if !p.is_file() {
            return Err(format!(
                "{} not found (build every binary: cargo build --release)",
                p.display()
            ));
        }
        t.executable(&p, guest)?;
    }
    // The helpers the harness runs to unmount (mount.rs); optional: the
    // harness falls back to umount2 through the registry (interrupt.rs).
    for helper in ["fusermount3", "umount"] {
        if let Some(p) = initramfs::which(helper) {
            t.executable(&p, &format!("/bin/{helper}"))?;
        }
    }
    if let Some(m) = &k.module {
        t.copy(m, "/lib/modules/fuse.ko", 0o644)?;
    }
    for d in ["/dev", "/proc", "/sys", "/tmp", "/out", "/etc", "/root"] {
        t.dir(d);
    }
    let mut argv = vec![];
    for a in command {
        argv.extend_from_slice(a.as_bytes());
        argv.push(0);
    }
    if command.first().map(String::as_str) == Some("conform") {
        argv.extend_from_slice(b"--keep-traces\0/out/traces\0");
    } else {
        argv.extend_from_slice(b"--keep-traces\0/out/traces\0--json\0/out/run.json\0");
    }
    t.file("/wbspec/argv", argv, 0o644);
    Ok(t.cpio())
}

/// A fresh private directory for the initramfs, console and channel,
/// registered with the interrupt registry (removed on SIGINT/SIGTERM).
fn work_dir() -> Result<(PathBuf, usize), String> {
    for i in 0..100 {
        let d = std::env::temp_dir().join(format!("wbspec-vm-{}-{i}", std::process::id()));
        match crate::interrupt::make_dir(&d, d.join("no-mount")) {
            Ok(id) => return Ok((d, id)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(format!("mkdir {}: {e}", d.display())),
        }
    }
    Err("no temp dir".into())
}

/// Publish the guest's files as directory `keep`: written into a
/// temporary sibling, then renamed (all or nothing) with
/// RENAME_NOREPLACE, so a directory that appeared at `keep` while the
/// guest ran is never replaced (rename(2) alone replaces an empty one).
/// The host's console is written last: a guest file of that name does
/// not stand in for it.
fn keep_files(keep: &Path, files: &[(String, Vec<u8>)], console: &[u8]) -> Result<(), String> {
    let parent = keep
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = keep
        .file_name()
        .ok_or_else(|| format!("--keep {}: not a directory name", keep.display()))?
        .to_string_lossy();
    let tmp = parent.join(format!(".{name}.wbspec-{}.tmp", std::process::id()));
    // only a directory this call created is removed on an error
    if let Err(e) = std::fs::create_dir(&tmp) {
        return Err(format!("--keep {}: {}: {e}", keep.display(), tmp.display()));
    }
    let r = (|| -> std::io::Result<()> {
        for (p, data) in files {
            let f = tmp.join(p);
            if let Some(d) = f.parent() {
                std::fs::create_dir_all(d)?;
            }
            std::fs::write(&f, data)?;
        }
        std::fs::write(tmp.join("console.log"), console)?;
        rename_noreplace(&tmp, keep)
    })();
    if let Err(e) = r {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(format!("--keep {}: {e}", keep.display()));
    }
    Ok(())
}

/// rename(2) that fails with EEXIST when `to` exists (renameat2
/// RENAME_NOREPLACE).
pub(crate) fn rename_noreplace(from: &Path, to: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| {
        std::ffi::CString::new(p.as_os_str().as_bytes())
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))
    };
    let (f, t) = (c(from)?, c(to)?);
    let r = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            f.as_ptr(),
            libc::AT_FDCWD,
            t.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// `vm` for the command line: returns the exit status.
pub fn vm_main(args: &[String]) -> i32 {
    let o = match parse_args(args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("wbspec vm: {e}");
            return 2;
        }
    };
    crate::interrupt::install();
    let code = run(&o);
    crate::interrupt::finish(code)
}

fn run(o: &Opts) -> i32 {
    let Some(qemu) = initramfs::which("qemu-system-x86_64") else {
        eprintln!("wbspec vm: qemu-system-x86_64 not found (Debian package qemu-system-x86); nothing was run");
        return crate::conform::exit::SKIPPED;
    };
    let k = match resolve(&o.image) {
        Ok(k) => k,
        Err(e) => {
            eprintln!("wbspec vm: {e}");
            return 2;
        }
    };
    let cpio = match build_initramfs(&k, &o.command) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("wbspec vm: {e}");
            return 2;
        }
    };
    let (dir, reg) = match work_dir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("wbspec vm: {e}");
            return 2;
        }
    };
    let code = boot_and_report(o, &k, &qemu, &cpio, &dir, reg);
    let _ = std::fs::remove_dir_all(&dir);
    crate::interrupt::unregister(reg);
    code
}

fn boot_and_report(o: &Opts, k: &Kernel, qemu: &Path, cpio: &[u8], dir: &Path, reg: usize) -> i32 {
    let initrd = dir.join("initramfs.cpio");
    if let Err(e) = std::fs::write(&initrd, cpio) {
        eprintln!("wbspec vm: {}: {e}", initrd.display());
        return 2;
    }
    let kvm_works = !o.tcg_only
        && std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/kvm")
            .is_ok();
    let t0 = Instant::now();
    let mut accel = if kvm_works { "kvm" } else { "tcg" }.to_string();
    let verbose = o.verbose;
    let mut on_line = |l: &str| {
        // the init's and the harness's lines (progress); the kernel's
        // messages only with --verbose
        if verbose || l.starts_with("wbspec") || l.starts_with("Scenario ") {
            // the guest's bytes, not escape sequences for this terminal
            let clean: String = l
                .chars()
                .map(|c| if c.is_control() && c != '\t' { '?' } else { c })
                .collect();
            eprintln!("guest: {clean}");
        }
    };
    eprintln!(
        "wbspec vm: booting {} ({} MiB, {} cpus, {accel}), timeout {} s",
        k.what,
        o.mem_mib,
        o.cpus,
        o.timeout.as_secs()
    );
    let mut end = qemu::boot(qemu::Boot {
        qemu,
        kernel: &k.image,
        initrd: &initrd,
        mem_mib: o.mem_mib,
        cpus: o.cpus,
        kvm: kvm_works,
        append: &o.append,
        timeout: o.timeout,
        dir,
        reg,
        on_line: &mut on_line,
    });
    if let Ok(qemu::End::KvmFailed(why)) = &end {
        accel = format!("tcg (KVM failed: {why})");
        eprintln!("wbspec vm: KVM failed ({why}); booting again under TCG");
        let _ = std::fs::remove_file(qemu::console_path(dir));
        let _ = std::fs::remove_file(dir.join("channel.bin"));
        end = qemu::boot(qemu::Boot {
            qemu,
            kernel: &k.image,
            initrd: &initrd,
            mem_mib: o.mem_mib,
            cpus: o.cpus,
            kvm: false,
            append: &o.append,
            timeout: o.timeout,
            dir,
            reg,
            on_line: &mut on_line,
        });
    }
    let secs = t0.elapsed().as_secs();
    let console = std::fs::read(qemu::console_path(dir)).unwrap_or_default();
    let console_text = String::from_utf8_lossy(&console).into_owned();
    let trouble = qemu::kernel_trouble(&console_text, 40);
    let tail = |n: usize| {
        let l: Vec<&str> = console_text.lines().collect();
        l[l.len().saturating_sub(n)..].join("\n")
    };
    let end = match end {
        Ok(e) => e,
        Err(e) => {
            eprintln!("wbspec vm: {e}");
            return 2;
        }
    };
    let (files, status) = match end {
        qemu::End::Done { files, status } => (files, status),
        qemu::End::Hung => {
            eprintln!("{}", tail(30));
            println!(
                "vm: guest did not finish within {} s and was killed ({accel}); console tail above",
                o.timeout.as_secs()
            );
            return 1;
        }
        qemu::End::NoResult { qemu_status } => {
            match &trouble {
                Some((first, ex)) => {
                    eprintln!("{ex}");
                    println!("vm: guest kernel failed: {first} (no result; qemu {qemu_status}; excerpt above)");
                }
                None => {
                    eprintln!("{}", tail(30));
                    println!(
                        "vm: guest ended without a result (boot failure? qemu {qemu_status}); console tail above"
                    );
                }
            }
            return 1;
        }
        qemu::End::KvmFailed(why) => {
            println!("vm: KVM failed twice: {why}");
            return 1;
        }
    };
    let text = |name: &str| {
        files
            .iter()
            .find(|(p, _)| p == name)
            .map(|(_, d)| String::from_utf8_lossy(d).into_owned())
            .unwrap_or_default()
    };
    print!("{}", text("stdout"));
    let release = text("kernel-release").trim().to_string();
    let state = crate::runner::kernel_state(&release).unwrap_or("no model state");
    if let Some(keep) = &o.keep {
        if let Err(e) = keep_files(keep, &files, &console) {
            eprintln!("wbspec vm: {e}");
            return 2;
        }
    }
    if let Some((first, ex)) = &trouble {
        eprintln!("{ex}");
        println!(
            "vm: kernel {release} ({state}) reported: {first} (excerpt above); guest command exited {status}"
        );
        return 1;
    }
    println!("vm: kernel {release} ({state}), {accel}, {secs} s: guest command exited {status}");
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn options_parse_and_bad_ones_are_refused() {
        let o = parse_args(&args("--debian 6.12 --mem 512 -- conform b_ftrunc")).unwrap();
        assert_eq!(o.image, Image::Debian("6.12".into()));
        assert_eq!(o.mem_mib, 512);
        assert_eq!(o.command, args("conform b_ftrunc"));
        for good in [
            "--debian 6.1 -- conform",
            "--debian 6.1 -- conform --random 5 --seed 3",
            "--debian 6.1 -- conform b_ftrunc h_crop --allow-not-modelled",
            "--debian 6.1 -- run a_fsync --deadline-ms 5000",
        ] {
            parse_args(&args(good)).unwrap_or_else(|e| panic!("{good}: {e}"));
        }
        for bad in [
            "--debian 6.6 -- conform",
            "--debian 6.12",
            "--debian 6.12 -- sh",
            "--kernel a --debian 6.1 -- conform",
            "-- conform",
            "--debian 6.12 --mem 1 -- conform",
            "--debian 6.12 --cpus 0 -- conform",
            "--debian 6.12 --timeout 5 -- conform",
            "--debian 6.12 --fuse-module x -- conform",
            "--debian 6.12 --debian 6.1 -- conform",
            "--debian 6.12 -- conform --trace t.jsonl",
            "--debian 6.12 -- run --json x",
            "--debian 6.12 extra -- conform",
            // the guest command's own usage errors, found before a boot
            "--debian 6.12 -- conform nosuchscenario",
            "--debian 6.12 -- conform --random 1 --seed x",
            "--debian 6.12 -- conform --seed 3",
            "--debian 6.12 -- conform --help",
            "--debian 6.12 -- conform --json x",
            "--debian 6.12 -- run nosuchscenario",
            "--debian 6.12 -- run --trace t",
            "--debian 6.12 -- run --deadline-ms 0",
            "--debian 6.12 -- run --hold-timeout-ms",
        ] {
            assert!(parse_args(&args(bad)).is_err(), "{bad}");
        }
    }
    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("wbspec-vm-test-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir(&d).unwrap();
        d
    }

    #[test]
    fn keep_never_replaces_what_appeared_and_removes_only_its_own() {
        let d = scratch("keep");
        let files = vec![("stdout".to_string(), b"out".to_vec())];
        // a fresh name: published whole, the host's console included
        let k = d.join("new");
        keep_files(&k, &files, b"console").unwrap();
        assert_eq!(std::fs::read(k.join("stdout")).unwrap(), b"out");
        assert_eq!(std::fs::read(k.join("console.log")).unwrap(), b"console");
        // a guest file named console.log does not replace the host's
        let k2 = d.join("new2");
        let forged = vec![("console.log".to_string(), b"forged".to_vec())];
        keep_files(&k2, &forged, b"console").unwrap();
        assert_eq!(std::fs::read(k2.join("console.log")).unwrap(), b"console");
        // an empty directory that appeared at --keep while the guest ran
        // is not replaced (rename(2) alone would)
        let e = d.join("empty");
        std::fs::create_dir(&e).unwrap();
        assert!(keep_files(&e, &files, b"c").is_err());
        assert_eq!(std::fs::read_dir(&e).unwrap().count(), 0);
        // a directory already at the temporary name is someone else's
        let k3 = d.join("k3");
        let tmp = d.join(format!(".k3.wbspec-{}.tmp", std::process::id()));
        std::fs::create_dir(&tmp).unwrap();
        std::fs::write(tmp.join("theirs"), b"x").unwrap();
        assert!(keep_files(&k3, &files, b"c").is_err());
        assert!(
            tmp.join("theirs").is_file(),
            "removed a directory it did not make"
        );
        assert!(!k3.exists());
        std::fs::remove_dir_all(&tmp).unwrap();
        // nothing else was left: the two published dirs, the empty one
        let mut left: Vec<String> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["empty", "new", "new2"]);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn keep_names_that_cannot_be_published_are_refused_before_a_boot() {
        let d = scratch("keepargs");
        let dangling = d.join("dangling");
        std::os::unix::fs::symlink(d.join("nowhere"), &dangling).unwrap();
        let bad_keeps = [
            String::new(),
            d.join("no/such/parent").display().to_string(),
            dangling.display().to_string(),
            d.join("..").display().to_string(),
            "/".to_string(),
        ];
        for k in bad_keeps {
            let a: Vec<String> = ["--debian", "6.12", "--keep", &k, "--", "conform"]
                .iter()
                .map(|s| s.to_string())
                .collect();
            let e = parse_args(&a).expect_err(&k);
            assert!(e.starts_with("--keep"), "{k}: {e}");
        }
        std::fs::remove_dir_all(&d).unwrap();
    }
}
