//! Benchmark: a 64 KiB U-Boot environment with 2 000 variables.
//! Encode: our encoder vs mkenvimage (the process, as users run it).
//! Decode: our decoder vs fw_printenv (libubootenv). Same run, same data;
//! prints time per operation and the ratios.
//!
//!     cargo run --release --example env_bench

use nvmem_image::uboot::{self, Kind};
use std::process::Command;
use std::time::{Duration, Instant};

const SIZE: usize = 64 * 1024;

fn per_op(iters: u32, mut f: impl FnMut()) -> Duration {
    f(); // warm up
    let t = Instant::now();
    for _ in 0..iters {
        f();
    }
    t.elapsed() / iters
}

fn main() {
    let vars: Vec<(String, String)> = (0..2000)
        .map(|i| {
            (
                format!("var{i:04}"),
                format!("value-{i:05}-{}", "x".repeat(i % 13)),
            )
        })
        .collect();
    let dir = std::env::temp_dir().join(format!("nvmem-image-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let txt = dir.join("env.txt");
    let bin = dir.join("env.bin");
    let cfg = dir.join("fw_env.config");
    let text: String = vars.iter().map(|(k, v)| format!("{k}={v}\n")).collect();
    std::fs::write(&txt, text).unwrap();
    std::fs::write(&cfg, format!("{} 0x0 {SIZE:#x}\n", bin.display())).unwrap();

    let ours = uboot::encode(&vars, SIZE, Kind::Single, 0, 0xff).unwrap();
    let mk = |out: &std::path::Path| {
        let s = Command::new("mkenvimage")
            .args(["-s", &SIZE.to_string(), "-o"])
            .arg(out)
            .arg(&txt)
            .status()
            .expect("mkenvimage (u-boot-tools)");
        assert!(s.success());
    };
    mk(&bin);
    assert_eq!(
        std::fs::read(&bin).unwrap(),
        ours,
        "our encoder and mkenvimage disagree"
    );
    let data_bytes = uboot::data_bytes(&vars).len();
    println!(
        "environment: {SIZE} bytes, {} variables, {data_bytes} bytes of data",
        vars.len()
    );

    let enc_ours = per_op(2000, || {
        std::hint::black_box(uboot::encode(&vars, SIZE, Kind::Single, 0, 0xff).unwrap());
    });
    let enc_mk = per_op(100, || mk(&bin));
    let dec_ours = per_op(2000, || {
        let d = uboot::decode(std::hint::black_box(&ours), None).unwrap();
        assert_eq!(d.copies[0].vars.len(), 2000);
    });
    let dec_fw = per_op(100, || {
        let o = Command::new("fw_printenv")
            .arg("-c")
            .arg(&cfg)
            .output()
            .expect("fw_printenv (libubootenv-tool)");
        assert!(o.status.success());
    });
    std::fs::remove_dir_all(&dir).unwrap();

    let ns = |d: Duration| d.as_nanos() as f64;
    println!(
        "encode  ours {:>10.0} ns   mkenvimage {:>10.0} ns   ratio {:.1}x",
        ns(enc_ours),
        ns(enc_mk),
        ns(enc_mk) / ns(enc_ours)
    );
    println!(
        "decode  ours {:>10.0} ns  fw_printenv {:>10.0} ns   ratio {:.1}x",
        ns(dec_ours),
        ns(dec_fw),
        ns(dec_fw) / ns(dec_ours)
    );
    println!("(the tools' figures include starting their process, as they are used)");
}
