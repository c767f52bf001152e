//! IPMI FRU information: FreeIPMI's `ipmi-fru` and the PyPI package
//! `fru-parser` (two independent decoders; the second also decodes BCD
//! plus, which FreeIPMI refuses) read our images as we do; every hostile FRU description is rejected
//! by the shared parser with its problem named; random bytes never panic
//! the parser and the cells of an accepted image lie inside it; build ->
//! inspect -> cells round trips.

use nvmem_image::cells::{self, Layout};
use nvmem_image::desc::Description;
use nvmem_image::inspect::{inspect, Format, Inspection};
use nvmem_image::ipmi_fru::{self, parse};
use proptest::prelude::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn images_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn build(rel: &str) -> Vec<u8> {
    Description::load(&images_dir().join(rel))
        .unwrap()
        .build()
        .unwrap()
}

struct Tmp(PathBuf);
impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn tmp_file(tag: &str, data: &[u8]) -> Tmp {
    let p = std::env::temp_dir().join(format!("nvmem-image-fru-{}-{tag}.bin", std::process::id()));
    std::fs::write(&p, data).unwrap();
    Tmp(p)
}

/// `ipmi-fru --fru-file`: its `FRU <label>: <value>` lines in order.
fn freeipmi(tag: &str, img: &[u8]) -> Vec<(String, String)> {
    let f = tmp_file(tag, img);
    let out = Command::new("ipmi-fru")
        .arg(format!("--fru-file={}", f.0.display()))
        .output()
        .expect("ipmi-fru (freeipmi-tools) must be installed: make setup");
    assert!(
        out.status.success(),
        "ipmi-fru: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().strip_prefix("FRU "))
        .filter_map(|l| l.split_once(": "))
        // the heading names the file, not a field
        .filter(|(k, _)| *k != "Inventory From File")
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// FreeIPMI's label of each cell (`custom-N` share one label per area).
fn label(name: &str) -> &'static str {
    let custom = |n: &str, prefix: &str| n.starts_with(prefix);
    match name {
        "chassis-type" => "Chassis Type",
        "chassis-part-number" => "Chassis Part Number",
        "chassis-serial-number" => "Chassis Serial Number",
        n if custom(n, "chassis-custom-") => "Chassis Custom Info",
        "board-mfg-date" => "Board Manufacturing Date/Time",
        "board-manufacturer" => "Board Manufacturer",
        "board-product-name" => "Board Product Name",
        "board-serial-number" => "Board Serial Number",
        "board-part-number" => "Board Part Number",
        "board-fru-file-id" | "product-fru-file-id" => "FRU File ID",
        n if custom(n, "board-custom-") => "Board Custom Info",
        "product-manufacturer" => "Product Manufacturer Name",
        "product-name" => "Product Name",
        "product-part-number" => "Product Part/Model Number",
        "product-version" => "Product Version",
        "product-serial-number" => "Product Serial Number",
        "product-asset-tag" => "Product Asset Tag",
        n if custom(n, "product-custom-") => "Product Custom Info",
        other => panic!("no FreeIPMI label for {other}"),
    }
}

/// SMBIOS chassis type names (what FreeIPMI prints) of the types our
/// images use.
fn chassis_type_name(t: u8) -> &'static str {
    match t {
        0x17 => "Rack Mount Chassis",
        other => panic!("add the SMBIOS name of chassis type {other:#x}"),
    }
}

/// Our decoding of each field, written as FreeIPMI writes it.
fn ours_as_freeipmi(img: &[u8]) -> Vec<(String, String)> {
    let image = ipmi_fru::decode(img).unwrap();
    assert!(image.problem.is_none(), "{:?}", image.problem);
    image
        .fields
        .iter()
        .map(|f| {
            let bytes = nvmem_image::hex::decode(&f.hex).unwrap();
            let value = match (f.name.as_str(), f.encoding) {
                ("chassis-type", _) => chassis_type_name(bytes[0]).to_string(),
                ("board-mfg-date", _) => {
                    // "YYYY-MM-DD hh:mm UTC" -> "MM/DD/YY - hh:mm:00"
                    let t = f.text.as_deref().unwrap();
                    format!(
                        "{}/{}/{} - {}:00",
                        &t[5..7],
                        &t[8..10],
                        &t[2..4],
                        &t[11..16]
                    )
                }
                // FreeIPMI 1.6.10 refuses every BCD plus field (even
                // digits only): it is no oracle for that encoding;
                // fru-parser is (fru_parser_reads_every_field_as_we_do)
                (_, "bcd-plus") => "Error 'FRU invalid BCD encoding'".to_string(),
                (_, "binary") => bytes
                    .iter()
                    .map(|b| format!("{b:02X}h"))
                    .collect::<Vec<_>>()
                    .join(" "),
                _ => f.text.clone().unwrap(),
            };
            (label(&f.name).to_string(), value)
        })
        .collect()
}

