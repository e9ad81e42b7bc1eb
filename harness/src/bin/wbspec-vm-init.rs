//! PID 1 of a `wbspec vm` guest (harness/src/vm/, docs/vm.md).
//!
//! Mounts /dev, /proc, /sys, /tmp and fusectl, loads /lib/modules/fuse.ko
//! when the initramfs carries one (kernels that build FUSE as a module),
//! runs `/bin/wbspec-harness` with the NUL-separated arguments of
//! /wbspec/argv, then sends every file under /out to the host over the
//! second serial port and powers off.
//!
//! The channel (ttyS1, raw mode) carries records the host parses
//! (vm::channel): `F <path> <len>\n` followed by `len` bytes, and at the
//! end `X <exit status>\n`. A status of 128+N means the harness died of
//! signal N. Progress and the harness's stderr go to the console (ttyS0).
use std::ffi::CString;
use std::io::Write;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn say(msg: &str) {
    // The console is fd 1/2 of init (the kernel opens /dev/console).
    eprintln!("wbspec-vm-init: {msg}");
}

fn mount(src: &str, target: &str, fstype: &str) {
    let _ = std::fs::create_dir_all(target);
    let (s, t, f) = (
        CString::new(src).unwrap(),
        CString::new(target).unwrap(),
        CString::new(fstype).unwrap(),
    );
    let r = unsafe { libc::mount(s.as_ptr(), t.as_ptr(), f.as_ptr(), 0, std::ptr::null()) };
    if r != 0 {
        say(&format!(
            "mount {fstype} on {target}: {}",
            std::io::Error::last_os_error()
        ));
    }
}

fn load_module(path: &Path) {
    let Ok(f) = std::fs::File::open(path) else {
        return;
    };
    let params = CString::new("").unwrap();
    let r = unsafe { libc::syscall(libc::SYS_finit_module, f.as_raw_fd(), params.as_ptr(), 0) };
    if r != 0 {
        say(&format!(
            "finit_module {}: {}",
            path.display(),
            std::io::Error::last_os_error()
        ));
    } else {
        say(&format!("loaded {}", path.display()));
    }
}

fn power_off() -> ! {
    unsafe {
        libc::sync();
        libc::reboot(libc::RB_POWER_OFF);
    }
    // reboot(2) does not return for PID 1 with CAP_SYS_BOOT; if it did,
    // exiting PID 1 panics the kernel, which ends QEMU too (panic=-1).
    std::process::exit(1)
}

/// Open ttyS1 in raw mode: no newline translation, no echo, no flow control.
fn channel() -> Option<std::fs::File> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/ttyS1")
        .map_err(|e| say(&format!("open /dev/ttyS1: {e}")))
        .ok()?;
    unsafe {
        let mut t: libc::termios = std::mem::zeroed();
        if libc::tcgetattr(f.as_raw_fd(), &mut t) == 0 {
            libc::cfmakeraw(&mut t);
            t.c_cflag &= !libc::CRTSCTS;
            t.c_iflag &= !(libc::IXON | libc::IXOFF);
            libc::tcsetattr(f.as_raw_fd(), libc::TCSANOW, &t);
        }
    }
    Some(f)
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files_under(&p, out);
        } else if p.is_file() {
            out.push(p);
        }
    }
}

fn main() {
    mount("devtmpfs", "/dev", "devtmpfs");
    mount("proc", "/proc", "proc");
    mount("sysfs", "/sys", "sysfs");
    mount("tmpfs", "/tmp", "tmpfs");
    mount("tmpfs", "/out", "tmpfs");
    load_module(Path::new("/lib/modules/fuse.ko"));
    mount("fusectl", "/sys/fs/fuse/connections", "fusectl");
    // fusermount3 -u reads the mount table from /etc/mtab.
    let _ = std::os::unix::fs::symlink("/proc/self/mounts", "/etc/mtab");

    let argv: Vec<String> = std::fs::read("/wbspec/argv")
        .map(|b| {
            b.split(|c| *c == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect()
        })
        .unwrap_or_default();
    let mut uname: libc::utsname = unsafe { std::mem::zeroed() };
    unsafe { libc::uname(&mut uname) };
    let release = unsafe { std::ffi::CStr::from_ptr(uname.release.as_ptr()) }.to_string_lossy();
    say(&format!(
        "kernel {release}; running wbspec-harness {}",
        argv.join(" ")
    ));
    // The guest's own kernel release, for the host's report.
    let _ = std::fs::write("/out/kernel-release", format!("{release}\n"));

    let status = match std::fs::File::create("/out/stdout") {
        Ok(stdout) => Command::new("/bin/wbspec-harness")
            .args(&argv)
            .current_dir("/tmp")
            .env_clear()
            .env("PATH", "/bin")
            .env("TMPDIR", "/tmp")
            .env("HOME", "/tmp")
            // lets a scenario that may oops the kernel run (scenarios_fidelity.rs)
            .env("WBSPEC_VM_GUEST", "1")
            .stdin(Stdio::null())
            .stdout(stdout)
            .status(),
        Err(e) => Err(e),
    };
    let code = match status {
        Ok(s) => {
            use std::os::unix::process::ExitStatusExt;
            s.code().unwrap_or_else(|| 128 + s.signal().unwrap_or(0))
        }
        Err(e) => {
            say(&format!("cannot run /bin/wbspec-harness: {e}"));
            126
        }
    };
    say(&format!("wbspec-harness exited with {code}"));

    if let Some(mut ch) = channel() {
        let mut files = vec![];
        files_under(Path::new("/out"), &mut files);
        for p in files {
            let Ok(data) = std::fs::read(&p) else {
                continue;
            };
            let rel = p.strip_prefix("/out").unwrap_or(&p).display().to_string();
            if rel.contains(char::is_whitespace) {
                say(&format!("not sending {rel}: whitespace in its name"));
                continue;
            }
            let _ = write!(ch, "F {rel} {}\n", data.len());
            let _ = ch.write_all(&data);
        }
        let _ = write!(ch, "X {code}\n");
        let _ = ch.flush();
        unsafe { libc::tcdrain(ch.as_raw_fd()) };
    }
    power_off()
}
