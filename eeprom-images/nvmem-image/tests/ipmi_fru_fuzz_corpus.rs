//! The regression pass of the cargo-fuzz target `ipmi_fru_parse` on
//! stable, without cargo-fuzz: the saved corpus (fuzz/corpus/ipmi_fru_parse/),
//! the crash inputs kept (fuzz/regressions/ipmi_fru_parse/, when there are
//! any) and the images of the IPMI FRU descriptions, each through the same
//! invariant checks as the fuzz target (fuzz/common/ipmi_fru_check.rs).

use nvmem_image::defect::Expect;
use nvmem_image::desc::Description;
use std::path::{Path, PathBuf};

#[path = "../fuzz/common/ipmi_fru_check.rs"]
mod ipmi_fru_check;

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The files of a directory, sorted.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.is_file())
        .collect();
    out.sort();
    out
}

/// Checks every file of `dir`; returns (accepted, rejected) counts.
fn replay(dir: &Path) -> (usize, usize) {
    let (mut accepted, mut rejected) = (0, 0);
    for f in files(dir) {
        let data = std::fs::read(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let ok = std::panic::catch_unwind(|| ipmi_fru_check::check(&data))
            .unwrap_or_else(|_| panic!("{}: an invariant fails (message above)", f.display()));
        if ok {
            accepted += 1;
        } else {
            rejected += 1;
        }
    }
    (accepted, rejected)
}

#[test]
fn saved_corpus_holds_the_invariants() {
    let dir = crate_dir().join("fuzz/corpus/ipmi_fru_parse");
    let (accepted, rejected) = replay(&dir);
    // a corpus the parser only rejects (or only accepts) would check little
    assert!(
        accepted >= 10 && rejected >= 10,
        "{}: {accepted} accepted and {rejected} rejected inputs, expected at least 10 of each",
        dir.display()
    );
}

#[test]
fn kept_crash_inputs_hold_the_invariants() {
    let dir = crate_dir().join("fuzz/regressions/ipmi_fru_parse");
    if dir.exists() {
        replay(&dir);
    }
}

#[test]
fn description_images_hold_the_invariants_and_their_expectation() {
    let images = crate_dir().join("..");
    let mut descs: Vec<PathBuf> = files(&images)
        .into_iter()
        .filter(|p| {
            let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            n.starts_with("ipmi-fru-") && n.ends_with(".toml")
        })
        .collect();
    let hostile: Vec<PathBuf> = files(&images.join("hostile-fru"))
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    assert!(!descs.is_empty(), "no eeprom-images/ipmi-fru-*.toml");
    assert!(!hostile.is_empty(), "no eeprom-images/hostile-fru/*.toml");
    descs.extend(hostile);
    for d in &descs {
        let desc = Description::load(d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
        let img = desc
            .build()
            .unwrap_or_else(|e| panic!("{}: {e}", d.display()));
        let accepted = std::panic::catch_unwind(|| ipmi_fru_check::check(&img))
            .unwrap_or_else(|_| panic!("{}: an invariant fails (message above)", d.display()));
        // a description without `expect` is a well-formed image
        let want = desc.extras.expect.unwrap_or(Expect::Cells) == Expect::Cells;
        assert_eq!(accepted, want, "{}: accepted by the parser", d.display());
    }
}
