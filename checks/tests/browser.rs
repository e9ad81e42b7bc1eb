//! Drives Stateright's Explorer, served by `wbspec explore`, in Debian's
//! headless Chromium at a counterexample URL, and checks that the
//! rendered page shows the path's steps and the sequence-diagram SVG.
//! Skips (with a line saying so) when Chromium is not installed, unless
//! WBSPEC_REQUIRE_BROWSER=1 (set by .ci/run) makes that a failure;
//! .ci/setup installs it. Every process it starts is killed by its PID.

use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use wbspec::trace;
use wbspec_harness::require::{may_run, rerun_test, BROWSER};

mod common;

/// Stops its child (by PID) and reaps it when dropped, also on panic:
/// SIGTERM first, so `wbspec explore` removes its private directory, then
/// SIGKILL if it has not ended within 5 s.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        unsafe {
            libc::kill(self.0.id() as i32, libc::SIGTERM);
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The browser: `WBSPEC_CHROMIUM` if set, else Debian's.
fn chromium() -> Option<PathBuf> {
    match std::env::var_os("WBSPEC_CHROMIUM") {
        Some(p) => Some(PathBuf::from(p)).filter(|p| p.exists()),
        None => ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
            .iter()
            .map(PathBuf::from)
            .find(|p| p.exists()),
    }
}

/// The browser test leaves nothing in its temporary directory ($TMPDIR):
/// not the Explorer's private directory (it gets SIGTERM, not SIGKILL), not
/// the browser profile, also when the test fails (a browser that cannot
/// be started).
#[test]
fn the_browser_test_leaves_no_temporary_directory() {
    if !may_run(
        BROWSER,
        "the browser cleanup test",
        chromium()
            .is_none()
            .then(|| "chromium is not installed".to_string()),
    ) {
        return;
    }
    let name = "explorer_shows_the_counterexample_in_chromium";
    for (chrome, passes) in [(None, true), (Some("/etc/hostname"), false)] {
        let tmp = common::tmpdir();
        let t = tmp.path().to_str().unwrap();
        let mut env = vec![("TMPDIR", t)];
        env.extend(chrome.map(|c| ("WBSPEC_CHROMIUM", c)));
        let (ok, out) = rerun_test(name, BROWSER, true, &env, false);
        assert_eq!(ok, passes, "{out}");
        let left: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(left.is_empty(), "left in $TMPDIR: {left:?}\n{out}");
    }
}

/// Without Chromium the browser test skips, saying so; with
/// WBSPEC_REQUIRE_BROWSER=1 it fails.
#[test]
fn missing_chromium_skips_or_fails_as_required() {
    let name = "explorer_shows_the_counterexample_in_chromium";
    let none = [("WBSPEC_CHROMIUM", "/nonexistent/chromium")];
    let (ok, out) = rerun_test(name, BROWSER, false, &none, false);
    assert!(ok, "{out}");
    assert!(
        out.contains("skipping the Explorer browser test: chromium is not installed"),
        "{out}"
    );
    let (ok, out) = rerun_test(name, BROWSER, true, &none, false);
    assert!(!ok, "{out}");
    assert!(
        out.contains("the Explorer browser test cannot run: chromium is not installed"),
        "{out}"
    );
}

/// Waits until 127.0.0.1:port accepts connections.
fn wait_listening(port: u16, deadline: Instant) {
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "Explorer never listened");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Runs Chromium headless on `url` and returns the DOM after the page's
/// scripts have fetched the path's states (virtual time runs until the
/// network is idle, then for the budget). Kills Chromium's process group
/// if it takes longer than `limit`.
fn dump_dom(chrome: &Path, url: &str, limit: Duration) -> String {
    // removed when dropped, also when this panics
    let profile = tempfile::Builder::new()
        .prefix("wbspec-chromium-")
        .tempdir()
        .expect("browser profile directory");
    let mut cmd = Command::new(chrome);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--virtual-time-budget=10000",
        "--dump-dom",
    ])
    .arg(format!("--user-data-dir={}", profile.path().display()))
    .arg(url)
    .stdout(Stdio::piped())
    .stderr(Stdio::null())
    // its own process group, so a hung browser and its helpers can be
    // killed together
    .process_group(0);
    let child = cmd.spawn().expect("start chromium");
    let pgid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let out = match rx.recv_timeout(limit) {
        Ok(out) => out.expect("chromium output"),
        Err(_) => {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{pgid}")])
                .status();
            panic!("chromium did not finish within {limit:?}");
        }
    };
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn explorer_shows_the_counterexample_in_chromium() {
    let chrome = chromium();
    let missing = chrome
        .is_none()
        .then(|| "chromium is not installed (bash .ci/setup installs it)".to_string());
    if !may_run(BROWSER, "the Explorer browser test", missing) {
        return;
    }
    let chrome = chrome.expect("checked above");
    let t0 = Instant::now();
    let tf = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../traces/t-fopen-dio-read--b1.json");
    let cat = wbspec::catalogue::load_dir(&common::catalogue_dir()).unwrap();
    let r = trace::replay_file(&tf, &cat.entries).expect("committed trace replays");

    // the Explorer, on a free port, in a directory without ./ui
    let server = Command::new(env!("CARGO_BIN_EXE_wbspec"))
        .args(["explore", "t-fopen-dio-read", "--port", "0", "--trace"])
        .arg(&tf)
        .arg("--catalogue")
        .arg(common::catalogue_dir())
        .current_dir(std::env::temp_dir())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start wbspec explore");
    let mut server = KillOnDrop(server);
    let stdout = server.0.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let url = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("wbspec explore printed no URL")
        .trim()
        .to_string();
    let expect_url = format!("/#/steps/{}", r.trace.encoded);
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with(&expect_url),
        "{url}"
    );
    let port: u16 = url["http://127.0.0.1:".len()..]
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    wait_listening(port, Instant::now() + Duration::from_secs(10));

    let dom = dump_dom(&chrome, &url, Duration::from_secs(30));
    drop(server); // the server is killed before any assertion can fail

    // the path of actions, every step of the trace
    assert!(dom.contains("Path of Actions"), "{dom}");
    for label in &r.trace.counterexample().labels {
        assert!(dom.contains(label), "step {label:?} not shown");
    }
    // the selected (last) state, in the compact rendering
    assert!(dom.contains("server v1"), "state not shown");
    // the sequence diagram, with its lanes and the violation
    assert!(dom.contains("<svg"), "no SVG in the page");
    assert!(dom.contains(">/dev/fuse</text>"));
    assert!(dom.contains(">T1 dio-read 0+1</text>"));
    assert!(dom.contains("reads READ(p0 T1)"));
    assert!(dom.contains("violated here: b1"));
    println!("browser test took {:.1}s", t0.elapsed().as_secs_f64());
}
