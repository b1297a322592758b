#!/usr/bin/env python3
"""Checks of stepwise_report (suite 'report'). Each mode runs the generator and asserts what
the report must contain; exit 0 pass, 1 fail, 77 skip (no gnuplot, for the rendering check).

  check_report.py tables    EXE FIXTURES   ladder, ceiling, tuning and size tables from fixtures
                                           (FIXTURES/results, with the sweep grids of FIXTURES/steps)
  check_report.py render    EXE FIXTURES   gnuplot renders every figure to a non-empty PNG
  check_report.py malformed EXE FIXTURES FILE WHERE   exit 2 with FILE:LINE on stderr
  check_report.py missing   EXE FIXTURES   missing inputs: exit 2 naming the path
  check_report.py interrupted EXE FIXTURES  a cut-off last line of --extra is skipped with a warning
  check_report.py committed EXE ROOT       report/REPORT.md and report/figures match report/results
  check_report.py ceilings  EXE FIXTURES   "% of ceiling" of ae, epic and mri rows against a probe of round numbers
  check_report.py reconstructions EXE FIXTURES   ae's recorded reconstructions become a grid figure
  check_report.py tolerance EXE FIXTURES   mri's ladder at the default --tolerance; every tolerance in its own table
  check_report.py scaling   EXE FIXTURES   multi-GPU records (ranks.size) and the peer's DDP runs: the Scaling table's
                                           speedups and efficiencies, the figure's data and rendering; no section
                                           without them
  check_report.py roofline  EXE ROOT       each track's compulsory bytes against a hand count; every GPU rung of the
                                           committed report's rooflines in its table and placed ones in its figure
  check_report.py local     EXE FIXTURES   fixtures/local: a CPU-only machine's rows (local.jsonl) beside every GPU
                                           table's own, labelled with the machine
  check_report.py extra_name EXE FIXTURES  an --extra file named relative to the repository or by its file name
  check_report.py over_ceiling EXE FIXTURES   a row over 100 % of its ceiling marked, its reason under the table
  check_report.py roofline_labels EXE ROOT    the rooflines' labels inside the plot and apart, as gnuplot draws them
                                           (77 without gnuplot)
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

NOT_RENDERED = "> **Plots not rendered:**"
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)


def run(exe, *args):
    return subprocess.run([exe, *args], capture_output=True, text=True)


def generate(exe, results, out, *extra):
    p = run(exe, "--results", results, "--out", out, "--quiet", *extra)
    if p.returncode != 0:
        sys.exit(f"FAIL: stepwise_report exited {p.returncode}:\n{p.stderr}")
    with open(os.path.join(out, "REPORT.md")) as f:
        return f.read()


def section(text, heading):
    """The text from a heading line to the next heading of the same or a higher level."""
    start = text.find(heading + "\n")
    check(start >= 0, f"heading {heading!r} present")
    if start < 0:
        return ""
    level = heading.split(" ")[0]
    rest = text[start + len(heading) + 1:]
    ends = [m.start() for m in re.finditer(r"^#{1,%d} " % len(level), rest, re.M)]
    return rest[: ends[0]] if ends else rest


def row(text, step):
    """Cells of the table row of `step` (first column `step`)."""
    for line in text.splitlines():
        if line.startswith(f"| `{step}` |"):
            return [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
    check(False, f"row {step} present")
    return []


def marked(cell):
    """(value, mark) of a cell "150.0 % [a]"; (cell, "") for an unmarked one."""
    m = re.fullmatch(r"(.*) (\[[a-z]\d*\])", cell or "")
    return (m.group(1), m.group(2)) if m else (cell, "")


def figures_of(text):
    return re.findall(r"\]\(figures/([^)]+)\.png\)", text)


def mode_tables(exe, fixtures):
    tmp = tempfile.mkdtemp()
    try:
        steps = ["--steps", os.path.join(fixtures, "steps")]
        md = generate(exe, os.path.join(fixtures, "results"), tmp, "--no-render", *steps)
        check("37 records" in md, "all 37 fixture records read (blank lines skipped)")
        check(NOT_RENDERED in md, "--no-render says the plots were not rendered")

        ceil = section(md, "## Measured ceilings")
        check("| NVIDIA H100 80GB HBM3 | 132 | 1980 | 4.000 T | 60.00 T | n/a | 3.000 T | n/a | 2.000 T |" in ceil,
              "ceiling row: SFU 4e12 -> 2e12 pairs/s; no half2 rate and no host-to-device rate in this probe: n/a")

        summary = section(md, "## Summary")
        check("| mri F^H d, small, NVIDIA H100 80GB HBM3 | `00_cpu` | `03_sfu` | 1000 -> 1.000 | 1000x | 1.000 T pairs/s | 50.0 % |"
              in summary, "summary: first row to fastest step")
        check("| newtrack, demo, NVIDIA H100 80GB HBM3 | `00_base` | `00_base` |" in summary,
              "summary: a step that failed validation is not the fastest")

        h100 = section(md, "### F^H d, problem small (1000000 samples x 1000 voxels), NVIDIA H100 80GB HBM3")
        check("00, 01 on Fixture CPU (16 threads), commit `fix0001`" in h100, "CPU rows labelled with host and commit")
        check("02, 03 on NVIDIA H100 80GB HBM3, commit `fix0002`" in h100, "GPU rows labelled with device and commit")
        r = row(h100, "01_cpu_omp")
        check(r[2:6] == ["100.0", "150.0", "10.0x", "10.0x"], f"newest 01_cpu_omp record wins: {r}")
        r = row(h100, "02_gather")
        # 02 declares 00 its parent (fixtures/steps/mri/02_gather/parent): its step speedup is over
        # 00, not the row above, and says so; 01 declares none and keeps the row above (10.0x).
        check(r[4:9] == ["100x (over 00)", "100x", "100.0 G", "5.0 %", "PASS"], f"02 speedups and % of ceiling: {r}")
        r = row(h100, "03_sfu")
        check(r[1] == "GPU SFU \\| fast", f"'|' in a title is escaped: {r}")
        check(r[4:11] == ["10.0x", "1000x", "1.000 T", "50.0 %", "PASS", "2.00e-04", "80.5"], f"03 row: {r}")
        # Both CPU rows have no GPU ceiling, for one reason: each cell is marked, and the table says
        # the reason once, under it.
        check(row(h100, "00_cpu")[7] == "n/a [a]" and row(h100, "01_cpu_omp")[7] == "n/a [a]",
              f"CPU rows have no GPU ceiling, marked: {row(h100, '00_cpu')[7:8]} {row(h100, '01_cpu_omp')[7:8]}")
        check(h100.count("\n[a] n/a: CPU.\n") == 1 and "n/a (CPU)" not in h100, "the repeated reason is a footnote")

        h200 = section(md, "### F^H d, problem small (1000000 samples x 1000 voxels), NVIDIA H200")
        r = row(h200, "03_sfu")
        # 03's parent, 02, has no row on the H200: no step speedup (not one over 01, the row above).
        # The table's one row without a probe keeps its reason in the cell.
        check(r[4:8] == ["-", "1250x", "1.250 T", "n/a (no probe on NVIDIA H200)"], f"H200 row without probe: {r}")
        check("`02_gather`" not in h200, "an H100 row does not leak into the H200 table")

        large = section(md, "### F^H d, problem large (3200000 samples x 262144 voxels), NVIDIA H100 80GB HBM3")
        check("Row 03 was checked on a seeded random sample of the outputs (2000 of 262144)" in large,
              "sampled validation is said")
        q = section(md, "### Q, problem small (1000000 samples x 1000 voxels), CPU only")
        check("PSNR" not in q, "a column no row has is left out")

        tune = section(md, "#### 08_tuned, F^H d, problem small, NVIDIA H100 80GB HBM3, commit fix0002")
        check("8 points over threads x unroll x chunk" in tune, "tuning axes found in params")
        check("1 point failed validation (left out)" in tune, "failed tuning point reported")
        check("Best point: threads 256, unroll 4, chunk 4096: 1.000 ms, 1.000 T pairs/s (50.0 % of the ceiling)" in tune,
              "best tuning point")
        check("| 1 | 353.6 G | 707.1 G |" in tune and "| 4 | 500.0 G | **1.000 T** |" in tune,
              "heat-map table: best over chunk, best point bold")
        check("-chunk.png" in tune, "runtime vs samples per launch figure")

        mc = section(md, "## mc: Monte Carlo photon transport (tiny_mc)")
        check(row(mc, "04_gpu_rng")[4:8] == ["1000x", "1000x", "1.049 M", "n/a"], "mc row, ceiling n/a")
        check("heat-profile.png" in mc, "heat profile figure")
        check("| 1048576 | 40.00 k | 5.000 M |" in mc, "photons/ms against photons table")
        check("6 points over threads x photons-per-thread (" in mc, "the grid's keys are the axes, derived params are not")
        check("Best point: threads 512, photons-per-thread 256" in mc, "mc tuning best point")
        old = section(md, "#### 07_fixed_point_rows, problem small, NVIDIA H100 80GB HBM3, commit fix0000")
        check("2 points over threads (2025-12-01)" in old and "Best point: threads 512: 0.4194 ms, 2.500 M photons/ms." in old,
              "a superseded sweep is summarised")
        check("Superseded by the sweep of commit fix0001 above: not drawn." in old and "|" not in old and "figures/" not in old,
              "a superseded sweep has no table and no figure")
        check("fix0000" not in " ".join(figures_of(md)), "no figure of a superseded commit")

        other = section(md, "## newtrack: newtrack")
        check(row(other, "01_fast")[2:4] + row(other, "01_fast")[8:9] == ["5.000", "7.500", "**FAIL**"],
              "an unknown track gets the generic ladder; failed validation shown")

        timed = section(md, "## timed: timed")
        check(row(timed, "01_fast")[4:6] == ["4.00x", "4.00x"],
              f"a time per unit of work ('ms/item') is better when lower: 40 -> 10 ms/item is 4x, got {row(timed, '01_fast')}")

        names = figures_of(md)
        check(len(names) == 12, f"12 figures referenced, got {len(names)}")
        for n in names:
            for ext in (".gp", ".dat"):
                p = os.path.join(tmp, "figures", n + ext)
                check(os.path.isfile(p) and os.path.getsize(p) > 0, f"{n}{ext} written")
        with open(os.path.join(tmp, "figures", "mc-small-nvidia-h100-80gb-hbm3-heat-profile.dat")) as f:
            check(len([l for l in f if not l.startswith("#")]) == 5, "heat profile data has the 5 shells")

        # Deterministic: a second run gives the same bytes.
        tmp2 = tempfile.mkdtemp()
        try:
            check(generate(exe, os.path.join(fixtures, "results"), tmp2, "--no-render", *steps) == md, "REPORT.md reproducible")
            for n in sorted(os.listdir(os.path.join(tmp, "figures"))):
                with open(os.path.join(tmp, "figures", n), "rb") as a, open(os.path.join(tmp2, "figures", n), "rb") as b:
                    check(a.read() == b.read(), f"figures/{n} reproducible")
        finally:
            shutil.rmtree(tmp2)
    finally:
        shutil.rmtree(tmp)


def mode_render(exe, fixtures):
    if not shutil.which("gnuplot"):
        print("SKIP: gnuplot is not installed")
        sys.exit(77)
    tmp = tempfile.mkdtemp()
    try:
        md = generate(exe, os.path.join(fixtures, "results"), tmp)
        check(NOT_RENDERED not in md, "rendered report has no not-rendered note")
        names = figures_of(md)
        check(len(names) > 0, "figures referenced")
        for n in names:
            p = os.path.join(tmp, "figures", n + ".png")
            ok = os.path.isfile(p) and os.path.getsize(p) > 1000
            check(ok, f"{n}.png is a non-empty image")
            if ok:
                with open(p, "rb") as f:
                    check(f.read(8) == b"\x89PNG\r\n\x1a\n", f"{n}.png is a PNG")
    finally:
        shutil.rmtree(tmp)


def mode_malformed(exe, fixtures, name, where):
    tmp = tempfile.mkdtemp()
    try:
        path = os.path.join(fixtures, "malformed", name)
        p = run(exe, "--results", os.path.join(fixtures, "results"), "--extra", path, "--out", tmp, "--no-render")
        check(p.returncode == 2, f"exit 2 for {name}, got {p.returncode}")
        check(f"{path}:{where}" in p.stderr, f"stderr names {path}:{where}: {p.stderr!r}")
        check(not os.path.exists(os.path.join(tmp, "REPORT.md")), "no report from malformed input")
    finally:
        shutil.rmtree(tmp)


def mode_missing(exe, fixtures):
    tmp = tempfile.mkdtemp()
    try:
        p = run(exe, "--results", os.path.join(tmp, "no-such-folder"), "--out", tmp)
        check(p.returncode == 2 and "no-such-folder" in p.stderr, f"missing results folder: {p.returncode} {p.stderr!r}")
        p = run(exe, "--results", os.path.join(fixtures, "results"), "--extra", os.path.join(tmp, "gone.jsonl"), "--out", tmp)
        check(p.returncode == 2 and "gone.jsonl" in p.stderr, f"missing extra file: {p.returncode} {p.stderr!r}")
        p = run(exe, "--no-such-flag")
        check(p.returncode == 2 and "no-such-flag" in p.stderr, f"unknown flag: {p.returncode} {p.stderr!r}")
        bad = os.path.join(tmp, "steps", "mc", "05_x")
        os.makedirs(bad)
        with open(os.path.join(bad, "sweep.json"), "w") as f:
            f.write('{"args": [], "grid": [1, 2]}\n')
        p = run(exe, "--results", os.path.join(fixtures, "results"), "--steps", os.path.join(tmp, "steps"), "--out", tmp)
        check(p.returncode == 2 and "05_x/sweep.json" in p.stderr, f"bad sweep.json: {p.returncode} {p.stderr!r}")
        os.remove(os.path.join(bad, "sweep.json"))
        for content in ["04_y sideways\n", "\n"]:
            with open(os.path.join(bad, "parent"), "w") as f:
                f.write(content)
            p = run(exe, "--results", os.path.join(fixtures, "results"), "--steps", os.path.join(tmp, "steps"), "--out", tmp)
            check(p.returncode == 2 and "05_x/parent" in p.stderr, f"bad parent {content!r}: {p.returncode} {p.stderr!r}")
        empty = os.path.join(tmp, "empty")
        os.mkdir(empty)
        md = generate(exe, empty, os.path.join(tmp, "out"), "--no-render")
        check("No results recorded yet" in md, "empty results folder: 'no results recorded yet'")
    finally:
        shutil.rmtree(tmp)


def without_note(text):
    """The report less its not-rendered paragraph (one line and the blank line after it)."""
    lines = text.splitlines(True)
    for i, line in enumerate(lines):
        if line.startswith(NOT_RENDERED):
            return "".join(lines[:i] + lines[i + 2:])
    return text


def mode_committed(exe, root):
    committed = os.path.join(root, "report")
    tmp = tempfile.mkdtemp()
    try:
        md = generate(exe, os.path.join(committed, "results"), tmp, "--no-render")
        with open(os.path.join(committed, "REPORT.md")) as f:
            have = f.read()
        hint = "regenerate it: stepwise_report --results report/results --out report"
        check(without_note(have) == without_note(md), f"report/REPORT.md matches report/results ({hint})")
        want_files = sorted(os.listdir(os.path.join(tmp, "figures")))
        fig_dir = os.path.join(committed, "figures")
        have_files = sorted(n for n in os.listdir(fig_dir) if not n.endswith(".png")) if os.path.isdir(fig_dir) else []
        check(have_files == want_files, f"report/figures holds the scripts and data of report/results ({hint})")
        for n in set(want_files) & set(have_files):
            with open(os.path.join(tmp, "figures", n), "rb") as a, open(os.path.join(fig_dir, n), "rb") as b:
                check(a.read() == b.read(), f"report/figures/{n} matches ({hint})")
        if NOT_RENDERED not in have:
            for n in figures_of(have):
                p = os.path.join(fig_dir, n + ".png")
                check(os.path.isfile(p) and os.path.getsize(p) > 0, f"report/figures/{n}.png rendered ({hint})")
    finally:
        shutil.rmtree(tmp)


def mode_interrupted(exe, fixtures):
    """A local results file whose last line was cut off (a run killed while appending) is read
    with a warning naming file and line; the same line anywhere else, or in the committed
    results folder, stops the report with exit 2."""
    tmp = tempfile.mkdtemp()
    try:
        results = os.path.join(fixtures, "results")
        with open(os.path.join(results, "mri-fixture.jsonl")) as f:
            good = [line for line in f if line.strip()][:2]
        cut = good[1][: len(good[1]) // 2]
        local = os.path.join(tmp, "local.jsonl")
        with open(local, "w") as f:
            f.write(good[0] + good[1] + cut)
        p = run(exe, "--results", results, "--extra", local, "--out", os.path.join(tmp, "a"), "--no-render", "--quiet")
        check(p.returncode == 0, f"cut last line of --extra: exit {p.returncode} {p.stderr!r}")
        check(f"{local}:3:" in p.stderr and "warning" in p.stderr, f"warning names {local}:3: {p.stderr!r}")
        with open(local, "w") as f:
            f.write(good[0] + cut + "\n" + good[1])
        p = run(exe, "--results", results, "--extra", local, "--out", os.path.join(tmp, "b"), "--no-render", "--quiet")
        check(p.returncode == 2 and f"{local}:2: not valid JSON" in p.stderr, f"cut middle line: {p.returncode} {p.stderr!r}")
        strict = os.path.join(tmp, "strict")
        os.mkdir(strict)
        with open(os.path.join(strict, "cut.jsonl"), "w") as f:
            f.write(good[0] + cut)
        p = run(exe, "--results", strict, "--out", os.path.join(tmp, "c"), "--no-render", "--quiet")
        check(p.returncode == 2 and "cut.jsonl:2: not valid JSON" in p.stderr, f"cut line in results folder: {p.returncode} {p.stderr!r}")
    finally:
        shutil.rmtree(tmp)


def mode_hosts(exe, fixtures):
    """A CPU row names no GPU: each GPU's table takes the CPU rows of its own results file, even
    when another GPU host's CPU row is newer; a peer's modes are separate rows of one table."""
    with open(os.path.join(fixtures, "results", "mc-fixture.jsonl")) as f:
        cpu, gpu = [json.loads(l) for l in f if l.strip()][:2]
    with tempfile.TemporaryDirectory() as tmp:
        results = os.path.join(tmp, "results")
        os.makedirs(results)
        for tag, gpu_name, cpu_ms, when in [("a", "GPU A", 100.0, "2026-01-01T00:00:00Z"),
                                            ("b", "GPU B", 400.0, "2026-01-02T00:00:00Z")]:
            c = json.loads(json.dumps(cpu)); g = json.loads(json.dumps(gpu))
            c["timing"]["kernel_ms"]["median"] = cpu_ms; c["time"] = g["time"] = when
            g["device"]["name"] = gpu_name
            peers = []
            for mode, ms in [("fp32", 2.0), ("tf32_cl", 1.0)]:
                r = json.loads(json.dumps(g)); r["step"] = "peer"; r["params"] = {"mode": mode}
                r["timing"]["kernel_ms"]["median"] = ms; peers.append(r)
            with open(os.path.join(results, f"mc-{tag}.jsonl"), "w") as f:
                for r in [c, g, *peers]:
                    f.write(json.dumps(r) + "\n")
        md = generate(exe, results, os.path.join(tmp, "out"), "--no-render")
        for gpu_name, cpu_ms in [("GPU A", "100.0"), ("GPU B", "400.0")]:
            table = section(md, f"### problem small, {gpu_name}")
            check(row(table, "00_cpu")[2:3] == [cpu_ms], f"{gpu_name}'s table has its own host's CPU row ({cpu_ms} ms)")
            check(row(table, "peer fp32") and row(table, "peer tf32_cl"), f"{gpu_name}'s table has both peer modes")


LAPTOP = "Laptop CPU (8 threads)"


def columns(table):
    """The head of the first table in `table`: column name -> index."""
    head = next((l for l in table.splitlines() if l.startswith("| step |")), "")
    return {c.strip(): i for i, c in enumerate(head.split("|")[1:-1])}


def row_on(text, step, machine):
    """Cells of another machine's row of `step` ("`00_cpu` on Laptop CPU (8 threads)")."""
    for line in text.splitlines():
        if line.startswith(f"| `{step}` on {machine} |"):
            return [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
    check(False, f"row {step} on {machine} present")
    return []


def mode_local(exe, fixtures):
    """fixtures/local: a GPU host's records (its CPU rows in its own file, as the committed
    results hold them; an H100 host's file without CPU rows) and a laptop's local.jsonl, CPU
    rows only, a day newer and 4x slower. Every GPU table of each track shows the laptop's
    rows beside its own, labelled with the laptop, climbing their own ladder; the host's rows
    stay, and the summary is the host's."""
    local = os.path.join(fixtures, "local")
    with tempfile.TemporaryDirectory() as tmp:
        md = generate(exe, os.path.join(local, "results"), tmp, "--no-render",
                      "--extra", os.path.join(local, "local.jsonl"))
        tables = {
            "mri": ["### F^H d, problem small (32768 samples x 32768 voxels), NVIDIA H100 80GB HBM3",
                    "### F^H d, problem small (32768 samples x 32768 voxels), NVIDIA H200",
                    "### Q, problem small (32768 samples x 32768 voxels), NVIDIA H200"],
            "mc": ["### problem small, NVIDIA H200"],
            "ae": ["### batch 16, problem small, NVIDIA H200"],
            "epic": ["### problem small, NVIDIA H200"]}
        for track, headings in tables.items():
            part = md[md.find(f"\n## {track}: "):]
            part = part[: part.find("\n## ", 1)] if part.find("\n## ", 1) > 0 else part
            for heading in headings:
                t = section(part, heading)
                col = columns(t)
                steps = ["00_cpu"] + (["01_cpu_omp"] if track != "epic" else [])
                check(f"on {LAPTOP}, commit `fixlap1`" in t, f"{track} {heading}: the Rows line names the laptop")
                for step in steps:
                    guest, own = row_on(t, step, LAPTOP), row(t, step)
                    if not guest or not own:
                        continue
                    ms = col.get("time (ms)", 2)
                    check(abs(float(guest[ms]) / float(own[ms]) - 4) < 0.01,
                          f"{track} {heading} {step}: the laptop's row beside the host's own: {guest[ms]} vs {own[ms]}")
                # The laptop's 01 over the laptop's 00 (the same ratio as the host's, both 4x slower);
                # its cumulative over the table's first row, the host's 00.
                if track != "epic" and "H100" not in heading:
                    sp = col.get("step speedup", 4)
                    check(row_on(t, "01_cpu_omp", LAPTOP)[sp:sp + 1] == row(t, "01_cpu_omp")[sp:sp + 1],
                          f"{track} {heading}: the laptop's step speedup over its own 00")
                    cu = col.get("cumulative", 5)
                    check(row_on(t, "00_cpu", LAPTOP)[cu:cu + 1] == ["0.25x"],
                          f"{track} {heading}: the laptop's 00 against the host's: {row_on(t, '00_cpu', LAPTOP)}")
        check(LAPTOP not in section(md, "## Summary"), "the summary is the GPU hosts' ladders")
        fm = section(md, "### batch 16, problem fashion-mnist, CPU only")
        check(f"Rows: 00 on {LAPTOP}" in fm, "a problem only the laptop ran: its own table, naming the laptop")


def mode_extra_name(exe, fixtures):
    """An --extra file is named relative to the repository (the folder holding report/ of
    --results), or by its file name outside it: never by an absolute path, so the same records
    give the same REPORT.md wherever the checkout lies and however the path was given."""
    local = os.path.join(fixtures, "local")
    with tempfile.TemporaryDirectory() as tmp:
        repo = os.path.join(tmp, "repo")
        shutil.copytree(os.path.join(local, "results"), os.path.join(repo, "report", "results"))
        os.makedirs(os.path.join(repo, "build", "results"))
        shutil.copy(os.path.join(local, "local.jsonl"), os.path.join(repo, "build", "results", "local.jsonl"))
        absolute = generate(exe, os.path.join(repo, "report", "results"), os.path.join(tmp, "a"), "--no-render",
                            "--extra", os.path.join(repo, "build", "results", "local.jsonl"))
        check("`build/results/local.jsonl` (10)" in absolute, "the extra file relative to the repository")
        check(tmp not in absolute, "no absolute path in the report")
        p = subprocess.run([os.path.abspath(exe), "--results", "report/results", "--extra", "build/results/local.jsonl",
                            "--out", os.path.join(tmp, "b"), "--no-render", "--quiet"], cwd=repo,
                           capture_output=True, text=True)
        check(p.returncode == 0, f"relative paths: {p.stderr}")
        with open(os.path.join(tmp, "b", "REPORT.md")) as f:
            check(f.read() == absolute, "the same report from relative paths")
        outside = os.path.join(tmp, "elsewhere", "local.jsonl")
        os.makedirs(os.path.dirname(outside))
        shutil.copy(os.path.join(local, "local.jsonl"), outside)
        md = generate(exe, os.path.join(repo, "report", "results"), os.path.join(tmp, "c"), "--no-render",
                      "--extra", outside)
        check("`local.jsonl` (10)" in md and tmp not in md, "an extra file outside the repository by its file name")


def mode_over_ceiling(exe, fixtures):
    """A row over 100 % of its ceiling (mri 10's recurrence does fewer sin/cos than it counts)
    is marked in its cell, in the summary as in its table, with the reason under the table,
    even where it is the table's only such row."""
    with tempfile.TemporaryDirectory() as tmp:
        results = write_ceiling_records(fixtures, tmp, lambda r: r["track"] in ("probe", "mri")
                                        and r["step"] != "11_gridding")
        md = generate(exe, results, os.path.join(tmp, "out"), "--no-render")
        reason = "over the SFU sin/cos pairs bound: the step does less of that work than counted"
        summary = section(md, "## Summary")
        got = [c.strip() for c in next((l for l in summary.splitlines() if l.startswith("| mri F^H d")), "").split("|")[1:-1]]
        check(got[1:3] == ["`07_sfu`", "`10_phase_recurrence`"] and got[-1:] == ["150.0 % [a]"],
              f"the summary's cell over 100 % is marked: {got}")
        check(f"\n[a] {reason}.\n" in summary and "(over the" not in summary, "and the reason is under the summary")
        ladder = section(md, "### F^H d, problem small, GPU P")
        check((row(ladder, "10_phase_recurrence") or [""] * 8)[7] == "150.0 % [a]" and f"\n[a] {reason}.\n" in ladder,
              f"the ladder's cell too: {row(ladder, '10_phase_recurrence')}")


def read_png(path):
    """(width, height, channels, rows of bytes) of an 8-bit PNG, as pngcairo writes them."""
    import struct
    import zlib
    with open(path, "rb") as f:
        data = f.read()
    pos, idat = 8, b""
    while pos < len(data):
        n, = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            w, h, depth, colour = struct.unpack(">IIBB", body[:10])
            bpp = {0: 1, 2: 3, 4: 2, 6: 4}[colour]
        elif kind == b"IDAT":
            idat += body
    raw, stride, rows, prev, i = zlib.decompress(idat), w * bpp, [], bytearray(w * bpp), 0
    for _ in range(h):
        kind, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a, b, c = line[x - bpp] if x >= bpp else 0, prev[x], prev[x - bpp] if x >= bpp else 0
            if kind == 1:
                line[x] = (line[x] + a) & 255
            elif kind == 2:
                line[x] = (line[x] + b) & 255
            elif kind == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif kind == 4:
                q = a + b - c
                pa, pb, pc = abs(q - a), abs(q - b), abs(q - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def text_widths(texts, tmp):
    """Each text's width in pixels as gnuplot draws it in 'Sans,9' (rendered and measured:
    between two bars, so that a space at either end counts, less the two bars alone)."""
    texts = [""] + list(texts)
    lines = []
    for i, t in enumerate(texts):
        lines.append(f"set label {i + 1} '|{t.replace(chr(39), chr(39) * 2)}|' at 4,{i * 20 + 10} left font 'Sans,9'")
    height = 20 * len(texts) + 20
    script = os.path.join(tmp, "widths.gp")
    with open(script, "w") as f:
        f.write(f"set terminal pngcairo size 1400,{height} noenhanced font 'Sans,10'\nset output 'widths.png'\n"
                f"unset border\nunset xtics\nunset ytics\nunset key\nset margins 0,0,0,0\n"
                f"set xrange [0:1400]\nset yrange [0:{height}]\n" + "\n".join(lines) + "\nplot NaN\n")
    subprocess.run(["gnuplot", "widths.gp"], cwd=tmp, check=True)
    w, h, bpp, rows = read_png(os.path.join(tmp, "widths.png"))
    out = []
    for i, _ in enumerate(texts):
        y0 = h - 1 - (i * 20 + 10)
        ink = [x for y in range(y0 - 7, y0 + 7) for x in range(w) if min(rows[y][x * bpp:x * bpp + 3]) < 160]
        out.append(max(ink) - min(ink) + 1)
    return [w - out[0] for w in out[1:]]


def mode_roofline_labels(exe, root):
    """The rooflines' labels, as gnuplot draws them: each inside the plot, none over another.
    The plot's frame comes from gnuplot itself (GPVAL_TERM_*), each label's width from drawing
    it; the committed results (the ae ladder of 27 rungs at one intensity, a peer's long mode
    names among them) and a ladder of many rungs of long names at nearly one height."""
    if not shutil.which("gnuplot"):
        print("SKIP: gnuplot is not installed")
        sys.exit(77)
    import shlex
    fixtures = os.path.join(root, "tests", "report", "fixtures")
    with open(os.path.join(fixtures, "results", "mc-fixture.jsonl")) as f:
        base = [json.loads(l) for l in f if l.strip()][1]
    with tempfile.TemporaryDirectory() as tmp:
        crowded = os.path.join(tmp, "crowded")
        os.makedirs(crowded)
        with open(os.path.join(crowded, "x.jsonl"), "w") as f:
            f.write(json.dumps({"schema": 1, "track": "probe", "step": "ceilings", "device": base["device"],
                                "commit": "fix", "time": "2026-01-01T00:00:00Z",
                                "ceilings": {"fp32_flop_per_s": 1e12, "copy_bytes_per_s": 1e11}}) + "\n")
            for i in range(40):
                r = json.loads(json.dumps(base))
                r.update({"track": "ae", "step": "pytorch" if i % 2 else f"{i:02d}_rung_with_a_long_name",
                          "params": {"batch": 2, "mode": f"mode_{i:02d}_with_a_long_name_compile_ro"} if i % 2 else {"batch": 2}})
                r["problem"] = {"name": "large", "params": {"model": {"channels": 3, "height": 8, "width": 8,
                                                                      "widths": [4, 8, 8, 4]}}}
                r["timing"]["kernel_ms"]["median"] = 1.0 + 0.01 * i
                r["work"] = {"unit": "items", "count": 1, "flop": 1e9, "steps": 3}
                r["validation"]["class"] = "fp32"
                f.write(json.dumps(r) + "\n")
        names = []
        for results, out in [(os.path.join(root, "report", "results"), "committed"), (crowded, "crowded")]:
            md = generate(exe, results, os.path.join(tmp, out), "--no-render")
            names += [(os.path.join(tmp, out, "figures"), n) for n in figures_of(md) if n.endswith("-roofline")]
        check(len(names) >= 5, f"the rooflines: {names}")
        for folder, n in names:
            with open(os.path.join(folder, n + ".gp")) as f:
                script = f.read()
            probe = script + "\nset print 'frame.txt'\nprint GPVAL_TERM_XMIN, GPVAL_TERM_XMAX, GPVAL_TERM_YMIN, GPVAL_TERM_YMAX\n"
            with open(os.path.join(folder, "probe.gp"), "w") as f:
                f.write(probe)
            subprocess.run(["gnuplot", "probe.gp"], cwd=folder, check=True, capture_output=True)
            with open(os.path.join(folder, "frame.txt")) as f:
                x0, x1, y0, y1 = (float(v) for v in f.read().split())
            xr = [float(v) for v in re.search(r"set xrange \[([^:]+):([^\]]+)\]", script).groups()]
            yr = [float(v) for v in re.search(r"set yrange \[([^:]+):([^\]]+)\]", script).groups()]
            import math
            px = lambda x: x0 + (x1 - x0) * math.log(x / xr[0]) / math.log(xr[1] / xr[0])
            py = lambda y: y0 + (y1 - y0) * math.log(y / yr[0]) / math.log(yr[1] / yr[0])
            with open(os.path.join(folder, n + ".dat")) as f:
                blocks = f.read().split("\n\n\n")
            labels = []
            for line in blocks[1].splitlines():
                if line.strip() and not line.startswith("#"):
                    v = shlex.split(line)
                    for k, text in enumerate(v[0].split("\\n")):  # a label of several lines
                        labels.append((text, float(v[1]), float(v[2]), k, len(v[0].split("\\n"))))
            widths = text_widths([t for t, *_ in labels], tmp)
            boxes = []
            for (text, x, y, k, lines), w in zip(labels, widths):
                # left-aligned at x (after the offset the script gives, if any), lines 13 pixels apart
                offset = re.search(r"with labels offset char ([\d.]+)", script)
                left = px(x) + (float(offset.group(1)) * 8 if offset else 0)
                mid = py(y) + ((lines - 1) / 2 - k) * 13
                boxes.append((text, left, left + w, mid - 6.5, mid + 6.5))
            for text, left, right, low, high in boxes:
                check(left >= x0 and right <= x1 and low >= y0 and high <= y1,
                      f"{n}: {text!r} inside the plot ({left:.0f}..{right:.0f} of {x0:.0f}..{x1:.0f}, "
                      f"{low:.0f}..{high:.0f} of {y0:.0f}..{y1:.0f})")
            for i, a in enumerate(boxes):
                for b in boxes[i + 1:]:
                    apart = a[2] <= b[1] or b[2] <= a[1] or a[4] <= b[3] or b[4] <= a[3]
                    check(apart, f"{n}: {a[0]!r} and {b[0]!r} do not overlap")
            placed = " ".join(t for t, *_ in labels)
            rungs = roofline_rungs(os.path.join(folder, n + ".dat"))
            for label in rungs:
                words = label.split(" ")
                check(all(w in placed for w in words), f"{n}: rung {label!r} named by a label")


def mode_sections(exe, fixtures):
    """Fields that some tracks record become parts of their tables: params.phase_ms_per_gulp a
    phase table whose sum is the phases', training.losses a loss figure that names the images
    when the rows trained on different ones, sky (epic's --sky) an image of the newest sky with
    its sources marked."""
    with open(os.path.join(fixtures, "results", "mc-fixture.jsonl")) as f:
        gpu = [json.loads(l) for l in f if l.strip()][1]
    with tempfile.TemporaryDirectory() as tmp:
        results = os.path.join(tmp, "results")
        os.makedirs(results)
        a = json.loads(json.dumps(gpu)); a["track"] = "zz"; a["step"] = "01_phases"
        a["params"] = {"phase_ms_per_gulp": {"fft": 2.0, "copy": 0.5, "grid": 1.0}}
        b = json.loads(json.dumps(gpu)); b["track"] = "zz"; b["step"] = "02_trains"
        b["training"] = {"every": 2, "losses": [1.0, 0.5, 0.25]}
        b["problem"]["params"]["data"] = {"source": "synthetic"}
        c = json.loads(json.dumps(b)); c["step"] = "peer"; c["problem"]["params"]["data"] = {"source": "random-uniform"}
        # Two rows record a sky: the newer one is drawn, with its sources where their pixels say.
        d = json.loads(json.dumps(gpu)); d["track"] = "zz"; d["step"] = "03_sky"
        d["sky"] = {"intensity": [[0, 0.5, 0], [0.25, 1, 0.125]],
                    "sources": [{"name": "Cyg A-like", "l": 0.1, "m": 0.2, "flux_jy": 100, "pixel": [1, 1]}]}
        e = json.loads(json.dumps(d)); e["step"] = "04_older_sky"; e["time"] = "2000-01-01T00:00:00Z"
        e["sky"]["intensity"] = [[9, 9, 9], [9, 9, 9]]
        with open(os.path.join(results, "zz-x.jsonl"), "w") as f:
            for r in (a, b, c, d, e):
                f.write(json.dumps(r) + "\n")
        out = os.path.join(tmp, "out")
        md = generate(exe, results, out, "--no-render")
        check("| step | copy | grid | fft | sum |" in md, "phase columns in the order the phases run, then their sum")
        phases = md[md.find("Time per phase"):]
        check(row(phases, "01_phases")[1:5] == ["0.5000", "1.000", "2.000", "3.500"], "phase times and their sum")
        figs = [f for f in figures_of(md) if f.endswith("-loss")]
        check(len(figs) == 1, "one loss figure for the table")
        if figs:
            dat = open(os.path.join(out, "figures", figs[0] + ".dat")).read()
            check("# 02_trains (synthetic images)" in dat and "# peer (random-uniform images)" in dat,
                  "curves on different images name them")
            check("\n2 1\n4 0.5\n6 0.25\n" in dat, "one point every training.every steps")
        check("only the shapes of their curves compare" in md, "the text says the curves are on different images")
        skies = [f for f in figures_of(md) if f.endswith("-sky")]
        check(len(skies) == 1, "one sky figure for the table")
        if skies:
            image = open(os.path.join(out, "figures", skies[0] + ".dat")).read()
            check(image.split("\n")[:2] == ["0 0.5 0", "0.25 1 0.125"], "the newest sky, a line per row of the image")
            marks = open(os.path.join(out, "figures", skies[0] + "-sources.dat")).read()
            check('1 1 "Cyg A-like"' in marks, "the source marked at its pixel, named")
        check("The sky as `03_sky` imaged it" in md and "Cyg A-like (l 0.100, m 0.200, 100 Jy)" in md,
              "the text names the step and the sources")


def mode_studies(exe, fixtures):
    """mri's programs beside the ladder: mri_recon records make a quality table (gridding first,
    then least squares by what computed its sums) and a montage of the central plane (true,
    gridding, CPU double, the fastest ladder step, its error); mri_gridding_accuracy records a
    curve per oversampling; 11_gridding beside 10 on one GPU a speed row. None is a ladder row."""
    with open(os.path.join(fixtures, "results", "mc-fixture.jsonl")) as f:
        base = [json.loads(l) for l in f if l.strip()][1]
    plane = lambda v: [[v, v], [v, 2 * v]]

    def recon(method, fhd, q, pct, q_ms):
        r = json.loads(json.dumps(base))
        r.update({"track": "mri", "step": "recon", "kind": "cpu", "device": None})
        r["problem"] = {"name": "small-object", "digest": "abc", "params": {}}
        r["params"] = {"method": method, "iterations": 50, "lambda": 3000, "fhd_step": fhd, "q_step": q,
                       "kernel_width": 4, "oversampling": 2}
        r["timing"] = {"kernel_ms": {"median": 5, "runs": 1}, "total_ms": {"median": 9, "runs": 1},
                       "q_ms": q_ms, "fhd_ms": 2.0, "solver_ms": 3.0}
        r["validation"] = {"pass": True, "rel_error_pct": pct, "psnr_db": 40 - pct}
        r["slice"] = {"z": 16, "image": plane(pct), "true": plane(1.0)}
        return r

    rows = [recon("ls", "10_phase_recurrence", "10_phase_recurrence", 1.7, 40.0), recon("gridding", "", "", 4.8, 0),
            recon("ls", "cpu-double", "cpu-double", 1.6, 9000.0), recon("ls", "07_sfu", "07_sfu", 1.8, 90.0)]
    # The same sums with CG on the GPU: a row of its own, not the CPU solver's row replaced.
    gpu_cg = recon("ls", "10_phase_recurrence", "10_phase_recurrence", 1.7, 40.0)
    gpu_cg["params"]["solver"] = "gpu"
    gpu_cg["timing"]["solver_ms"] = 0.5
    gpu_cg["timing"]["first_image_ms"] = 400.0  # a record with the per-image split: its times per image
    rows.append(gpu_cg)
    for w, e in ((3, 2e-3), (4, 3e-4)):
        g = json.loads(json.dumps(base))
        g.update({"track": "mri", "step": "gridding", "kind": "cpu", "device": None})
        g["params"] = {"kernel_width": w, "oversampling": 2.0}
        g["validation"] = {"pass": True, "rel_l2": e}
        rows.append(g)
    for step, ms, err in (("10_phase_recurrence", 150.0, 1e-5), ("11_gridding", 3.0, 2e-4)):
        r = json.loads(json.dumps(base))
        r.update({"track": "mri", "step": step})
        r["problem"]["name"] = "large"
        r["params"] = {"kernel": "fhd"}
        r["timing"]["kernel_ms"]["median"] = ms
        r["validation"] = {"pass": True, "rel_l2": err}
        rows.append(r)
    with tempfile.TemporaryDirectory() as tmp:
        results = os.path.join(tmp, "results")
        os.makedirs(results)
        with open(os.path.join(results, "mri-x.jsonl"), "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
        out = os.path.join(tmp, "out")
        md = generate(exe, results, out, "--no-render")
        table = md[md.find("### Reconstruction"):]
        lines = [l for l in table.splitlines() if l.startswith("| ") and "rel. error" not in l]
        order = [(l.split("|")[2].strip(), l.split("|")[4].strip()) for l in lines][:5]
        check(order == [("-", "-"), ("`cpu-double`", "cpu"), ("`07_sfu`", "cpu"), ("`10_phase_recurrence`", "cpu"),
                        ("`10_phase_recurrence`", "gpu")], f"quality rows in order, CG on the CPU or the GPU: {order}")
        gpu_row = [l for l in lines if l.split("|")[4].strip() == "gpu"]
        check(bool(gpu_row) and gpu_row[0].split("|")[9].strip() == "0.5000", "the GPU solver's time in its own row")
        check(bool(gpu_row) and [c.strip() for c in gpu_row[0].split("|")[10:12]] == ["9.000", "400.0"],
              f"per image (total_ms) and first image beside it: {gpu_row[:1]}")
        cpu_row = [l for l in lines if l.split("|")[2].strip() == "`07_sfu`"]
        check(bool(cpu_row) and cpu_row[0].split("|")[7].strip().endswith("*") and cpu_row[0].split("|")[11].strip() == "n/a",
              f"a record without the split: its times marked as first runs, no first image: {cpu_row[:1]}")
        grid_row = [l for l in table.splitlines() if l.startswith("| gridding (W 4, sigma 2) |")]
        check(bool(grid_row) and [c.strip() for c in grid_row[0].split("|")[5:7]] == ["4.80", "35.200"],
              "gridding's error and PSNR")
        montage = [f for f in figures_of(md) if f.endswith("-montage")]
        check(len(montage) == 1, "one montage")
        if montage:
            script = open(os.path.join(out, "figures", montage[0] + ".gp")).read()
            check(script.count("with image") == 5, "five panels: true, gridding, CPU double, fastest step, error")
            check("LS, 10/10: 1.70 %" in script, "the fastest ladder step is the one with the least Q + F^H d time")
            err = open(os.path.join(out, "figures", montage[0] + "-4.dat")).read().split()
            check([float(v) for v in err] == [0.7, 0.7, 0.7, 1.4], "the error panel is |image - true|")
        check(any(f.endswith("gridding-accuracy") for f in figures_of(md)), "the gridding accuracy curve")
        check("| large, " in md and "| 150.0 | 3.000 | 50.0x |" in md, "11 against 10 on one GPU")
        check("### problem small-object" not in md, "the studies are not ladder tables")


def write_ceiling_records(fixtures, tmp, keep=lambda r: True):
    """TMP/results/x.jsonl with the ceiling_records() (built on the mc fixture's second record)
    that KEEP takes; returns the results folder."""
    with open(os.path.join(fixtures, "results", "mc-fixture.jsonl")) as f:
        base = [json.loads(l) for l in f if l.strip()][1]
    results = os.path.join(tmp, "results")
    os.makedirs(results)
    with open(os.path.join(results, "x.jsonl"), "w") as f:
        for r in ceiling_records(base):
            if keep(r):
                f.write(json.dumps(r) + "\n")
    return results


def ceiling_records(base):
    """Records with round numbers, so each "% of ceiling" cell has one right value: probes on
    GPU P (FP32 1 TFLOP/s, copy 100 GB/s, SFU 4 T/s) and GPU T (the same plus a TF32 tensor-core
    rate of 10 TFLOP/s), none on GPU Q; every GPU row runs 10 ms."""
    def probe(name, extra):
        return {"schema": 1, "track": "probe", "step": "ceilings", "device": dict(base["device"], name=name),
                "commit": "fix", "time": "2026-01-01T00:00:00Z",
                "ceilings": dict({"sfu_per_s": 4e12, "fp32_flop_per_s": 1e12, "copy_bytes_per_s": 1e11}, **extra)}

    def rec(track, step, gpu, work, unit="images/s", value=100.0, params=None, klass=None, problem="small"):
        r = json.loads(json.dumps(base))
        r.update({"track": track, "step": step, "kind": "gpu" if gpu else "cpu"})
        r["device"] = dict(base["device"], name=gpu) if gpu else None
        r["problem"]["name"] = problem
        r["params"] = params or {}
        r["timing"]["kernel_ms"]["median"] = 10.0
        r["work"] = dict({"unit": "items", "count": 1}, **work)
        r["throughput"] = {"value": value, "unit": unit}
        if klass:
            r["validation"]["class"] = klass
        return r

    ae = {"batch": 4}
    rows = [probe("GPU P", {}), probe("GPU H", {"h2d_pinned_bytes_per_s": 2.5e10}),
            probe("GPU T", {"tf32_tensor_flop_per_s": 1e13, "bf16_tensor_flop_per_s": 2e13,
                                                "fp16_flop_per_s": 1e13}),
            rec("ae", "00_cpu", None, {"flop": 2e9}, params=ae, klass="fp32"),
            # 2e9 flop in 10 ms: 2e11 flop/s of 1e12; its arrays took 3 MiB at most
            dict(rec("ae", "02_fp32", "GPU P", {"flop": 2e9}, params=ae, klass="fp32"),
                 memory={"peak_bytes": 3 * 2**20}),
            # params.accuracy, where recorded, is the step's precision
            rec("ae", "03_declared", "GPU P", {"flop": 4e9}, params=dict(ae, accuracy="fp32"), klass="tf32"),
            rec("ae", "05_tf32", "GPU P", {"flop": 5e9}, params=ae, klass="tf32"),
            rec("ae", "06_bf16", "GPU P", {"flop": 5e9}, params=ae, klass="bf16"),
            rec("ae", "07_no_flop", "GPU P", {}, params=ae, klass="fp32"),
            # one step, two precisions (ae 08's --precision): two rows, each with its class
            rec("ae", "08_two", "GPU P", {"flop": 5e9}, params=dict(ae, precision="tf32"), klass="tf32"),
            rec("ae", "08_two", "GPU P", {"flop": 5e9}, params=dict(ae, precision="bf16"), klass="bf16"),
            # on a GPU whose probe has a tensor-core rate: 5e11 of 1e13, not of the FP32 rate
            rec("ae", "05_tf32", "GPU T", {"flop": 5e9}, params=ae, klass="tf32"),
            # and a BF16 step against the BF16 rate: 5e11 of 2e13
            rec("ae", "06_bf16", "GPU T", {"flop": 5e9}, params=ae, klass="bf16"),
            rec("ae", "02_fp32", "GPU Q", {"flop": 2e9}, params=ae, klass="fp32"),
            # the peer's mode before and after its records named the precision too: one row, the newer
            dict(rec("ae", "pytorch", "GPU P", {"flop": 5e9}, params=dict(ae, mode="tf32_cl"), klass="tf32"),
                 time="2026-01-01T00:00:00Z"),
            dict(rec("ae", "pytorch", "GPU P", {"flop": 5e9}, value=200.0, params=dict(ae, mode="tf32_cl", precision="tf32"),
                     klass="tf32"), time="2026-02-01T00:00:00Z")]
    epic = lambda step, gpu, fft, volts, acc="fp32": rec("epic", step, gpu, {"fft_flop": fft, "voltage_bytes": volts},
                                                       unit="ms/gulp", value=10.0, params={"accuracy": acc})
    rows += [epic("00_cpu", None, 3e9, 5e8),
             # FFT 3e11 flop/s of 1e12 = 30 %, voltages 5e10 B/s of 1e11 = 50 %: the bytes bind
             epic("01_bytes_bind", "GPU P", 3e9, 5e8),
             # FFT 80 %, voltages 10 %: the flops bind
             epic("02_flops_bind", "GPU P", 8e9, 1e8),
             epic("04_half", "GPU P", 3e9, 5e8, "half"),
             # on GPU H, whose probe has a pinned host-to-device rate: voltages 1e10 B/s, 40 % of
             # its 2.5e10 over PCIe, bind over the FFT's 30 % and the copy's 10 %
             epic("05_pcie_binds", "GPU H", 3e9, 1e8),
             # on GPU T, whose probe has a half2 rate: FFT 8e12 flop/s of 1e13 = 80 %, not of FP32's 1e12
             epic("04_half", "GPU T", 8e10, 1e8, "half")]
    mri = lambda step, acc, value: rec("mri", step, "GPU P", {}, unit="pairs/s", value=value,
                                       params={"kernel": "fhd", "accuracy": acc})
    # SFU 4e12/s, two per pair: 2e12 pairs/s
    rows += [mri("07_sfu", "fast", 1e12), mri("11_gridding", "gridding", 5e12),
             mri("10_phase_recurrence", "fast", 3e12)]  # fewer sin/cos than pairs: over the bound
    return rows


def mode_ceilings(exe, fixtures):
    """Each step against the ceiling that binds it: ae's convolution flops against the FP32
    rate of an fp32 step, a tensor-core rate (or n/a) for TF32 and BF16; epic's FFT flops and
    voltage bytes, the larger fraction named; mri's SFU pairs as before."""
    with tempfile.TemporaryDirectory() as tmp:
        results = write_ceiling_records(fixtures, tmp)
        md = generate(exe, results, os.path.join(tmp, "out"), "--no-render")
        cell = lambda table, step: (row(table, step) or [""] * 8)[7]

        ae_p = section(md, "### batch 4, problem small, GPU P")
        # A reason the table gives once stays in its cell; one that several rows share is a footnote.
        for step, want in [("00_cpu", "n/a (CPU)"), ("02_fp32", "20.0 %"), ("03_declared", "40.0 %"),
                           ("05_tf32", "n/a [a]"), ("06_bf16", "n/a [a]"), ("08_two tf32", "n/a [a]"),
                           ("07_no_flop", "n/a (record lacks work.flop)")]:
            check(cell(ae_p, step) == want, f"ae {step} on GPU P: {cell(ae_p, step)!r}, want {want!r}")
        check(ae_p.count("\n[a] n/a: no tensor-core ceiling measured.\n") == 1 and "(no tensor-core" not in ae_p,
              "the tensor-core rows' shared reason said once, under the table")
        check(row(ae_p, "08_two tf32") and row(ae_p, "08_two bf16"), "a step's two precisions are two rows")
        peer_rows = [l for l in ae_p.splitlines() if l.startswith("| `pytorch")]
        check(len(peer_rows) == 1 and peer_rows[0].startswith("| `pytorch tf32_cl` |") and "200" in peer_rows[0],
              f"a peer mode is one row, the newest record's, whether or not it names its precision: {peer_rows}")
        head = next((l for l in ae_p.splitlines() if l.startswith("| step |")), "")
        heads = [c.strip() for c in head.split("|")[1:-1]]
        check("peak memory (MiB)" in heads, f"a peak memory column where a row recorded it: {heads}")
        if "peak memory (MiB)" in heads:
            at = heads.index("peak memory (MiB)")
            for step, want in [("02_fp32", "3"), ("05_tf32", "not recorded"), ("00_cpu", "-")]:
                got = (row(ae_p, step) or [""] * (at + 1))[at]
                check(got == want, f"ae {step}'s peak memory: {got!r}, want {want!r}")
        check("Peak memory: a step's own device arrays" in md, "the report says what the peak memory counts")
        check(cell(section(md, "### batch 4, problem small, GPU T"), "05_tf32") == "5.0 %",
              "a TF32 step against the probe's tensor-core rate where it has one")
        check(cell(section(md, "### batch 4, problem small, GPU T"), "06_bf16") == "2.5 %",
              "a BF16 step against the probe's BF16 rate, not the TF32 one")
        ceil = section(md, "## Measured ceilings")
        check("| 10.00 T | 20.00 T |" in ceil and "| n/a | n/a |" in ceil,
              "the ceilings table shows the tensor-core rates where measured, n/a elsewhere")
        check(cell(section(md, "### batch 4, problem small, GPU Q"), "02_fp32") == "n/a (no probe on GPU Q)",
              "no probe on the GPU: n/a")

        check("## epic: E-field parallel imaging correlator" in md, "epic has its title")
        epic_section = section(md, "## epic: E-field parallel imaging correlator (the MOFF imager of LWA-SV)")
        check("the larger fraction" in epic_section, "the epic text says the larger fraction binds")
        epic_p = section(md, "### problem small, GPU P")
        for step, want in [("00_cpu", "n/a (CPU)"), ("01_bytes_bind", "50.0 % (voltage bytes)"),
                           ("02_flops_bind", "80.0 % (FFT flops)"), ("04_half", "n/a (no half-precision ceiling measured)")]:
            check(cell(epic_p, step) == want, f"epic {step}: {cell(epic_p, step)!r}, want {want!r}")
        epic_h = cell(section(md, "### problem small, GPU H"), "05_pcie_binds")
        check(epic_h == "40.0 % (voltage bytes over PCIe)", f"the PCIe bound binds where the probe has it: {epic_h!r}")
        epic_t = cell(section(md, "### problem small, GPU T"), "04_half")
        check(epic_t == "80.0 % (FFT flops)", f"a half step against the probe's half2 rate: {epic_t!r}")

        mri_p = section(md, "### F^H d, problem small, GPU P")
        check(cell(mri_p, "07_sfu") == "50.0 %", f"mri against SFU / 2: {cell(mri_p, '07_sfu')!r}")
        check(cell(mri_p, "11_gridding") == "n/a (gridding computes no pair)", f"mri gridding: {cell(mri_p, '11_gridding')!r}")
        # Gridding computes no pair: its pairs/s is an equivalent rate, and says so even alone.
        rate = lambda step: (row(mri_p, step) or [""] * 7)[6]
        gridding_mark = marked(rate("11_gridding"))
        check(rate("07_sfu") == "1.000 T" and gridding_mark[0] == "5.000 T" and gridding_mark[1],
              f"the gridding rate marked, the others not: {rate('07_sfu')!r}, {rate('11_gridding')!r}")
        check(f"\n{gridding_mark[1]} equivalent pairs/s: gridding computes no voxel-sample pair;" in mri_p,
              "the mark says equivalent pairs/s")
        check("| `11_gridding` | 10.00 -> 10.00 | 5.00x | 5.000 T equivalent pairs/s | n/a (gridding computes no pair) |"
              in section(md, "## Summary"), "the summary labels the gridding rate equivalent pairs/s")
        # Over 100 %: the mark in the cell, the reason under the table, even where one row has it.
        value, mark = marked(cell(mri_p, "10_phase_recurrence"))
        check(value == "150.0 %" and mark, f"mri over the bound, marked: {cell(mri_p, '10_phase_recurrence')!r}")
        check(f"\n{mark} over the SFU sin/cos pairs bound: the step does less of that work than counted.\n" in mri_p
              and "(over the" not in mri_p, "the reason under the table, not in the cell")


def mode_reconstructions(exe, fixtures):
    """An ae record with reconstructions (--record-images) gives, for the newest such row of its
    table, a grid figure: the inputs in the top row, the outputs below, white between; and its
    markdown line naming the step and the loss."""
    with open(os.path.join(fixtures, "results", "mc-fixture.jsonl")) as f:
        base = [json.loads(l) for l in f if l.strip()][1]
    # 2 images of 3 channels, 2 rows, 3 columns; value = 60 c + 10 y + x (+ 1 for image 1, + 50 out)
    image = lambda n, extra: [[[60 * c + 10 * y + x + n + extra for x in range(3)] for y in range(2)] for c in range(3)]
    def rec(step, time, extra):
        r = json.loads(json.dumps(base))
        r.update({"track": "ae", "step": step, "time": time})
        r["params"] = {"batch": 2}
        r["training"] = {"every": 1, "losses": [0.5, 0.25]}
        r["reconstructions"] = {"count": 2, "channels": 3, "height": 2, "width": 3, "scale": 1 / 255, "mse": 0.0123,
                                "input": [image(0, extra), image(1, extra)],
                                "output": [image(0, extra + 50), image(1, extra + 50)]}
        return r
    with tempfile.TemporaryDirectory() as tmp:
        results = os.path.join(tmp, "results")
        os.makedirs(results)
        with open(os.path.join(results, "ae-x.jsonl"), "w") as f:
            for r in (rec("02_new", "2026-02-01T00:00:00Z", 0), rec("01_old", "2026-01-01T00:00:00Z", 5)):
                f.write(json.dumps(r) + "\n")
        out = os.path.join(tmp, "out")
        render = [] if shutil.which("gnuplot") else ["--no-render"]
        md = generate(exe, results, out, *render)
        grids = [f for f in figures_of(md) if f.endswith("-reconstructions")]
        check(len(grids) == 1, f"one reconstruction grid for the table: {grids}")
        check("The first 2 images (top) and `02_new`'s reconstructions of them after training" in md
              and "loss (MSE) of these images 0.0123, last minibatch loss of the training 0.25" in md,
              "the text names the newest step and the loss")
        check("![reconstructions, 02_new, batch 2, problem small, NVIDIA H100 80GB HBM3](figures/" in md,
              "the figure's markdown line")
        if grids:
            with open(os.path.join(out, "figures", grids[0] + ".dat")) as f:
                pixels = {(int(v[0]), int(v[1])): tuple(int(c) for c in v[2:]) for v in
                          (l.split() for l in f if not l.startswith("#"))}
            # The grid: 2 images of 3 columns and 2 gaps wide (8), 2 rows of 2 rows and a gap (6 high);
            # gnuplot's y = 0 is the bottom row.
            check(len(pixels) == 8 * 6, f"a pixel for every point of the 8 x 6 grid: {len(pixels)}")
            check(pixels.get((0, 5)) == (0, 60, 120), f"input 0, row 0, column 0 at the top left: {pixels.get((0, 5))}")
            check(pixels.get((7, 4)) == (13, 73, 133), f"input 1, row 1, column 2: {pixels.get((7, 4))}")
            check(pixels.get((7, 0)) == (63, 123, 183), f"output 1, row 1, column 2 in the bottom row: {pixels.get((7, 0))}")
            check(pixels.get((3, 5)) == (255, 255, 255) and pixels.get((0, 3)) == (255, 255, 255), "white between the images")
            if not render:
                p = os.path.join(out, "figures", grids[0] + ".png")
                check(os.path.isfile(p) and os.path.getsize(p) > 1000, "the grid renders to a PNG")


def mode_tolerance(exe, fixtures):
    """mri's gridding steps run at several --tolerance values: the ladder compares them at the
    default 1e-4 only, and the 'Gridding by tolerance' table lists every run with its width."""
    with open(os.path.join(fixtures, "results", "mc-fixture.jsonl")) as f:
        base = [json.loads(l) for l in f if l.strip()][1]

    def rec(step, tolerance, ms, width):
        r = json.loads(json.dumps(base))
        r.update({"track": "mri", "step": step, "kind": "gpu"})
        r["device"] = dict(base["device"], name="GPU P")
        r["problem"]["name"] = "large"
        r["params"] = {"kernel": "fhd", "accuracy": "tolerance", "tolerance": tolerance, "kernel_width": width,
                       "plan_ms": 0.75}
        r["timing"]["kernel_ms"]["median"] = ms
        r["work"] = {"unit": "pairs", "count": 1}
        r["throughput"] = {"value": 1.0, "unit": "pairs/s"}
        return r

    def report_of(records):
        with tempfile.TemporaryDirectory() as tmp:
            results = os.path.join(tmp, "results")
            os.makedirs(results)
            with open(os.path.join(results, "x.jsonl"), "w") as f:
                f.writelines(json.dumps(r) + "\n" for r in records)
            return generate(exe, results, os.path.join(tmp, "out"), "--no-render")

    md = report_of([rec("15_fixed_width", 1e-4, 4.0, 6), rec("16_fixed_point", 1e-3, 0.5, 5),
                    rec("16_fixed_point", 1e-4, 1.0, 6), rec("16_fixed_point", 1e-6, 3.0, 8),
                    rec("16_fixed_point", 2e-4, 0.8, 6)])
    ladder = section(md, "### F^H d, problem large, GPU P")
    check((row(ladder, "16_fixed_point") or ["", "", ""])[2] == "1.000",
          "the ladder's 16 row is its 1e-4 run (1.000 ms), not the 1e-3 or 1e-6 one")
    check(ladder.count("| `16_fixed_point` |") == 1, "one ladder row per step")
    # Both gridding rows: an equivalent rate, and no ceiling for one reason, each said once under the table.
    for step in ("15_fixed_width", "16_fixed_point"):
        check((row(ladder, step) or [""] * 8)[6:8] == ["1.000 [a]", "n/a [b]"], f"{step}'s rate and ceiling marked: {row(ladder, step)}")
    check(ladder.count("\n[a] equivalent pairs/s: ") == 1 and ladder.count("\n[b] n/a: gridding computes no pair.\n") == 1
          and "(gridding computes no pair)" not in ladder, "the gridding rows' marks explained once each")
    table = section(md, "### Gridding by tolerance")
    for tol, width, ms in [("0.001", "5", "0.5000"), ("0.0001", "6", "1.000"), ("1e-06", "8", "3.000")]:
        check(f"| `16_fixed_point` | {tol} | {width} | {ms} | 0.7500 |" in table,
              f"tolerance table: 16 at {tol}, W {width}, {ms} ms, plan 0.7500")
    check("| `15_fixed_width` | 0.0001 | 6 | 4.000 |" in table, "tolerance table: 15's default run too")
    order = [line.split("|")[2].strip() for line in table.splitlines() if line.startswith("| `16_fixed_point` |")]
    check(order == ["0.001", "0.0002", "0.0001", "1e-06"], f"tolerance table: 16's rows loosest first ({order})")

    # The peer (mri_cufinufft, a row per method): at each tolerance its fastest method that
    # passed, below the rungs, its plan its point sort (setpts_ms), not makeplan + setpts.
    def peer(method, tolerance, ms, passed):
        r = rec("cufinufft", tolerance, ms, 0)
        del r["params"]["kernel_width"]
        r["params"].update({"mode": f"method{method}", "method": method, "setpts_ms": 0.8, "makeplan_ms": 0.3,
                            "plan_ms": 1.1})
        r["validation"] = dict(r.get("validation", {}), **{"pass": passed})
        return r

    md = report_of([rec("16_fixed_point", 1e-4, 1.0, 6), rec("16_fixed_point", 1e-5, 1.6, 7),
                    peer(2, 1e-4, 7.6, True), peer(3, 1e-4, 1.2, True), peer(1, 1e-4, 0.9, False),
                    peer(3, 1e-5, 3.1, True), peer(4, 1e-5, 3.5, True)])
    table = section(md, "### Gridding by tolerance")
    lines = [l for l in table.splitlines() if l.startswith("| `")]
    check("| `cufinufft method3` | 0.0001 | n/a | 1.200 | 0.8000 |" in table,
          "tolerance table: the peer's fastest passing method at 1e-4 (3: 1.200 ms; 1 was faster and failed), "
          "its plan the point sort")
    check("| `cufinufft method3` | 1e-05 | n/a | 3.100 | 0.8000 |" in table, "tolerance table: the peer at 1e-5 (3, not 4)")
    check(not any(l.startswith(("| `cufinufft method1`", "| `cufinufft method2`", "| `cufinufft method4`")) for l in lines),
          "tolerance table: one peer row a tolerance")
    check([l.split("|")[1].strip() for l in lines] ==
          ["`16_fixed_point`", "`16_fixed_point`", "`cufinufft method3`", "`cufinufft method3`"],
          f"tolerance table: the peer's rows below the rungs' ({[l.split('|')[1].strip() for l in lines]})")
    ladder = section(md, "### F^H d, problem large, GPU P")
    check(all(f"| `cufinufft method{m}` |" in ladder for m in (1, 2, 3)),
          "the ladder at 1e-4: a row per method of the peer, as a peer's modes")


def scaling_rows(text):
    """The Scaling tables' rows, in order: (row, GPUs, [cells after GPUs])."""
    rows = []
    for line in text.splitlines():
        if line.startswith("| `"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            rows.append((cells[0], cells[1], cells[2:]))
    return rows


def mode_scaling(exe, fixtures):
    """fixtures/scaling: a multi-GPU step (24_ddp, parent 23_bf16) on 1, 2 and 4 GPUs, an older
    2-GPU run at another commit, and the peer's single-process run and DDP runs on 1 and 2 GPUs."""
    results = os.path.join(fixtures, "scaling", "results")
    steps = ["--steps", os.path.join(fixtures, "scaling", "steps")]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        md = generate(exe, results, out, "--no-render", *steps)

        # The ladder keeps its one-GPU rows: the step's 1-rank run, the peer's single process.
        ladder = section(md, "### batch 64, problem small, GPU S")
        check(ladder.count("| `24_ddp` |") == 1 and row(ladder, "24_ddp")[7] == "50.00 k",
              f"the ladder's 24_ddp row is its 1-GPU run (50.00 k), not a multi-GPU one: {row(ladder, '24_ddp')}")
        check(ladder.count("| `pytorch bf16_cl` |") == 1 and row(ladder, "pytorch bf16_cl")[7] == "60.00 k",
              f"the ladder's peer row is its run without DDP (60.00 k): {row(ladder, 'pytorch bf16_cl')}")

        scaling = section(md, "### Scaling: GPU S")
        table = section(scaling, "#### batch 64, problem small")
        check("| row | GPUs | images/s | speedup over 1 GPU | efficiency | work (images) | launcher | commit |" in table,
              "the Scaling table's columns")
        got = scaling_rows(table)
        want = [("`24_ddp`", "1", ["50.00 k", "1.00x", "100.0 %", "640", "none", "`fix0001`, 2026-01-01"]),
                # the newest 2-GPU run (fix0001, 90 k), not the older fix0000 one (70 k)
                ("`24_ddp`", "2", ["90.00 k", "1.80x", "90.0 %", "1280", "mpirun", "`fix0001`, 2026-01-01"]),
                ("`24_ddp`", "4", ["160.0 k", "3.20x", "80.0 %", "2560", "env", "`fix0001`, 2026-01-01"]),
                ("`23_bf16` (parent)", "1", ["40.00 k", "-", "-", "640", "-", "`fix0001`, 2026-01-01"]),
                # the peer's DDP runs, over its DDP run on one GPU (55 k), not its single process
                ("`pytorch bf16_cl`", "1", ["55.00 k", "1.00x", "100.0 %", "640", "torchrun", "`fix0001`, 2026-01-02"]),
                ("`pytorch bf16_cl`", "2", ["104.5 k", "1.90x", "95.0 %", "1280", "torchrun", "`fix0001`, 2026-01-02"])]
        check(got == want, f"Scaling rows:\n  got  {got}\n  want {want}")
        check("70.00 k" not in scaling and "fix0000" not in scaling, "the superseded 2-GPU run is not shown")

        names = [n for n in figures_of(scaling)]
        check(names == ["ae-gpu-s-scaling"], f"one scaling figure for the track and GPU: {names}")
        dat = os.path.join(out, "figures", "ae-gpu-s-scaling.dat")
        gp = os.path.join(out, "figures", "ae-gpu-s-scaling.gp")
        check(os.path.isfile(gp) and os.path.isfile(dat), "the scaling figure's script and data are written")
        if os.path.isfile(dat):
            blocks = [[l for l in b.splitlines() if l and not l.startswith("#")]
                      for b in open(dat).read().split("\n\n\n")]
            check(blocks == [["1 1 1", "4 4 1"], ["1 1 1", "2 1.8 0.9", "4 3.2 0.8"], ["1 1 1", "2 1.9 0.95"]],
                  f"figure data: the ideal line to 4 GPUs, then each row's GPUs, speedup, efficiency: {blocks}")
            script = open(gp).read()
            check("title 'ideal (speedup = GPUs)'" in script and "index 2 using 1:2" in script,
                  "the script plots the ideal line and both rows")
        if shutil.which("gnuplot"):
            rendered = os.path.join(tmp, "rendered")
            generate(exe, results, rendered, *steps)
            png = os.path.join(rendered, "figures", "ae-gpu-s-scaling.png")
            ok = os.path.isfile(png) and os.path.getsize(png) > 1000
            check(ok, "gnuplot renders the scaling figure")
            if ok:
                with open(png, "rb") as f:
                    check(f.read(8) == b"\x89PNG\r\n\x1a\n", "the scaling figure is a PNG")

        # Without the peer's DDP run on one GPU its single process is the base, marked.
        with open(os.path.join(results, "ae-scaling.jsonl")) as f:
            records = [json.loads(l) for l in f if l.strip()]
        def write(folder, keep):
            os.makedirs(folder)
            with open(os.path.join(folder, "x.jsonl"), "w") as f:
                for r in records:
                    if keep(r):
                        f.write(json.dumps(r) + "\n")
        ddp1 = lambda r: r["step"] == "pytorch" and r.get("ranks", {}).get("size") == 1
        write(os.path.join(tmp, "no-ddp1"), lambda r: not ddp1(r))
        md = generate(exe, os.path.join(tmp, "no-ddp1"), os.path.join(tmp, "out2"), "--no-render", *steps)
        peer = [r for r in scaling_rows(section(md, "### Scaling: GPU S")) if r[0] == "`pytorch bf16_cl`"]
        check([(g, c[:3]) for _, g, c in peer] == [("1*", ["60.00 k", "1.00x", "100.0 %"]), ("2", ["104.5 k", "1.74x", "87.1 %"])],
              f"the peer's single process as its 1-GPU base, marked 1*: {peer}")
        check("1*: the row's run without `ranks`" in md, "the mark is explained")

        # Without the step's run on one GPU its rows have no speedup, for one reason said once.
        step1 = lambda r: r["step"] == "24_ddp" and r.get("ranks", {}).get("size") == 1
        write(os.path.join(tmp, "no-step1"), lambda r: not step1(r))
        md = generate(exe, os.path.join(tmp, "no-step1"), os.path.join(tmp, "out5"), "--no-render", *steps)
        scaling = section(md, "### Scaling: GPU S")
        step = [(g, c[:2]) for n, g, c in scaling_rows(scaling) if n == "`24_ddp`"]
        check(step == [("2", ["90.00 k", "n/a [a]"]), ("4", ["160.0 k", "n/a [a]"])], f"no speedup without a 1-GPU run: {step}")
        check(scaling.count("\n[a] n/a: no run on 1 GPU.\n") == 1, "the reason said once under the table")

        # One GPU only (the steps suite's runs), or no ranks at all: no Scaling section.
        write(os.path.join(tmp, "one"), lambda r: r.get("ranks", {}).get("size", 1) == 1)
        md = generate(exe, os.path.join(tmp, "one"), os.path.join(tmp, "out3"), "--no-render", *steps)
        check("Scaling" not in md and "scaling" not in " ".join(figures_of(md)), "no Scaling section without a multi-GPU run")
        md = generate(exe, os.path.join(fixtures, "results"), os.path.join(tmp, "out4"), "--no-render")
        check("Scaling" not in md, "no Scaling section for records without ranks")


def roofline_rungs(path):
    """The rungs of a roofline's data file (its first block): label -> (intensity, attained, flop, bytes)."""
    import shlex
    rungs = {}
    with open(path) as f:
        for line in f:
            if not line.strip():
                break
            if line.startswith("#"):
                continue
            v = shlex.split(line)
            rungs[v[0]] = tuple(float(x) for x in v[1:5])
    return rungs


def close(a, b):
    return abs(a - b) <= 1e-7 * abs(b)


def rung_label(row_name):
    """The roofline's label of a ladder row: "07", "14 bf16", "pytorch tf32_cl"."""
    step = row_name.split(" ")[0]
    return row_name[:2] + row_name[len(step):] if re.match(r"\d\d_", step) else row_name


def mode_roofline(exe, root):
    """Each track's compulsory bytes against a hand count, on records of chosen sizes: the
    intensity, the binding ceiling (DRAM left of the ridge, the precision's rate right of it) and
    the fraction in the table; rows that cannot be placed say why. Then the committed results:
    every GPU row of a roofline's ladder is in its table, every placed one in its figure."""
    fixtures = os.path.join(root, "tests", "report", "fixtures")
    with open(os.path.join(fixtures, "results", "mc-fixture.jsonl")) as f:
        base = [json.loads(l) for l in f if l.strip()][1]
    probe = lambda name: {"schema": 1, "track": "probe", "step": "ceilings", "device": dict(base["device"], name=name),
                          "commit": "fix", "time": "2026-01-01T00:00:00Z",
                          "ceilings": {"sfu_per_s": 4e12, "fp32_flop_per_s": 1e12, "copy_bytes_per_s": 1e11,
                                       "tf32_tensor_flop_per_s": 1e13, "bf16_tensor_flop_per_s": 2e13,
                                       "fp16_flop_per_s": 1e13}}

    def rec(track, step, work, problem, params, ms, gpu="GPU R", klass=None):
        r = json.loads(json.dumps(base))
        r.update({"track": track, "step": step, "kind": "gpu" if gpu else "cpu"})
        r["device"] = dict(base["device"], name=gpu) if gpu else None
        r["problem"] = {"name": "large", "params": problem}
        r["params"] = params
        r["timing"]["kernel_ms"]["median"] = ms
        r["work"] = dict({"unit": "items", "count": 1}, **work)
        r["throughput"] = {"value": 1.0, "unit": "items/s"}
        if klass:
            r["validation"]["class"] = klass
        return r

    mri = {"samples": 1000, "voxels": 100}
    fhd = {"kernel": "fhd", "accuracy": "fast"}
    ae_model = {"model": {"channels": 3, "height": 8, "width": 8, "widths": [4, 8, 8, 4]}}
    epic_full = {"samples_per_gulp": 10, "gulps": 2, "channels": 4, "stands": 8, "pols": 2, "image_size": 16,
                 "products": "XX,YY,XY*,YX*"}
    epic_one = dict(epic_full, pols=1, products="XX")
    rows = [probe("GPU R"), probe("GPU Q"),
            # 1.5e5 flop on 30,000 bytes: 5 flop/B, left of the ridge (1e12 / 1e11 = 10): the roof is
            # 5 x 1e11 = 5e11 flop/s; 1.5e5 flop in 6e-7 s is 2.5e11, 50 %
            rec("mri", "03_mem", {"flop": 1.5e5}, mri, fhd, 6e-4),
            # 3e6 flop: 100 flop/B, right of the ridge: 3e11 flop/s of FP32's 1e12, 30 %
            rec("mri", "07_compute", {"flop": 3e6}, mri, fhd, 0.01),
            rec("mri", "10_over", {"flop": 3e6}, mri, fhd, 0.002),  # 1.5e12: over the roof
            rec("mri", "11_grid", {"flop": 3e6}, mri, dict(fhd, accuracy="gridding"), 0.01),
            rec("mri", "00_cpu", {"flop": 3e6}, mri, fhd, 100.0, gpu=None),
            # Q on another GPU: its own roofline
            rec("mri", "07_q", {"flop": 1.4e7}, {"samples": 1000, "voxels": 1000}, {"kernel": "q", "accuracy": "fast"},
                1.0, gpu="GPU Q"),
            # two gridding rungs in one table: one reason, a footnote
            rec("mri", "11_q_grid", {"flop": 1.4e7}, {"samples": 1000, "voxels": 1000}, {"kernel": "q", "accuracy": "gridding"},
                1.0, gpu="GPU Q"),
            rec("mri", "12_q_grid", {"flop": 1.4e7}, {"samples": 1000, "voxels": 1000}, {"kernel": "q", "accuracy": "tolerance"},
                1.0, gpu="GPU Q"),
            rec("mri", "07_no_probe", {"flop": 3e6}, mri, fhd, 0.01, gpu="GPU N"),
            rec("mc", "04_gpu", {"count": 1000, "interactions_per_photon": 75}, {"shells": 101}, {}, 1.0),
            rec("epic", "02_fp32", {"fft_flop": 1e6}, epic_full, {"accuracy": "fp32"}, 1.0),
            rec("epic", "09_half", {"fft_flop": 1e6}, epic_one, {"accuracy": "half"}, 1.0),
            rec("ae", "14_bf16", {"flop": 1e9, "steps": 3}, ae_model, {"batch": 2, "precision": "bf16"}, 1.0, klass="bf16"),
            rec("ae", "05_no_model", {"flop": 1e9, "steps": 3}, {}, {"batch": 2}, 1.0, klass="fp32")]
    with tempfile.TemporaryDirectory() as tmp:
        results = os.path.join(tmp, "results")
        os.makedirs(results)
        with open(os.path.join(results, "x.jsonl"), "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
        out = os.path.join(tmp, "out")
        md = generate(exe, results, out, "--no-render")
        fig = lambda stem: roofline_rungs(os.path.join(out, "figures", stem + "-roofline.dat"))

        # mri F^H d: per sample kx, ky, kz, phi (2), d (2); per voxel x, y, z in and (re, im) out
        fhd_bytes = 4 * (7 * 1000 + 5 * 100)  # 30,000
        m = section(md, "### Roofline: F^H d, problem large, GPU R")
        got = fig("mri-fhd-large-gpu-r")
        check(sorted(got) == ["03", "07", "10"], f"mri figure: the placed GPU rungs, no CPU or gridding row: {sorted(got)}")
        check(all(close(v[3], fhd_bytes) for v in got.values()), f"mri F^H d bytes: {got}, want {fhd_bytes}")
        check(close(got.get("03", (0,))[0], 5.0), f"mri intensity 1.5e5 / 30,000 = 5: {got.get('03')}")
        check(row(m, "03")[4:6] == ["DRAM at this intensity 500.0 G", "50.0 %"], f"left of the ridge: {row(m, '03')}")
        check(row(m, "07")[1:6] == ["FP32", "100.0", "300.0 G", "FP32 1.000 T", "30.0 %"], f"right of it: {row(m, '07')}")
        check(row(m, "10")[5] == "150.0 % [a]" and "\n[a] over the roof: fewer operations than counted.\n" in m,
              f"over the roof: marked, the reason under the table: {row(m, '10')}")
        check(row(m, "11")[4] == "not placed: gridding computes no pair", f"gridding: {row(m, '11')}")
        check("`00`" not in m, "a CPU row is not on a GPU's roofline")
        check("2 of 3 rungs lie right of the ridge" in m, "the count of compute-bound rungs")
        # mri Q: kx, ky, kz, phi (2) per sample
        q = fig("mri-q-large-gpu-q")
        check(close(q.get("07", (0,) * 4)[3], 4 * (5 * 1000 + 5 * 1000)), f"mri Q bytes 40,000: {q}")
        check(sorted(q) == ["07"], f"mri Q figure: the gridding rungs not placed: {sorted(q)}")
        mq = section(md, "### Roofline: Q, problem large, GPU Q")
        check(row(mq, "11")[4] == "not placed [a]" and row(mq, "12")[4] == "not placed [a]",
              f"repeated reason marked: {row(mq, '11')} {row(mq, '12')}")
        check(mq.count("\n[a] not placed: gridding computes no pair.\n") == 1, "and said once under the table")
        check("### Roofline: F^H d, problem large, GPU N" not in md, "no roofline on a GPU without a probe")

        # mc: 101 shells x 8 bytes; flop = photons x interactions x (26 + 28 / pi)
        mc = fig("mc-large-gpu-r").get("04", (0,) * 4)
        check(close(mc[3], 808) and close(mc[2], 1000 * 75 * (26 + 28 / 3.141592653589793)), f"mc flop and bytes: {mc}")
        check("1 of 1 rung lies right of the ridge" in section(md, "### Roofline: problem large, GPU R"), "mc compute-bound")

        # epic: voltages 20 samples x 4 channels x 8 stands x 2 pols, one byte each; the image
        # 6 planes (XX, YY, XY* and YX* re/im) x 4 channels x 16 x 16 floats
        ep = fig("epic-large-gpu-r")
        check(close(ep.get("02", (0,) * 4)[3], 20 * 4 * 8 * 2 + 4 * 6 * 4 * 16 * 16), f"epic bytes 25,856: {ep.get('02')}")
        check(close(ep.get("09", (0,) * 4)[3], 20 * 4 * 8 * 1 + 4 * 1 * 4 * 16 * 16), f"epic XX only 4,736: {ep.get('09')}")
        epic_md = md[md.find("## epic"):]
        check(row(epic_md, "09")[1] == "half2" and row(epic_md, "09")[4] == "half2 10.00 T", f"half against half2: {row(epic_md, '09')}")

        # ae: parameters 112 + 296 + 584 + 292 + 111 = 1,395; hidden activations 4 x 64 + 8 x 16 +
        # 8 x 4 + 4 x 16 = 480 per image; per step 4 x (2 x (192 + 2 x 480) + 2 x 1,395); 3 steps
        ae_bytes = 3 * 4 * (2 * (3 * 8 * 8 + 2 * 480) + 2 * 1395)  # 61,128
        ae_md = md[md.find("## ae"):]
        a = fig("ae-2-large-gpu-r")
        check(sorted(a) == ["14 bf16"] and close(a["14 bf16"][3], ae_bytes), f"ae bytes {ae_bytes}: {a}")
        check(row(ae_md, "14 bf16")[4] == "BF16 mma.sync 20.00 T", f"a bf16 step under the BF16 roof: {row(ae_md, '14 bf16')}")
        check(row(ae_md, "05")[4] == "not placed: record lacks problem.params.model.channels", f"no model: {row(ae_md, '05')}")

    # The committed results: every roofline's table lists its ladder's GPU rows, its figure the
    # placed ones; and two hand counts on the full problems.
    with tempfile.TemporaryDirectory() as tmp:
        md = generate(exe, os.path.join(root, "report", "results"), tmp, "--no-render")
        names = [n for n in figures_of(md) if n.endswith("-roofline")]
        check(len(names) >= 4, f"a roofline per track: {names}")
        for track in ("mri", "mc", "epic", "ae"):
            check(any(n.startswith(track + "-") for n in names), f"a {track} roofline")
        for n in names:
            at = md.find(f"(figures/{n}.png)")
            table = md[at: md.find("\n\n", md.find("| rung |", at))]
            listed = re.findall(r"^\| `([^`]+)` \|", table, re.M)
            placed = [l for l in listed if f"| `{l}` | - |" not in table]
            with open(os.path.join(tmp, "figures", n[: -len("-roofline")] + "-speedup.dat")) as f:
                import shlex
                gpu_rows = [rung_label(v[0]) for v in (shlex.split(l) for l in f if not l.startswith("#")) if v[2] == "1"]
            check(listed == gpu_rows, f"{n}: the table lists the ladder's GPU rows {gpu_rows}, got {listed}")
            got = roofline_rungs(os.path.join(tmp, "figures", n + ".dat"))
            check(sorted(got) == sorted(placed) and placed, f"{n}: the figure has every placed rung {placed}: {sorted(got)}")
        # mri F^H d large: 3,211,264 samples x 7 floats and 262,144 voxels x 5
        mri_large = roofline_rungs(os.path.join(tmp, "figures", "mri-fhd-large-nvidia-h200-roofline.dat"))
        check(mri_large and all(close(v[3], 4 * (7 * 3211264 + 5 * 262144)) for v in mri_large.values()),
              f"mri large: 95,158,272 bytes: {mri_large}")
        # ae batch 64 large: 781 steps of 64 x 2,961,408 + 6,015,000 bytes (the full model)
        ae_large = roofline_rungs(os.path.join(tmp, "figures", "ae-64-large-nvidia-h200-roofline.dat"))
        check(ae_large and all(close(v[3], 781 * (64 * 4 * (3072 + 2 * 368640) + 8 * 751875)) for v in ae_large.values()),
              f"ae large: 152,720,732,472 bytes: {ae_large}")
        # Deterministic: the same records give the same figure files.
        tmp2 = os.path.join(tmp, "again")
        generate(exe, os.path.join(root, "report", "results"), tmp2, "--no-render")
        for n in names:
            for suffix in (".gp", ".dat", "-roofs.dat"):
                with open(os.path.join(tmp, "figures", n + suffix), "rb") as a, open(os.path.join(tmp2, "figures", n + suffix), "rb") as b:
                    check(a.read() == b.read(), f"{n}{suffix} reproducible")
        if shutil.which("gnuplot"):
            out = os.path.join(tmp, "rendered")
            md = generate(exe, os.path.join(root, "report", "results"), out)
            for n in names:
                p = os.path.join(out, "figures", n + ".png")
                check(os.path.isfile(p) and os.path.getsize(p) > 1000, f"{n}.png renders")


def main():
    mode, exe, where = sys.argv[1], sys.argv[2], sys.argv[3]
    {"tables": mode_tables, "render": mode_render, "missing": mode_missing, "committed": mode_committed,
     "interrupted": mode_interrupted, "hosts": mode_hosts, "sections": mode_sections, "studies": mode_studies,
     "ceilings": mode_ceilings, "reconstructions": mode_reconstructions, "tolerance": mode_tolerance,
     "roofline": mode_roofline, "scaling": mode_scaling, "local": mode_local, "extra_name": mode_extra_name,
     "over_ceiling": mode_over_ceiling, "roofline_labels": mode_roofline_labels,
     "malformed": lambda e, w: mode_malformed(e, w, sys.argv[4], sys.argv[5])}[mode](exe, where)
    for f in failures:
        print("FAIL:", f)
    if not failures:
        print("ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
