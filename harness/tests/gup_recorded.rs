//! The direct-I/O extraction scenarios (l_dio_*) recorded on Linux 6.18.44
//! conform to the fuse-gup model's state M, without root: the model sends
//! the WRITEs the kernel sent. Altered copies (a payload as v2 would send
//! it, a split at the wrong byte) do not conform.
use std::path::Path;

use wbspec_harness::conform::{conform_trace, Class};
use wbspec_harness::trace::parse_trace;

fn verdict(dir: &str, name: &str) -> (String, bool, String) {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/traces")
        .join(dir)
        .join(format!("{name}.jsonl"));
    let ev = parse_trace(&std::fs::read_to_string(p).unwrap()).unwrap();
    let c = conform_trace(&ev, None).unwrap();
    (
        c.word,
        c.class == Class::Conforms,
        c.detail.unwrap_or_default(),
    )
}

#[test]
fn recorded_extraction_traces_conform() {
    for name in ["l_dio_cow", "l_dio_remap", "l_dio_split"] {
        let (word, ok, detail) = verdict("6.18.44-gup", name);
        assert!(ok && word == "conforms", "{name}: {word}\n{detail}");
    }
    // the recorded payload tells state M from v2 and 6.13-rc1
    let (_, _, d) = verdict("6.18.44-gup", "l_dio_cow");
    assert!(d.contains("kernel WRITEs: 0+16384 ABZD"), "{d}");
    assert!(d.contains("v2 ABCD") && d.contains("6.13-rc1 AAZA"), "{d}");
}

#[test]
fn altered_extraction_traces_do_not_conform() {
    for name in ["l_dio_cow_v2_payload", "l_dio_split_at_7k"] {
        let (word, ok, detail) = verdict("altered-gup", name);
        assert!(
            !ok && word.starts_with("VIOLATION"),
            "{name}: {word}\n{detail}"
        );
    }
}
