//! Cross-check with libubootenv's fw_printenv: the same variables and
//! values as our decoder, for an image built from a description.

use nvmem_image::desc::Description;
use nvmem_image::uboot;
use std::path::PathBuf;
use std::process::Command;

#[test]
fn fw_printenv_agrees() {
    let desc = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../uboot-env-small.toml");
    let img = Description::load(&desc).unwrap().build().unwrap();
    let dir = std::env::temp_dir().join(format!("nvmem-image-fw-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bin = dir.join("env.bin");
    let cfg = dir.join("fw_env.config");
    std::fs::write(&bin, &img).unwrap();
    std::fs::write(&cfg, format!("{} 0x0 {:#x}\n", bin.display(), img.len())).unwrap();
    let out = Command::new("fw_printenv")
        .arg("-c")
        .arg(&cfg)
        .output()
        .expect("fw_printenv (libubootenv-tool) must be installed: make setup");
    assert!(
        out.status.success(),
        "fw_printenv: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let theirs: Vec<(String, String)> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (k, v) = l.split_once('=').unwrap();
            (k.to_string(), v.to_string())
        })
        .collect();
    let ours: Vec<(String, String)> = uboot::decode(&img, None).unwrap().copies[0]
        .vars
        .iter()
        .map(|v| (v.name.clone(), v.value.clone()))
        .collect();
    std::fs::remove_dir_all(&dir).unwrap();
    let mut sorted = ours.clone();
    sorted.sort();
    let mut theirs_sorted = theirs;
    theirs_sorted.sort();
    assert!(!ours.is_empty());
    assert_eq!(sorted, theirs_sorted);
}
