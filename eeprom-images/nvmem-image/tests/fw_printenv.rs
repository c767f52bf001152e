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

/// libubootenv's choice between two redundant copies in a file (its
/// incremental flags) is ours for u-boot,env-redundant-count.
#[test]
fn fw_printenv_picks_the_copy_we_pick() {
    let dir = std::env::temp_dir().join(format!("nvmem-image-fw2-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bin = dir.join("env.bin");
    let cfg = dir.join("fw_env.config");
    let size = 0x400usize;
    std::fs::write(
        &cfg,
        format!(
            "{b} 0x0 {size:#x}\n{b} {size:#x} {size:#x}\n",
            b = bin.display()
        ),
    )
    .unwrap();
    for (fa, fb) in [
        (255u8, 0u8),
        (0, 255),
        (1, 0),
        (0, 1),
        (5, 5),
        (255, 1),
        (1, 255),
        (7, 8),
        (0xff, 0xff),
    ] {
        let one = [("which".to_string(), "first".to_string())];
        let two = [("which".to_string(), "second".to_string())];
        let mut img = uboot::encode(&one, size, uboot::Kind::Redundant, fa, 0).unwrap();
        img.extend(uboot::encode(&two, size, uboot::Kind::Redundant, fb, 0).unwrap());
        std::fs::write(&bin, &img).unwrap();
        let out = Command::new("fw_printenv")
            .arg("-c")
            .arg(&cfg)
            .arg("which")
            .output()
            .expect("fw_printenv (libubootenv-tool) must be installed: make setup");
        let theirs = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let geo = uboot::Geometry {
            env_size: None,
            redundant_offset: Some(size),
        };
        let ours = uboot::layout_copy(&img, uboot::Kind::Redundant, true, geo).unwrap();
        assert_eq!(
            theirs,
            format!("which={}", ours.vars[0].value),
            "flags {fa} and {fb}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
