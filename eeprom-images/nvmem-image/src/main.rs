use clap::builder::PossibleValuesParser;
use clap::{Parser, Subcommand};
use nvmem_image::cells::{self, Layout};
use nvmem_image::desc::Description;
use nvmem_image::inspect::{self, Format};
use nvmem_image::Error;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Build EEPROM and flash images, inspect them, and predict their NVMEM cells.
#[derive(Parser)]
#[command(name = "nvmem-image", version)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

/// `inspect --format`: auto or a format's name.
fn format_names() -> PossibleValuesParser {
    PossibleValuesParser::new(
        std::iter::once("auto").chain(nvmem_image::format::FORMATS.iter().map(|f| f.name())),
    )
}

#[derive(Subcommand)]
enum Cmd {
    /// Write the image a description (.toml) describes
    Build {
        desc: PathBuf,
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Describe an existing image (an EEPROM dump): a description (.toml)
    /// that `build` turns into the same bytes
    Dump {
        image: PathBuf,
        /// write the description here (default: standard output)
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Decode a board's listing of nvmem devices and cells (the guest's
    /// nvmem-list output) into values in each layout's terms
    View {
        /// the listing ("-": standard input)
        listing: PathBuf,
        /// name the image attached to a device: DEVICE=IMAGE (repeatable)
        #[arg(long, value_name = "DEVICE=IMAGE")]
        attached: Vec<String>,
        /// show at most N cells per device (0: all; JSON always has all)
        #[arg(long, default_value_t = 0)]
        max_cells: usize,
        #[arg(long)]
        json: bool,
    },
    /// Print the device-tree nvmem-layout node of a description's
    /// `[layout]` (DTS, for a board's overlay)
    LayoutNode {
        desc: PathBuf,
        /// indent by this many tabs
        #[arg(long, default_value_t = 0)]
        indent: usize,
    },
    /// Decode an image: every field with offset and length, checksum validity
    Inspect {
        image: PathBuf,
        #[arg(long, default_value = "auto", value_parser = format_names())]
        format: String,
        #[arg(long)]
        json: bool,
    },
    /// The cells the kernel's layout creates, as sysfs lists them
    Cells {
        /// an image, or a description (.toml) that is built first
        input: PathBuf,
        /// onie,tlv-layout | kontron,sl28-vpd | u-boot,env[-redundant-bool|-count] |
        /// nvmem-lab,ipmi-fru | fixed-layout (default: the description's `[layout]`)
        #[arg(long)]
        layout: Option<String>,
        /// also show MAC cells post-processed with this index (may be
        /// negative: -1 is what a phandle argument of 0xffffffff gives)
        #[arg(long, allow_negative_numbers = true)]
        index: Option<i64>,
        /// U-Boot environments: the layout node's env-size
        #[arg(long, value_parser = parse_number)]
        env_size: Option<usize>,
        /// U-Boot environments: the layout node's env-redundant-offset
        #[arg(long, value_parser = parse_number)]
        env_redundant_offset: Option<usize>,
        /// the bytes a device holds (read back from it): the cells are
        /// read from them; a description input then only declares the
        /// fixed-layout cells, its image is not built
        #[arg(long)]
        bytes: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
}

/// The description's layout node, where it is of the layout used.
fn node_of_layout<'a>(
    layout: &Layout,
    node: &'a Option<nvmem_image::defect::LayoutNode>,
) -> Option<&'a nvmem_image::defect::LayoutNode> {
    node.as_ref()
        .filter(|n| n.compatible.parse::<Layout>().ok().as_ref() == Some(layout))
}

/// A number in decimal or with 0x.
fn parse_number(s: &str) -> Result<usize, String> {
    let r = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => usize::from_str_radix(h, 16),
        None => s.parse(),
    };
    r.map_err(|e| format!("{s:?}: {e}"))
}

fn read(path: &Path) -> Result<Vec<u8>, Error> {
    std::fs::read(path).map_err(|source| Error::Io {
        path: path.display().to_string(),
        source,
    })
}

fn is_desc(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "toml")
}

/// Writes to stdout; a closed pipe (`| head`) ends the output quietly.
fn emit(text: &str) -> Result<(), Error> {
    use std::io::Write;
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::Io {
            path: "<stdout>".into(),
            source: e,
        }),
        _ => Ok(()),
    }
}

