//! Booting the guest with QEMU and reading what it says: the console
//! (ttyS0: kernel messages, the init's and the harness's stderr) and the
//! result channel (ttyS1, written by harness/src/bin/wbspec-vm-init.rs).
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How a guest run ended.
#[derive(Debug)]
pub enum End {
    /// The guest powered off after the harness ran (its files and status).
    Done {
        files: Vec<(String, Vec<u8>)>,
        status: i32,
    },
    /// QEMU ended without a complete result (boot failure, panic, ...).
    NoResult { qemu_status: String },
    /// Killed at the timeout.
    Hung,
    /// KVM failed inside the guest (retry with TCG).
    KvmFailed(String),
}

pub struct Boot<'a> {
    pub qemu: &'a Path,
    pub kernel: &'a Path,
    pub initrd: &'a Path,
    pub mem_mib: u32,
    pub cpus: u32,
    pub kvm: bool,
    /// More kernel arguments, after wbspec's.
    pub append: &'a str,
    pub timeout: Duration,
    /// Where the console and the channel are written (a private temp dir).
    pub dir: &'a Path,
    /// Its entry in the interrupt registry (the temp dir's): QEMU is
    /// registered there, so SIGINT/SIGTERM kill it by PID.
    pub reg: usize,
    /// Called with each new console line while the guest runs.
    pub on_line: &'a mut dyn FnMut(&str),
}

pub fn console_path(dir: &Path) -> PathBuf {
    dir.join("console.log")
}

