#!/usr/bin/env python3
"""report.py [BUILD] [OUT] [--check]: one page of what the lab found, from the last runs.

Reads what `make test` and the benchmarks leave in BUILD (default build/):
per board and kernel the JUnit results, boot-to-shell time, kernel version
and the KUnit totals of the first boot (test-logs/), the riscv_hwprobe
benchmark of the test sessions, build/report-data/ (stage times of every
`make test`, the Rust lock, layout and Rust layout benchmarks). Writes OUT
(default BUILD/report): index.html, index.md and one SVG per plot. What was not run
yet is said on the page, with the command that produces it. --check opens
the page in headless Chromium (every image loads, no console error) and
saves OUT/screenshot.png.
"""
import html
import json
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

BOARDS = [("riscv64-virt", "ours"), ("ast2600-evb", "ours"), ("riscv64-virt", "ref"),
          ("ast2600-evb", "ref")]
COLORS = {"ours": "#1f77b4", "ref": "#ff7f0e", "C": "#7f7f7f", "Rust": "#d62728"}


def junit(path):
    """(tests, failures, errors, skipped, seconds) of a JUnit file, or None"""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return None
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    total = [0, 0, 0, 0, 0.0]
    for s in suites:
        for i, key in enumerate(("tests", "failures", "errors", "skipped")):
            total[i] += int(s.get(key, 0))
        total[4] += float(s.get("time", 0))
    return tuple(total)


def kunit_totals(console):
    """(pass, fail, skip) summed over the '# Totals' lines of the first boot
    in a console log (later boots of the session repeat them), or None"""
    try:
        text = console.read_text(errors="replace")
    except OSError:
        return None
    boots = re.split(r"\] Linux version ", text)
    first = boots[1] if len(boots) > 1 else text
    found = re.findall(r"# Totals: pass:(\d+) fail:(\d+) skip:(\d+)", first)
    if not found:
        return None
    return tuple(sum(int(t[i]) for t in found) for i in range(3))


def hwprobe_bench(path):
    """{'vdso': ns, 'syscall': ns, 'cpuinfo': ns} from hwprobe-bench.txt"""
    try:
        text = path.read_text()
    except OSError:
        return None
    m = re.search(r"vdso_ns=([\d.]+) syscall_ns=([\d.]+) .*cpuinfo_ns=([\d.]+)", text)
    return dict(zip(("vdso", "syscall", "cpuinfo"), map(float, m.groups()))) if m else None