fn run(cli: Cli) -> Result<(), Error> {
    match cli.cmd {
        Cmd::Build { desc, output } => {
            let img = Description::load(&desc)?.build()?;
            std::fs::write(&output, img).map_err(|source| Error::Io {
                path: output.display().to_string(),
                source,
            })
        }
        Cmd::LayoutNode { desc, indent } => emit(&nvmem_image::dts::layout_node(
            &Description::load(&desc)?,
            indent,
        )?),
        Cmd::Dump { image, output } => {
            let d = nvmem_image::dump::dump(&read(&image)?)?;
            if let Some(why) = &d.fallback {
                eprintln!(
                    "nvmem-image: {}: described as a blob: recognised as {why}",
                    image.display()
                );
            }
            match output {
                Some(out) => std::fs::write(&out, &d.toml).map_err(|source| Error::Io {
                    path: out.display().to_string(),
                    source,
                }),
                None => emit(&d.toml),
            }
        }
        Cmd::View {
            listing,
            attached,
            max_cells,
            json,
        } => {
            let text = if listing.as_os_str() == "-" {
                let mut t = String::new();
                std::io::Read::read_to_string(&mut std::io::stdin(), &mut t).map_err(|source| {
                    Error::Io {
                        path: "<stdin>".into(),
                        source,
                    }
                })?;
                t
            } else {
                String::from_utf8_lossy(&read(&listing)?).into_owned()
            };
            let mut devices = nvmem_image::view::parse_listing(&text)
                .map_err(|e| Error::Usage(format!("{}: {e}", listing.display())))?;
            for a in &attached {
                let (dev, image) = a.split_once('=').ok_or_else(|| {
                    Error::Usage(format!("--attached {a:?}: expected DEVICE=IMAGE"))
                })?;
                let d = devices.iter_mut().find(|d| d.name == dev).ok_or_else(|| {
                    Error::Usage(format!(
                        "--attached {a:?}: no device {dev:?} in the listing"
                    ))
                })?;
                d.image = Some(image.to_owned());
            }
            if json {
                emit(&format!(
                    "{}\n",
                    serde_json::to_string_pretty(&devices).expect("serialisable")
                ))
            } else {
                emit(&nvmem_image::view::render(&devices, max_cells))
            }
        }
        Cmd::Inspect {
            image,
            format,
            json,
        } => {
            let data = read(&image)?;
            let format = match nvmem_image::format::by_name(&format) {
                Some(f) => Format::Named(f.name()),
                None => Format::Auto,
            };
            let path = image.display().to_string();
            let found = inspect::inspect(&data, format).map_err(|err| Error::Image {
                path: path.clone(),
                err,
            })?;
            if json {
                emit(&format!(
                    "{}\n",
                    serde_json::to_string_pretty(&found).expect("serialisable")
                ))?;
            } else {
                emit(&found.to_string())?;
            }
            found.check().map_err(|err| Error::Image { path, err })
        }
        Cmd::Cells {
            input,
            layout,
            index,
            env_size,
            env_redundant_offset,
            bytes,
            json,
        } => {
            let desc = if is_desc(&input) {
                Some(Description::load(&input)?)
            } else {
                None
            };
            let node = desc.as_ref().and_then(|d| d.extras.layout.clone());
            let layout: Layout = match (&layout, &node) {
                (Some(l), _) => l.parse().map_err(Error::Usage)?,
                (None, Some(n)) => n.compatible.parse().map_err(Error::Usage)?,
                (None, None) => {
                    return Err(Error::Usage(
                        "--layout is needed: the input names no [layout]".into(),
                    ))
                }
            };
            // the description's layout node gives the U-Boot geometry the
            // command line does not
            let from_node = node_of_layout(&layout, &node);
            let env_size = env_size.or(from_node.and_then(|n| n.env_size));
            let env_redundant_offset =
                env_redundant_offset.or(from_node.and_then(|n| n.env_redundant_offset));
            let (data, fixed) = if let Some(d) = &desc {
                let fixed = if layout == Layout::Fixed {
                    d.fixed_cells()?
                } else {
                    vec![]
                };
                match &bytes {
                    Some(b) => (read(b)?, fixed),
                    None => (d.build()?, fixed),
                }
            } else if bytes.is_some() {
                return Err(Error::Usage(
                    "--bytes goes with a description (.toml) input: an image is its own bytes"
                        .into(),
                ));
            } else if layout == Layout::Fixed {
                return Err(Error::Usage(
                    "fixed-layout cells come from a description (.toml), not an image".into(),
                ));
            } else {
                (read(&input)?, vec![])
            };
            let path = bytes.as_ref().unwrap_or(&input).display().to_string();
            let env = nvmem_image::uboot::Geometry {
                env_size,
                redundant_offset: env_redundant_offset,
            };
            let cells = cells::predict(layout, &data, &fixed, index, env)
                .map_err(|err| Error::Image { path, err })?;
            let mut out = String::new();
            if json {
                out = format!(
                    "{}\n",
                    serde_json::to_string_pretty(&cells).expect("serialisable")
                );
            } else {
                out.push_str(&format!(
                    "{:<32} {:>6} {:>5}  content\n",
                    "sysfs cell", "offset", "size"
                ));
                for c in &cells {
                    let content = match (&c.text, &c.content, &c.read_error) {
                        (Some(t), _, _) => format!("{t:?}"),
                        (None, Some(h), _) => h.clone(),
                        (None, None, e) => format!("read fails: {}", e.as_deref().unwrap_or("?")),
                    };
                    let idx = c
                        .indexed
                        .as_ref()
                        .map(|v| format!("  [index {}: {v}]", index.unwrap_or(0)))
                        .unwrap_or_default();
                    out.push_str(&format!(
                        "{:<32} {:>#6x} {:>5}  {content}{idx}\n",
                        c.sysfs, c.offset, c.size
                    ));
                }
            }
            emit(&out)?;
            Ok(())
        }
    }
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("nvmem-image: {e}");
            ExitCode::FAILURE
        }
    }
}