/// Boot, wait for the guest to power off (or the timeout), parse the channel.
pub fn boot(b: Boot) -> Result<End, String> {
    let console = console_path(b.dir);
    let chan = b.dir.join("channel.bin");
    let qerr = b.dir.join("qemu.stderr");
    let mut cmd = Command::new(b.qemu);
    cmd.args(["-nodefaults", "-no-user-config", "-nographic", "-no-reboot"])
        .args(["-machine", "pc"])
        .args(["-m", &b.mem_mib.to_string()])
        .args(["-smp", &b.cpus.to_string()])
        .arg("-kernel")
        .arg(b.kernel)
        .arg("-initrd")
        .arg(b.initrd)
        .arg("-append")
        .arg(format!("console=ttyS0 panic=-1 loglevel=4 {}", b.append))
        .arg("-chardev")
        .arg(format!("file,id=con,path={}", qemu_opt(&console)))
        .args(["-serial", "chardev:con"])
        .arg("-chardev")
        .arg(format!("file,id=chan,path={}", qemu_opt(&chan)))
        .args(["-serial", "chardev:chan"])
        .args(["-monitor", "none"]);
    if b.kvm {
        cmd.args(["-accel", "kvm", "-cpu", "host"]);
    } else {
        cmd.args(["-accel", "tcg", "-cpu", "max"]);
    }
    let errf = std::fs::File::create(&qerr).map_err(|e| format!("{}: {e}", qerr.display()))?;
    cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(errf);
    let mut child = crate::interrupt::spawn(b.reg, &mut cmd)
        .map_err(|e| format!("{}: {e}", b.qemu.display()))?;
    let deadline = Instant::now() + b.timeout;
    let mut seen = 0u64;
    let mut partial = String::new();
    let end = loop {
        // relay new console lines
        if let Ok(mut f) = std::fs::File::open(&console) {
            if f.seek(SeekFrom::Start(seen)).is_ok() {
                let mut buf = vec![];
                if let Ok(n) = f.read_to_end(&mut buf) {
                    seen += n as u64;
                    partial.push_str(&String::from_utf8_lossy(&buf));
                    while let Some(i) = partial.find('\n') {
                        let line: String = partial.drain(..=i).collect();
                        (b.on_line)(line.trim_end_matches(['\r', '\n']));
                    }
                }
            }
        }
        match child.try_wait() {
            Ok(Some(st)) => break Ok(st.to_string()),
            Ok(None) => {}
            Err(e) => break Err(format!("wait for qemu: {e}")),
        }
        let err = std::fs::read_to_string(&qerr).unwrap_or_default();
        if b.kvm && err.contains("KVM internal error") {
            let _ = child.kill();
            let _ = child.wait();
            crate::interrupt::set(b.reg, None, None);
            return Ok(End::KvmFailed(first_line(&err)));
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            crate::interrupt::set(b.reg, None, None);
            return Ok(End::Hung);
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    crate::interrupt::set(b.reg, None, None);
    let qemu_status = end?;
    if !partial.is_empty() {
        (b.on_line)(partial.trim_end_matches(['\r', '\n']));
    }
    let err = std::fs::read_to_string(&qerr).unwrap_or_default();
    let data = std::fs::read(&chan).unwrap_or_default();
    let console_text = std::fs::read_to_string(&console).unwrap_or_default();
    Ok(match parse_channel(&data) {
        Ok(Some((files, status))) => End::Done { files, status },
        // Under KVM, an end without a result that the guest kernel did not
        // explain (no oops or panic on the console) is KVM's: QEMU aborts
        // ("failed to set MSR ...") or stops ("KVM internal error") in a
        // nested VM. The caller boots again under TCG.
        _ if b.kvm && kernel_trouble(&console_text, 1).is_none() => {
            End::KvmFailed(if err.trim().is_empty() {
                format!("qemu {qemu_status}")
            } else {
                first_line(&err)
            })
        }
        _ => End::NoResult {
            qemu_status: if err.trim().is_empty() {
                qemu_status
            } else {
                format!("{qemu_status}; qemu said: {}", first_line(&err))
            },
        },
    })
}

/// A path as a QEMU option value: a comma separates options there, and a
/// doubled comma stands for one (a $TMPDIR with a comma in it).
fn qemu_opt(p: &Path) -> String {
    p.display().to_string().replace(',', ",,")
}

fn first_line(s: &str) -> String {
    s.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .to_string()
}

/// Parse the channel: `F <path> <len>\n<bytes>` records and a final
/// `X <status>\n`. `Ok(None)`: the channel ended before `X` (the guest
/// did not finish). `Err`: malformed.
#[allow(clippy::type_complexity)]
pub fn parse_channel(mut data: &[u8]) -> Result<Option<(Vec<(String, Vec<u8>)>, i32)>, String> {
    let mut files = vec![];
    loop {
        let Some(nl) = data.iter().position(|&c| c == b'\n') else {
            return Ok(None);
        };
        let line = std::str::from_utf8(&data[..nl]).map_err(|_| "channel: not UTF-8")?;
        data = &data[nl + 1..];
        let mut w = line.split(' ');
        match (w.next(), w.next(), w.next(), w.next()) {
            (Some("F"), Some(path), Some(len), None) => {
                let len: usize = len
                    .parse()
                    .map_err(|_| format!("channel: bad length {len}"))?;
                if !safe_relative(path) {
                    return Err(format!("channel: unsafe path {path:?}"));
                }
                if data.len() < len {
                    return Ok(None);
                }
                files.push((path.to_string(), data[..len].to_vec()));
                data = &data[len..];
            }
            (Some("X"), Some(code), None, None) => {
                // an exit status (0..=255): a larger one would wrap
                // in the host's own exit status (256 would read as 0)
                let code = code
                    .parse::<u8>()
                    .map_err(|_| format!("channel: bad status {code}"))?;
                return Ok(Some((files, code.into())));
            }
            _ => return Err(format!("channel: unexpected line {line:?}")),
        }
    }
}

/// A relative path of plain components (no `..`, no absolute path).
pub fn safe_relative(p: &str) -> bool {
    !p.is_empty()
        && p.split('/')
            .all(|c| !c.is_empty() && c != "." && c != ".." && !c.contains('\0'))
}

/// What the console says went wrong in the kernel: the first line of an
/// oops, BUG, warning or panic and the lines after it (up to `n`).
pub fn kernel_trouble(console: &str, n: usize) -> Option<(String, String)> {
    const MARKS: &[&str] = &[
        "Kernel panic - not syncing",
        "BUG:",
        "Oops:",
        "kernel BUG at",
        "general protection fault",
        "WARNING: CPU:",
        "watchdog: BUG: soft lockup",
        "INFO: task ",
    ];
    let lines: Vec<&str> = console.lines().collect();
    let i = lines
        .iter()
        .position(|l| MARKS.iter().any(|m| l.contains(m)))?;
    let excerpt = lines[i..lines.len().min(i + n)].join("\n");
    // the first line from its mark on: without the printk timestamp
    // ("[    2.519798] "), and without what the console had on that line
    // before it (firmware output and terminal escapes, as in "Probing
    // EDD (edd=off to disable)... ok[?7l[2J[    2.555848] Oops: ...")
    let at = MARKS
        .iter()
        .filter_map(|m| lines[i].find(m))
        .min()
        .expect("the line has a mark");
    Some((lines[i][at..].trim().to_string(), excerpt))
}

/// Whether `path` is a bzImage (the "HdrS" magic of the x86 boot protocol
/// at 0x202).
pub fn is_bzimage(path: &Path) -> Result<bool, String> {
    let mut f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut hdr = [0u8; 0x206];
    match f.read_exact(&mut hdr) {
        Ok(()) => Ok(&hdr[0x202..0x206] == b"HdrS"),
        Err(_) => Ok(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_channel_parses_files_and_the_status() {
        let data = b"F a/b 3\nxyzF c 0\nX 3\n";
        let (files, st) = parse_channel(data).unwrap().unwrap();
        assert_eq!(st, 3);
        assert_eq!(
            files,
            vec![("a/b".into(), b"xyz".to_vec()), ("c".into(), vec![])]
        );
        // cut anywhere before X: not finished
        for cut in 0..data.len() - 1 {
            assert!(parse_channel(&data[..cut]).unwrap().is_none(), "cut {cut}");
        }
        assert!(parse_channel(b"F ../x 1\nz").is_err());
        assert!(parse_channel(b"F /etc/x 1\nz").is_err());
        assert!(parse_channel(b"hello\n").is_err());
        assert!(parse_channel(b"F a x\n").is_err());
        // a status the host's own exit status cannot carry
        for bad in ["256", "-1", "4294967296", "x"] {
            assert!(
                parse_channel(format!("X {bad}\n").as_bytes()).is_err(),
                "{bad}"
            );
        }
        assert_eq!(parse_channel(b"X 255\n").unwrap().unwrap().1, 255);
    }

    #[test]
    fn commas_in_paths_are_doubled_for_qemu() {
        assert_eq!(qemu_opt(Path::new("/tmp/a,b/c")), "/tmp/a,,b/c");
        assert_eq!(qemu_opt(Path::new("/tmp/x")), "/tmp/x");
    }

    #[test]
    fn oopses_and_panics_are_found_with_their_lines() {
        let c = "boot\n[ 1.0] kernel BUG at fs/fuse/file.c:1234!\n[ 1.0] invalid opcode\nRIP: x\nmore\n";
        let (first, ex) = kernel_trouble(c, 3).unwrap();
        assert_eq!(first, "kernel BUG at fs/fuse/file.c:1234!");
        assert_eq!(ex.lines().count(), 3);
        assert!(kernel_trouble("all fine\nScenario b_x pass\n", 5).is_none());
        // what the console had before the mark on its line is not kept
        // (a 6.12 guest under TCG, 3 Dec 2026)
        let c = "Probing EDD (edd=off to disable)... ok\u{1b}[?7l\u{1b}[2J[    2.555848] Oops: int3: 0000 [#1] PREEMPT SMP NOPTI\n";
        assert_eq!(
            kernel_trouble(c, 1).unwrap().0,
            "Oops: int3: 0000 [#1] PREEMPT SMP NOPTI"
        );
    }
}