def read_json(path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def test_runs(path, last=8):
    """the last finished runs of make test: [(run start, {stage: seconds})]

    A run that stopped early (a failure, an interrupt) has no "total" and
    is left out: its few stages would read as a fast run."""
    runs = {}
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return []
    for line in lines:
        try:
            r = json.loads(line)
            runs.setdefault(r["run"], {})[r["stage"]] = r["seconds"]
        except (ValueError, KeyError, TypeError):
            continue
    return sorted((r, st) for r, st in runs.items() if "total" in st)[-last:]


def save(fig, out, name):
    fig.tight_layout()
    fig.savefig(out / name, format="svg")
    plt.close(fig)
    return name


def plot_hwprobe(data, out):
    kernels = [k for k in ("ours", "ref") if data.get(k)]
    ways = ["vdso", "syscall", "cpuinfo"]
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    width = 0.8 / len(kernels)
    for i, k in enumerate(kernels):
        ax.bar([x + i * width for x in range(3)], [data[k][w] for w in ways], width,
               label=k, color=COLORS[k])
    ax.set_xticks([x + width * (len(kernels) - 1) / 2 for x in range(3)],
                  ["vDSO", "system call", "/proc/cpuinfo"])
    ax.set_yscale("log")
    ax.set_ylabel("ns per query (log)")
    ax.set_title("riscv_hwprobe on riscv64-virt (TCG)")
    ax.legend()
    return save(fig, out, "hwprobe.svg")


def plot_locks(data, out):
    kinds = [k for k in ("mutex", "spinlock", "call") if k in data]
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    xs = range(len(kinds))
    c = ax.bar([x - 0.2 for x in xs], [data[k]["c_ns"] for k in kinds], 0.4, label="C", color=COLORS["C"])
    r = ax.bar([x + 0.2 for x in xs], [data[k]["rust_ns"] for k in kinds], 0.4, label="Rust",
               color=COLORS["Rust"])
    # the figures on the bars: a call's few ns are no visible bar next to a lock pair
    for bars in (c, r):
        ax.bar_label(bars, fmt="%.0f", fontsize=7)
    labels = [f"{k}\nRust/C {data[k]['ratio']:.3f}\n[{data[k]['ci'][0]:.3f}-{data[k]['ci'][1]:.3f}]"
              for k in kinds]
    ax.set_xticks(list(xs), labels)
    ax.set_ylabel("ns per lock+unlock (call: per call)")
    ax.set_title("Rust vs C locks, same kernel (debug, TCG)")
    ax.legend()
    return save(fig, out, "rust-locks.svg")


def plot_layouts(data, out):
    """time against size, ONIE and U-Boot environments side by side: the
    in-kernel nvmem_register() (solid) next to bind-to-cells (dashed), ours
    and 6.12; the device without layout as a dotted line"""
    base = next((d for d in data if d["layout"] == "-"), None)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, prefix, title, unit in ((axes[0], "onie", "ONIE TLV table", 1),
                                    (axes[1], "u-boot,env", "U-Boot environment", 1024)):
        pts = sorted((d for d in data if d["layout"].startswith(prefix)), key=lambda d: d["bytes"])
        xs = [d["bytes"] / unit for d in pts]
        for k in ("ours", "ref"):
            ax.plot(xs, [d["kernel_us"][k] / 1000 for d in pts], "-o", color=COLORS[k],
                    label=f"{k}: nvmem_register()")
            ax.plot(xs, [d["sysfs_us"][k] / 1000 for d in pts], "--s", color=COLORS[k],
                    label=f"{k}: bind to cells in sysfs")
            if base:
                ax.axhline(base["sysfs_us"][k] / 1000, color=COLORS[k], linestyle=":", linewidth=1)
        ax.set_xscale("log", base=2)
        ax.set_xticks(xs, [f"{x:g}" for x in xs])
        ax.set_ylim(bottom=0)
        ax.set_xlabel("bytes" if unit == 1 else "KiB")
        ax.set_ylabel("ms (median)")
        ax.set_title(title, fontsize=10)
    axes[0].legend(fontsize=7)
    fig.suptitle("NVMEM layouts against size, ours vs 6.12 (bench kernels; dotted: no layout)",
                 fontsize=10)
    return save(fig, out, "layouts.svg")


def plot_rust_layouts(data, out):
    """bind to the last cell in sysfs, median and each round, per driver:
    sl28 VPD in C and in Rust, the 2 KiB ONIE (C) and FRU (Rust) images,
    and the device without a layout as the floor"""
    bars = [("sl28-c", "sl28 VPD\nC", "C"), ("sl28-rust", "sl28 VPD\nRust", "Rust"),
            ("onie", "ONIE 2 KiB\nC", "C"), ("fru", "IPMI FRU 2 KiB\nRust", "Rust")]
    bars = [b for b in bars if b[0] in data["median_us"]]
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    for x, (key, _, lang) in enumerate(bars):
        ax.bar(x, data["median_us"][key] / 1000, 0.6, color=COLORS[lang])
        rounds = data.get("per_round_us", {}).get(key, [])
        ax.plot([x] * len(rounds), [r / 1000 for r in rounds], "k.", markersize=4)
    if "base" in data["median_us"]:
        ax.axhline(data["median_us"]["base"] / 1000, color="k", linestyle=":", linewidth=1,
                   label="no layout")
        ax.legend(fontsize=8)
    ax.set_xticks(range(len(bars)), [b[1] for b in bars])
    ax.set_ylabel("ms, bind to last cell (median; dots: rounds)")
    ax.set_title(f"NVMEM layouts in Rust vs C, same kernel ({data.get('rounds')} rounds "
                 f"x {data.get('binds')} binds)", fontsize=10)
    return save(fig, out, "rust-layouts.svg")


def rust_layouts_summary(data):
    names = {"sl28_rust_c": "sl28 VPD Rust/C", "fru_onie": "IPMI FRU (Rust) / ONIE (C), 2 KiB"}
    parts = []
    for key, name in names.items():
        r = data.get("ratios", {}).get(key, {}).get("bind_to_cells")
        if r:
            parts.append(f"{name}: {r['ratio']:.3f} (95% CI {r['ci'][0]:.3f}-{r['ci'][1]:.3f})")
    return "bind to cells, " + "; ".join(parts)


def plot_times(runs, out):
    fig, ax = plt.subplots(figsize=(8, 3.8))
    groups = [("host checks", lambda s: s.startswith("host")),
              ("kernel and image builds", lambda s: s.startswith("build ")),
              ("boot test sessions", lambda s: s.startswith("session "))]
    bottoms = [0.0] * len(runs)
    for name, match in groups:
        vals = [sum(v for s, v in stages.items() if match(s)) / 60 for _, stages in runs]
        ax.bar(range(len(runs)), vals, bottom=bottoms, label=name)
        bottoms = [b + v for b, v in zip(bottoms, vals)]
    labels = []
    for _, stages in runs:
        built = sum(v for s, v in stages.items() if s.startswith("build "))
        labels.append(("cold" if built > 120 else "warm") + f"\n{stages.get('total', 0) / 60:.0f} min")
    ax.set_xticks(range(len(runs)), labels)
    ax.set_ylabel("minutes (sessions run side by side)")
    ax.set_title("make test: stage times of the last runs (cold: kernels built)")
    ax.legend(fontsize=8)
    return save(fig, out, "test-times.svg")


def check_in_browser(index, screenshot=None, timeout=60):
    """Open the page in headless Chromium (Debian's chromium and
    chromium-driver, through selenium): the problems found, empty when it
    renders with every image loaded and no console error. Saves a
    screenshot of the whole page to `screenshot` if given."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = "/usr/bin/chromium"
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=1200,900"):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
    problems = []
    try:
        driver.set_page_load_timeout(timeout)
        driver.get(Path(index).resolve().as_uri())
        if driver.title != "nvmem-lab report":
            problems.append(f"title {driver.title!r}")
        images = driver.execute_script(
            "return Array.from(document.images).map(i => [i.getAttribute('src'), i.complete, i.naturalWidth]);")
        for src, complete, width in images:
            if not complete or not width:
                problems.append(f"image {src} did not load")
        rows = driver.execute_script("return document.querySelectorAll('table tr').length;")
        if rows < 2:
            problems.append(f"the results table has {rows} row(s)")
        for entry in driver.get_log("browser"):
            if entry.get("level") in ("SEVERE", "ERROR"):
                problems.append(f"console: {entry.get('message')}")
        if screenshot:
            height = driver.execute_script("return document.documentElement.scrollHeight;")
            driver.set_window_size(1200, min(max(height, 900), 8000))
            # the window is taller than its viewport: grow it by the difference
            inner = driver.execute_script("return window.innerHeight;")
            if inner < height:
                driver.set_window_size(1200, min(2 * height - inner + 20, 8000))
            driver.save_screenshot(str(screenshot))
    finally:
        driver.quit()
    return problems


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    build = Path(args[0]) if args else Path(__file__).resolve().parent.parent / "build"
    out = Path(args[1]) if len(args) > 1 else build / "report"
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.svg"):
        old.unlink()
    data = build / "report-data"

    rows = []
    for b, k in BOARDS:
        logs = build / b / k / "test-logs"
        j = junit(logs / "junit.xml")
        boot = (logs / "boot-to-shell.txt").read_text().strip() if (logs / "boot-to-shell.txt").exists() else None
        kver = (logs / "kernel-version.txt").read_text().strip() if (logs / "kernel-version.txt").exists() else None
        rows.append((b, k, kver, j, boot, kunit_totals(logs / "console_main")))

    hw = {k: hwprobe_bench(build / "riscv64-virt" / k / "test-logs" / "hwprobe-bench.txt")
          for k in ("ours", "ref")}
    hw = {k: v for k, v in hw.items() if v}
    runs = test_runs(data / "test-times.jsonl")
    # (title, figures or None, their summary, their plot, what produces them)
    figures = [
        ("riscv_hwprobe: vDSO, system call, /proc/cpuinfo", hw,
         lambda d: ", ".join(f"{k}: system call / vDSO {v['syscall'] / v['vdso']:.0f}x, "
                             f"/proc/cpuinfo / vDSO {v['cpuinfo'] / v['vdso']:.0f}x" for k, v in d.items()),
         plot_hwprobe, "`make test` (riscv64-virt sessions)"),
        ("Rust vs C locks", read_json(data / "rust-locks.json"),
         lambda d: "; ".join(f"{k}: Rust/C {v['ratio']:.3f} (95% CI {v['ci'][0]:.3f}-{v['ci'][1]:.3f})"
                             for k, v in d.items()),
         plot_locks, "`make bench-rust-locks`"),
        ("NVMEM layouts: in the kernel and end to end, ours vs 6.12", read_json(data / "layouts.json"),
         lambda d: "; ".join(f"{x['image']}: in the kernel ours/ref "
                             f"{x['kernel_us']['ours'] / x['kernel_us']['ref']:.2f}, "
                             f"end to end {x['sysfs_us']['ours'] / x['sysfs_us']['ref']:.2f}" for x in d),
         plot_layouts, "`make bench-layouts`"),
        ("NVMEM layouts in Rust vs C, same kernel", read_json(data / "rust-layouts.json"),
         rust_layouts_summary, plot_rust_layouts, "`make bench-rust-layouts`"),
        ("make test stage times", runs, lambda d: f"{len(d)} finished run(s)", plot_times, "`make test`"),
    ]
    sections = []  # (title, text, image or None)
    for title, found, summary, plot, command in figures:
        if found:
            sections.append((title, summary(found), plot(found, out)))
        else:
            sections.append((title, f"no figures yet: {command}", None))

    def outcome(j):
        if not j:
            return "not run"
        tests, fail, err, skip, _ = j
        state = "FAILED" if fail or err else "passed"
        return f"{state}: {tests - fail - err - skip} passed, {fail + err} failed, {skip} skipped"

    md = ["# nvmem-lab report", "", "| board | kernel | Linux | tests | time | boot to shell | KUnit |",
          "|---|---|---|---|---|---|---|"]
    trs = []
    for b, k, kver, j, boot, ku in rows:
        cells = [b, k, kver or "-", outcome(j), f"{j[4] / 60:.1f} min" if j else "-",
                 f"{boot} s" if boot else "-",
                 f"{ku[0]} passed, {ku[1]} failed, {ku[2]} skipped" if ku else "-"]
        md.append("| " + " | ".join(cells) + " |")
        cls = "fail" if j and (j[1] or j[2]) else ("ok" if j else "none")
        trs.append(f'<tr class="{cls}">' + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    body = []
    for title, text, img in sections:
        md += ["", f"## {title}", "", text]
        body.append(f"<h2>{html.escape(title)}</h2><p>{html.escape(text)}</p>")
        if img:
            md += ["", f"![{title}]({img})"]
            body.append(f'<img src="{img}" alt="{html.escape(title)}">')
    (out / "index.md").write_text("\n".join(md) + "\n")
    (out / "index.html").write_text(f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>nvmem-lab report</title>
<style>
body {{ font-family: sans-serif; margin: 2em; max-width: 70em; }}
table {{ border-collapse: collapse; }} td, th {{ border: 1px solid #ccc; padding: .3em .6em; }}
tr.fail td {{ background: #fdd; }} tr.ok td:nth-child(4) {{ color: #070; }}
img {{ max-width: 100%; border: 1px solid #eee; }}
</style></head><body>
<h1>nvmem-lab report</h1>
<table><tr><th>board</th><th>kernel</th><th>Linux</th><th>tests</th><th>time</th><th>boot to shell</th><th>KUnit (first boot)</th></tr>
{"".join(trs)}
</table>
{"".join(body)}
</body></html>
""")
    print(f"[report] {out / 'index.html'} (and index.md): "
          f"{sum(1 for r in rows if r[3])} test session(s), {sum(1 for s in sections if s[2])} plot(s)")
    if "--check" in sys.argv:
        problems = check_in_browser(out / "index.html", out / "screenshot.png")
        if problems:
            print("[report] the page in Chromium: " + "; ".join(problems))
            return 1
        print(f"[report] renders in Chromium, every image loaded, no console error; "
              f"screenshot {out / 'screenshot.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
