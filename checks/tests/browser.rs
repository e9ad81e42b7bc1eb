//! Drives Stateright's Explorer, served by `wbspec explore` with wbspec's
//! page, in Debian's headless Chromium at a counterexample URL (the
//! virtual time budget lets the page's script fetch the path's states),
//! and checks the rendered DOM: the path of actions first with every
//! step, the check's own verdicts, the sequence diagram with text of at
//! least 12 px, no character without a glyph.
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

/// The body of GET `path` on 127.0.0.1:`port` (HTTP/1.0, 10 s at most).
fn http_get(port: u16, path: &str) -> String {
    use std::io::{Read, Write};
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
    let mut body = String::new();
    let _ = s.read_to_string(&mut body);
    body
}

/// `wbspec explore` on a port another socket holds: a one-line error,
/// exit 2, and no URL or "serving on" printed.
#[test]
fn explore_on_a_busy_port_is_a_one_line_error_before_any_url() {
    let busy = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = busy.local_addr().unwrap().port().to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_wbspec"))
        .args(["explore", "t-fopen-dio-read", "--port", &port])
        .arg("--catalogue")
        .arg(common::catalogue_dir())
        .current_dir(std::env::temp_dir())
        .stdin(Stdio::null())
        .output()
        .expect("run wbspec explore");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(!err.contains("serving on"), "{err}");
    let last: Vec<&str> = err.lines().filter(|l| l.starts_with("wbspec: ")).collect();
    assert_eq!(last.len(), 1, "{err}");
    assert!(last[0].contains(&format!("127.0.0.1:{port}")), "{err}");
    drop(busy);
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

    // A hang detector, not a speed test: Chromium returns as soon as the
    // page's virtual time budget is spent. 30 s was too short once, in the
    // sixth of ten consecutive CI runs with a dd load and QEMU guests on
    // the same two vCPUs.
    let dom = dump_dom(&chrome, &url, Duration::from_secs(180));
    let css = http_get(port, "/app.css");
    drop(server); // the server is killed before any assertion can fail

    // the path of actions: the page's first section, every step of the
    // trace in it (the numbers are the diagram's: the hidden Pre-init
    // is not counted, Init is 0)
    let first_h2 = &dom[dom.find("<h2").expect("no h2")..];
    assert!(first_h2.starts_with("<h2>Path of Actions</h2>"), "{dom}");
    let path = &first_h2[..first_h2.find("</ol>").unwrap()];
    assert!(
        path.contains("<ol class=\"path-list\" start=\"0\""),
        "{path}"
    );
    let labels = r.trace.counterexample().labels;
    for label in &labels {
        assert!(
            path.contains(label.as_str()),
            "step {label:?} not in the path"
        );
    }
    assert_eq!(path.matches("<li>").count(), labels.len() + 2, "{path}");
    // this check's verdicts from an exhaustive run, not the model's
    // every property "Searching"
    assert!(!dom.contains("Searching"), "{dom}");
    let v = &dom[dom
        .find("<h2>Verdicts of t-fopen-dio-read</h2>")
        .expect("no verdicts")..];
    assert!(
        v.contains("<td class=\"violated\">b1</td><td>violated in ")
            && v.contains(", as expected; <a href=\"#/steps/"),
        "{v}"
    );
    assert!(
        v.contains("Hold in all ") && v.contains("a1, a2, a3"),
        "{v}"
    );
    assert!(v.contains("w-dio-read-checked ("), "{v}");
    assert!(
        !dom.contains("w-crop"),
        "a witness this check does not reach"
    );
    // no character without a glyph: the page is ASCII but for what the
    // installed fonts cover (fontconfig says, per character)
    let mut odd: Vec<char> = dom.chars().filter(|c| !c.is_ascii()).collect();
    odd.sort();
    odd.dedup();
    for c in odd {
        let fonts = Command::new("fc-list")
            .arg(format!(":charset={:x}", c as u32))
            .output()
            .expect("fc-list (fontconfig) runs");
        assert!(
            !fonts.stdout.is_empty(),
            "{c:?} (U+{:04X}) has no glyph in the installed fonts",
            c as u32
        );
    }
    // the diagram's text at 12 px or more at 100 % zoom: font size times
    // the displayed width over the viewBox width, and the page's style
    // (wbspec's, as served) does not shrink the SVG
    let svg = &dom[dom.find("<svg").unwrap()..];
    let attr = |k: &str, i: usize| -> f64 {
        let v = svg.split(&format!(" {k}=\"")).nth(1).unwrap();
        let v = &v[..v.find('"').unwrap()];
        v.split(' ').nth(i).unwrap().parse().unwrap()
    };
    let px = attr("font-size", 0) * attr("width", 0) / attr("viewBox", 2);
    assert!(px >= 12.0, "diagram text {px:.1} px");
    assert!(
        css.contains("wbspec's style") && css.contains(".diagram svg { max-width: none;"),
        "{css}"
    );
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