#[test]
fn freeipmi_reads_every_field_as_we_do() {
    for (name, fields) in [("ipmi-fru-server", 20), ("ipmi-fru-minimal", 5)] {
        let img = build(&format!("{name}.toml"));
        let theirs = freeipmi(name, &img);
        let ours = ours_as_freeipmi(&img);
        assert_eq!(ours.len(), fields, "{name}: {ours:?}");
        assert_eq!(theirs, ours, "{name}");
    }
}

/// Runs `tool` of the project's venv (tests/requirements.txt, installed
/// by `make setup`), or the program the environment variable `var` names,
/// with `args`; panics unless it succeeds.
fn venv_tool(tool: &str, var: &str, args: &[&std::ffi::OsStr]) {
    let exe = std::env::var_os(var).map_or_else(
        || images_dir().join("../build/venv/bin").join(tool),
        PathBuf::from,
    );
    let out = Command::new(&exe)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{}: {e} (make setup installs {tool})", exe.display()));
    assert!(
        out.status.success(),
        "{tool} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// fru-parser's JSON of `img` (`NVLAB_FRU_PARSER` overrides the venv's).
fn fru_parser_json(tag: &str, img: &[u8]) -> serde_json::Value {
    let f = tmp_file(tag, img);
    let json = Tmp(f.0.with_extension("json"));
    venv_tool(
        "fru-parser",
        "NVLAB_FRU_PARSER",
        &[
            "--quiet".as_ref(),
            "--fru-bin".as_ref(),
            f.0.as_os_str(),
            "--output".as_ref(),
            json.0.as_os_str(),
        ],
    );
    serde_json::from_slice(&std::fs::read(&json.0).unwrap()).unwrap()
}

/// Where fru-parser puts the field that is our cell `name`:
/// (area, key, custom index).
fn fru_parser_place(name: &str) -> (&str, &str, Option<usize>) {
    let (area, field) = name.split_once('-').unwrap();
    if let Some(n) = field.strip_prefix("custom-") {
        return (area, "custom", Some(n.parse().unwrap()));
    }
    let key = match field {
        "type" => "type",
        "mfg-date" => "date",
        "manufacturer" => "mfg",
        "product-name" | "name" => "pname",
        "part-number" => "pn",
        "serial-number" => "serial",
        "fru-file-id" => "file",
        "version" => "ver",
        "asset-tag" => "atag",
        other => panic!("no fru-parser key for {other}"),
    };
    (area, key, None)
}

#[test]
fn fru_parser_reads_every_field_as_we_do() {
    for (name, fields) in [("ipmi-fru-server", 20), ("ipmi-fru-minimal", 5)] {
        let img = build(&format!("{name}.toml"));
        let theirs = fru_parser_json(name, &img);
        let image = ipmi_fru::decode(&img).unwrap();
        assert!(image.problem.is_none(), "{name}: {:?}", image.problem);
        assert_eq!(image.fields.len(), fields, "{name}");
        let mut seen_custom = std::collections::BTreeSet::new();
        for f in &image.fields {
            let bytes = nvmem_image::hex::decode(&f.hex).unwrap();
            let (area, key, custom) = fru_parser_place(&f.name);
            let what = format!("{name}: {}", f.name);
            let value = match custom {
                Some(n) => {
                    seen_custom.insert((area, n));
                    &theirs[area][key][n]
                }
                None => &theirs[area][key],
            };
            match f.name.as_str() {
                "chassis-type" => assert_eq!(value.as_u64(), Some(bytes[0].into()), "{what}"),
                "board-mfg-date" => {
                    // "YYYY-MM-DD hh:mm UTC" -> their "D/M/YYYY hh:mm:00"
                    let t = f.text.as_deref().unwrap();
                    let day: u32 = t[8..10].parse().unwrap();
                    let month: u32 = t[5..7].parse().unwrap();
                    let want = format!("{day}/{month}/{} {}:00", &t[..4], &t[11..16]);
                    assert_eq!(value.as_str(), Some(want.as_str()), "{what}");
                }
                _ => {
                    let (kind, data) = match f.encoding {
                        "binary" => ("binary", nvmem_image::hex::encode(&bytes).to_uppercase()),
                        "bcd-plus" => ("bcdplus", f.text.clone().unwrap()),
                        "six-bit" => ("6bitascii", f.text.clone().unwrap()),
                        "text" => ("text", f.text.clone().unwrap()),
                        other => panic!("{what}: encoding {other}"),
                    };
                    assert_eq!(value["type"], kind, "{what}");
                    assert_eq!(value["data"], data.as_str(), "{what}");
                }
            }
        }
        // their custom fields we have no cell for: the empty ones
        for area in ["chassis", "board", "product"] {
            let list = theirs[area]["custom"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            for (n, v) in list.iter().enumerate() {
                if !seen_custom.contains(&(area, n)) {
                    assert_eq!(v["data"], "", "{name}: {area} custom field {n} has no cell");
                }
            }
        }
    }
}

/// The image frutool (PyPI `fru`, another project's FRU generator;
/// `NVLAB_FRUTOOL` overrides the venv's) makes of `input`.
fn frutool_generate(input: &Path) -> Vec<u8> {
    let stem = input.file_stem().unwrap().to_string_lossy();
    let out = Tmp(std::env::temp_dir().join(format!(
        "nvmem-image-frutool-{}-{stem}.bin",
        std::process::id()
    )));
    venv_tool(
        "frutool",
        "NVLAB_FRUTOOL",
        &[
            "generate".as_ref(),
            "--force".as_ref(),
            input.as_os_str(),
            out.0.as_os_str(),
        ],
    );
    std::fs::read(&out.0).unwrap()
}

/// Images nobody here wrote: frutool's, from eeprom-images/frutool/. The
/// shared parser accepts them, every non-empty value of frutool's input is
/// the cell of that field (empty ones have none), and `dump` describes
/// them as ipmi-fru.
#[test]
fn frutool_images_read_as_their_input() {
    let dir = images_dir().join("frutool");
    let mut inputs: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    inputs.sort();
    assert!(inputs.len() >= 2, "frutool inputs in {}", dir.display());
    for input in inputs {
        let what = input.display().to_string();
        let t: toml::Table = std::fs::read_to_string(&input).unwrap().parse().unwrap();
        let img = frutool_generate(&input);
        let image = ipmi_fru::decode(&img).unwrap();
        assert!(image.problem.is_none(), "{what}: {:?}", image.problem);
        let ours: std::collections::BTreeMap<_, _> = image
            .fields
            .iter()
            .map(|f| (f.name.clone(), f.text.clone().unwrap_or_default()))
            .collect();
        let mut want = std::collections::BTreeMap::new();
        for (area, keys) in [
            (
                "chassis",
                &[
                    ("part_number", "part-number"),
                    ("serial_number", "serial-number"),
                ][..],
            ),
            (
                "board",
                &[
                    ("manufacturer", "manufacturer"),
                    ("product_name", "product-name"),
                    ("serial_number", "serial-number"),
                    ("part_number", "part-number"),
                    ("fru_file_id", "fru-file-id"),
                ][..],
            ),
            (
                "product",
                &[
                    ("manufacturer", "manufacturer"),
                    ("product_name", "name"),
                    ("part_number", "part-number"),
                    ("product_version", "version"),
                    ("serial_number", "serial-number"),
                    ("asset_tag", "asset-tag"),
                    ("fru_file_id", "fru-file-id"),
                ][..],
            ),
        ] {
            if !t["common"][&format!("include_{area}")].as_bool().unwrap() {
                continue;
            }
            let a = t[area].as_table().unwrap();
            let values = keys
                .iter()
                .map(|(theirs, ours)| (ours.to_string(), a[*theirs].as_str().unwrap().to_string()))
                .chain(
                    a["custom_fields"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .enumerate()
                        .map(|(i, v)| (format!("custom-{i}"), v.as_str().unwrap().to_string())),
                );
            for (field, value) in values.filter(|(_, v)| !v.is_empty()) {
                want.insert(format!("{area}-{field}"), value);
            }
            match area {
                "chassis" => {
                    let ty = a["type"].as_integer().unwrap();
                    want.insert("chassis-type".into(), ty.to_string());
                }
                "board" => {
                    let date = a["mfg_date_time"].as_str().unwrap();
                    want.insert("board-mfg-date".into(), format!("{date} UTC"));
                }
                _ => {}
            }
        }
        assert_eq!(ours, want, "{what}");
        let out = nvmem_image::dump::dump(&img).unwrap();
        assert_eq!(out.format, "ipmi-fru", "{what}: {:?}", out.fallback);
    }
}

#[test]
fn freeipmi_reports_the_checksum_and_version_errors() {
    for (name, want) in [
        ("fru-header-checksum", "common header checksum invalid"),
        ("fru-area-checksum", "board info area checksum invalid"),
        ("fru-header-version", "common header format invalid"),
        ("fru-area-version", "board info area format invalid"),
        ("fru-all-ff", "common header checksum invalid"),
    ] {
        let img = build(&format!("hostile-fru/{name}.toml"));
        let theirs = freeipmi(name, &img);
        assert_eq!(theirs, [("Error".to_string(), want.to_string())], "{name}");
    }
}

/// Every hostile FRU description: rejected by `cells` (exit 1, no panic)
/// with its problem named, and it says so (`expect = "rejected"`).
#[test]
fn every_hostile_fru_description_is_rejected_with_its_problem() {
    let problems = [
        ("fru-all-ff", "format version 0xff at 0x0"),
        ("fru-all-zero", "format version 0x00 at 0x0"),
        (
            "fru-area-checksum",
            "board info area at 0x8: checksum mismatch",
        ),
        (
            "fru-area-length-zero",
            "board info area at 0x8: length byte is 0",
        ),
        (
            "fru-area-past-device",
            "board info area at 0x8: 0x7f8 bytes run past the end of the image (0x100 bytes)",
        ),
        ("fru-area-version", "board info area at 0x8: version 0x02"),
        (
            "fru-early-end-marker",
            "end marker at 0x1f after 2 of its 5 fixed fields",
        ),
        (
            "fru-field-past-area",
            "field at 0x25 of 0x3f bytes runs past the area",
        ),
        ("fru-header-checksum", "common header: checksum mismatch"),
        ("fru-header-version", "format version 0x02 at 0x0"),
        (
            "fru-missing-end-marker",
            "missing end marker 0xc1 before the checksum byte at 0x37",
        ),
        (
            "fru-multirecord-past-device",
            "multirecord area offset 0x7f8 is past the end of the image",
        ),
        (
            "fru-offset-past-device",
            "product info area offset 0x100 is past the end of the image",
        ),
        (
            "fru-overlapping-areas",
            "board info area at 0x8 overlaps chassis info area at 0x8..0x1f",
        ),
        (
            "fru-truncated",
            "image of 0x4 bytes is shorter than the 8-byte common header",
        ),
    ];
    let dir = images_dir().join("hostile-fru");
    let mut found: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    found.sort();
    let listed: Vec<&str> = problems.iter().map(|p| p.0).collect();
    assert_eq!(
        found, listed,
        "every hostile-fru description has its problem here"
    );
    assert!(found.len() >= 12);
    for (name, problem) in problems {
        let path = dir.join(format!("{name}.toml"));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("# Hostile image: "), "{name}");
        assert!(text.contains("expect = \"rejected\""), "{name}");
        let out = Command::new(env!("CARGO_BIN_EXE_nvmem-image"))
            .arg("cells")
            .arg(&path)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {err}");
        assert!(out.stdout.is_empty(), "{name}: cells printed");
        assert!(!err.contains("panicked"), "{name}: {err}");
        assert!(err.contains(problem), "{name}: {problem:?} not in {err}");
        // the parser itself, on the bytes the kernel reads
        let img = build(&format!("hostile-fru/{name}.toml"));
        assert!(parse::parse(&img).is_err(), "{name}");
    }
}

#[test]
fn build_inspect_and_cells_round_trip() {
    let img = build("ipmi-fru-server.toml");
    assert_eq!(img.len(), 2048);
    let Inspection::Format(found) = inspect(&img, Format::Auto).unwrap() else {
        panic!("not detected as IPMI FRU")
    };
    assert_eq!(found.0.to_json()["format"], "ipmi-fru");
    let image = ipmi_fru::decode(&img).unwrap();
    let text = |name: &str| {
        image
            .fields
            .iter()
            .find(|f| f.name == name)
            .unwrap_or_else(|| panic!("no {name}"))
            .text
            .clone()
    };
    assert_eq!(text("chassis-type").as_deref(), Some("23"));
    assert_eq!(text("chassis-part-number").as_deref(), Some("NVL-CH-2U-01"));
    assert_eq!(text("chassis-custom-0").as_deref(), Some("rev A"));
    assert_eq!(text("chassis-custom-1"), None);
    assert_eq!(
        text("board-mfg-date").as_deref(),
        Some("2024-03-01 12:34 UTC")
    );
    assert_eq!(text("board-serial-number").as_deref(), Some("BD26000042AB"));
    assert_eq!(text("board-custom-0").as_deref(), Some("ECO 1234"));
    assert_eq!(text("product-version").as_deref(), Some("1.20-3"));
    assert_eq!(text("product-custom-0").as_deref(), Some("made in the lab"));
    // the empty board custom field has no cell but keeps its number
    assert!(image.fields.iter().all(|f| f.name != "board-custom-1"));

    let layout: Layout = "nvmem-lab,ipmi-fru".parse().unwrap();
    let c = cells::predict(layout, &img, &[], None, Default::default()).unwrap();
    let names: Vec<_> = c.iter().map(|c| c.name.as_str()).collect();
    let fields: Vec<_> = image.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, fields);
    for (cell, field) in c.iter().zip(&image.fields) {
        assert_eq!(cell.sysfs, format!("{}@{:x},0", field.name, field.offset));
        assert_eq!(cell.raw, field.hex);
        assert_eq!(cell.content.as_deref(), Some(field.hex.as_str()));
        // the type/length byte is the device byte before the cell
        let tl = img[cell.offset - 1];
        if !matches!(cell.name.as_str(), "chassis-type" | "board-mfg-date") {
            assert_eq!(usize::from(tl & 0x3f), cell.size, "{}", cell.name);
        }
    }
}

/// Values worked out by hand from the specification, not by the code.
#[test]
fn golden_bytes() {
    let img = build("ipmi-fru-minimal.toml");
    // header: version 1, board at 8 (1 * 8), checksum 0x100 - 2
    assert_eq!(&img[..8], &[1, 0, 0, 1, 0, 0, 0, 0xfe]);
    // 15000000 minutes, little endian
    assert_eq!(&img[11..14], &[0xc0, 0xe1, 0xe4]);
    assert_eq!(ipmi_fru::format_date(15_000_000), "2024-07-08 16:00 UTC");
    // 2024-03-01 12:34 is minute 14814034 (Python's datetime)
    let server = build("ipmi-fru-server.toml");
    let board = usize::from(server[3]) * 8;
    let m = u32::from_le_bytes([server[board + 3], server[board + 4], server[board + 5], 0]);
    assert_eq!(m, 14_814_034);
    // the specification's 6-bit ASCII example: "IPMI" is 29h DCh A6h
    assert_eq!(ipmi_fru::decode_six_bit(&[0x29, 0xdc, 0xa6]), "IPMI");
    // BCD plus: 1, '.', 2, 0, '-', 3
    assert_eq!(ipmi_fru::decode_bcd_plus(&[0x1c, 0x20, 0xb3]), "1.20-3");
}

#[test]
fn a_header_without_areas_has_no_cells() {
    let img = [1u8, 0, 0, 0, 0, 0, 0, 0xff];
    let fru = parse::parse(&img).unwrap();
    let mut n = 0;
    fru.for_each_cell(|_| {
        n += 1;
        Ok::<(), ()>(())
    })
    .unwrap();
    assert_eq!(n, 0);
}

fn bad_desc(text: &str, want: &[&str]) {
    let p = std::env::temp_dir().join(format!("nvmem-image-fru-bad-{}.toml", std::process::id()));
    std::fs::write(&p, text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_nvmem-image"))
        .arg("build")
        .arg(&p)
        .arg("-o")
        .arg("/dev/null")
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&p);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{text}: {err}");
    assert!(!err.contains("panicked"), "{err}");
    for w in want {
        assert!(err.contains(w), "{w:?} not in {err}");
    }
}

#[test]
fn bad_fru_descriptions() {
    let head = "format = \"ipmi-fru\"\n";
    bad_desc(
        &format!("{head}[board]\nmanufacturer = \"X\"\n"),
        &["board.manufacturer", "end marker"],
    );
    bad_desc(
        &format!("{head}[board]\nmanufacturer = {{ six-bit = \"abc\" }}\n"),
        &["board.manufacturer.six-bit", "6-bit"],
    );
    bad_desc(
        &format!("{head}[board]\nmanufacturer = {{ bcd-plus = \"12a\" }}\n"),
        &["bcd-plus", "BCD plus"],
    );
    bad_desc(
        &format!("{head}[board]\nmfg-date = \"2024-02-30 10:00\"\n"),
        &["board.mfg-date", "YYYY-MM-DD hh:mm"],
    );
    bad_desc(
        &format!("{head}[board]\nmfg-date = \"2030-01-01 00:00\"\n"),
        &["board.mfg-date", "outside"],
    );
    bad_desc(
        &format!("{head}[product]\ncolour = \"red\"\n"),
        &["product.colour", "unknown field"],
    );
    bad_desc(
        &format!("{head}[chassis]\npart-number = \"{}\"\n", "x".repeat(64)),
        &["chassis.part-number", "63"],
    );
    bad_desc(
        &format!("{head}[board]\ncustom = [{{ hex = \"00\" }}]\n"),
        &["board.custom[0].hex", "unknown encoding"],
    );
    bad_desc(
        &format!("{head}size = 4\n[board]\n"),
        &["size", "8-byte common header"],
    );
}

/// A FRU-looking image: a valid header with the given area offsets and
/// area checksums made right where the areas' length bytes put them, the
/// rest random.
fn fru_like(mut body: Vec<u8>, offsets: [u8; 5]) -> Vec<u8> {
    if body.len() < 8 {
        body.resize(8, 0);
    }
    body[0] = 1;
    body[1..6].copy_from_slice(&offsets);
    body[6] = 0;
    body[7] = 0u8.wrapping_sub(body[..7].iter().fold(0u8, |s, &b| s.wrapping_add(b)));
    for i in 2..=4 {
        let start = usize::from(body[i]) * 8;
        if start == 0 || start + 2 > body.len() {
            continue;
        }
        body[start] = 1;
        let len = usize::from(body[start + 1]) * 8;
        if len > 0 && start + len <= body.len() {
            let s = body[start..start + len - 1]
                .iter()
                .fold(0u8, |s, &b| s.wrapping_add(b));
            body[start + len - 1] = 0u8.wrapping_sub(s);
        }
    }
    body
}

fn check_cells(img: &[u8]) {
    if let Ok(fru) = parse::parse(img) {
        let mut last_end = 0;
        let mut name = [0u8; parse::NAME_MAX];
        fru.for_each_cell(|c| {
            assert!(c.offset + c.len <= img.len(), "{c:?}");
            assert!(c.len > 0 && c.offset >= 8, "{c:?}");
            assert!(c.offset >= last_end, "cells out of image order: {c:?}");
            assert!(!c.name(&mut name).is_empty());
            last_end = c.offset + c.len;
            Ok::<(), ()>(())
        })
        .unwrap();
    }
}

proptest! {
    #[test]
    fn random_bytes_never_panic_the_parser(img in proptest::collection::vec(any::<u8>(), 0..600)) {
        check_cells(&img);
        let _ = cells::predict(Layout::Compatible("nvmem-lab,ipmi-fru"), &img, &[], None, Default::default());
        let _ = inspect(&img, Format::Named("ipmi-fru")).map(|i| i.to_string());
    }

    #[test]
    fn cells_of_accepted_images_lie_inside(
        body in proptest::collection::vec(any::<u8>(), 8..700),
        chassis in 0u8..8, board in 0u8..40, product in 0u8..80,
    ) {
        let img = fru_like(body, [0, chassis, board, product, 0]);
        check_cells(&img);
    }

    #[test]
    fn built_images_round_trip(
        part in "[A-Z0-9 .-]{2,40}",
        six in "[A-Z0-9 ]{0,40}",
        bcd in "[0-9]{0,20}",
        minutes in 0u32..0xff_ffff,
    ) {
        let text = format!(
            "format = \"ipmi-fru\"\n[chassis]\npart-number = \"{part}\"\n\
             [board]\nmfg-date = {minutes}\nserial-number = {{ six-bit = \"{six}\" }}\n\
             [product]\nversion = {{ bcd-plus = \"{bcd}\" }}\n"
        );
        let img = Description::from_text(Path::new("<p>"), &text).unwrap().build().unwrap();
        let image = ipmi_fru::decode(&img).unwrap();
        prop_assert!(image.problem.is_none(), "{:?}", image.problem);
        let get = |n: &str| image.fields.iter().find(|f| f.name == n).and_then(|f| f.text.clone());
        prop_assert_eq!(get("chassis-part-number"), Some(part));
        // 6-bit ASCII comes back padded with spaces to whole bytes
        let six_back = get("board-serial-number").unwrap_or_default();
        prop_assert_eq!(six_back.trim_end(), six.trim_end());
        // BCD plus of an odd count is padded with a space
        let bcd_back = get("product-version").unwrap_or_default();
        prop_assert_eq!(bcd_back.trim_end(), bcd.as_str());
        let date = get("board-mfg-date").unwrap();
        prop_assert_eq!(date, ipmi_fru::format_date(minutes));
    }

    /// `dump` describes a built image as ipmi-fru (not a blob), whatever
    /// the areas, languages, encodings and empty fields; `dump` itself
    /// checks that the description rebuilds the bytes.
    #[test]
    fn dumps_of_built_images_are_fru_descriptions(
        areas in proptest::collection::vec(any::<bool>(), 3),
        language in prop_oneof![Just(0u8), Just(25u8), 1u8..=136],
        fixed in proptest::collection::vec(proptest::option::of("[ -~]{2,20}"), 7),
        custom in proptest::collection::vec(
            prop_oneof![
                "[ -~é]{0,12}".prop_map(|t| format!("{t:?}")),
                "[A-Z0-9 ]{0,16}".prop_map(|t| format!("{{ six-bit = {t:?} }}")),
                "[0-9 .-]{0,16}".prop_map(|t| format!("{{ bcd-plus = {t:?} }}")),
                proptest::collection::vec(any::<u8>(), 0..20)
                    .prop_map(|b| format!("{{ binary = {:?} }}", nvmem_image::hex::encode(&b))),
            ],
            0..4,
        ),
        minutes in 0u32..0xff_ffff,
        size in prop_oneof![Just(None), Just(Some(0x800usize))],
    ) {
        let mut text = String::from("format = \"ipmi-fru\"\n");
        if let Some(n) = size {
            text += &format!("size = {n}\n");
        }
        let fields = |keys: &[&str], text: &mut String| {
            for (k, v) in keys.iter().zip(&fixed) {
                if let Some(v) = v {
                    *text += &format!("{k} = {v:?}\n");
                }
            }
            *text += &format!("custom = [{}]\n", custom.join(", "));
        };
        if areas[0] {
            text += "[chassis]\ntype = 23\n";
            fields(&["part-number", "serial-number"], &mut text);
        }
        if areas[1] {
            text += &format!("[board]\nlanguage = {language}\nmfg-date = {minutes}\n");
            let keys = ["manufacturer", "product-name", "serial-number", "part-number", "fru-file-id"];
            fields(&keys, &mut text);
        }
        if areas[2] {
            text += &format!("[product]\nlanguage = {language}\n");
            let keys = [
                "manufacturer", "name", "part-number", "version", "serial-number", "asset-tag",
                "fru-file-id",
            ];
            fields(&keys, &mut text);
        }
        prop_assume!(areas.iter().any(|&a| a));
        let Ok(d) = Description::from_text(Path::new("<p>"), &text) else {
            // a field of over 63 bytes, a 1-byte 8-bit text (it would read
            // as the end marker), an area over 2040 bytes: not an image
            return Ok(());
        };
        let img = d.build().unwrap();
        let out = nvmem_image::dump::dump(&img).unwrap();
        prop_assert_eq!(out.format, "ipmi-fru", "{}\nfrom\n{}\n{:?}", out.toml, text, out.fallback);
    }
}
