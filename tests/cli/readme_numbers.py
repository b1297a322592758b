#!/usr/bin/env python3
"""readme_numbers.py ROOT: every measured number in a track README's ladder tables is a record's.

For each track (mri, mc, epic, ae), steps/TRACK/README.md's section "## The ladder" (up to the
next "## " heading) is read, and every Markdown table in it. A number is *measured* when it
carries a unit of time or rate:

  time   ms, s, us                                  (compared in ms)
  rate   ms/gulp, pairs/s, photons/ms, images/s     (compared in the record's throughput unit)

either after the number in the cell ("1.143 ms", "2.834e11 pairs/s", "26.13 M photons/ms"; an
SI prefix k, M, G or T may stand before the unit) or in its column's header in parentheses
("time (ms)", "(images/s)"), which then gives the cell's leading number its unit. Speedups
("1.89x"), percentages, errors and every other number are not measured numbers and are not
checked.

The rule: a measured number in a table row is true when some record of report/results/*.jsonl
shows it at the README's printed precision, where the record

  - is of the README's track, of the row's step (the first rung id, NN_name, in the row's
    first cell) and passed its validation (`validation.pass`);
  - ran on the row's device: the table's `device` column (required wherever a row holds a
    measured number) reads [N x ]NAME[ (words)]: NAME is part of the record's `device.name`
    ("H200" of "NVIDIA H200"), or of `host.cpu` for a CPU step, whose record has no device
    ("Xeon"); N, 1 where absent, is the record's rank count (`ranks.size`, 1 without ranks);
  - ran the problem and parameters the table names, where it names them: the first `code`
    span of the column's header reads as a command line, `PROBLEM --flag value ...` or flags
    alone; where it names no PROBLEM, the first `code` span of the row's `problem` cell is
    read the same way (its flags joining the header's). PROBLEM is the record's
    `problem.name`, each flag's value its `params` entry (`--kernel-width` is `kernel-width`
    or `kernel_width`; numbers compared as numbers: 1e-4 is 0.0001). Other parameters are not
    compared;
  - shows the value: a time is the record's `timing.kernel_ms.median` or
    `timing.total_ms.median`; a rate is its `throughput.value` in that `throughput.unit`;
    the record's value, rounded to the printed number's last digit (after its exponent and
    prefix: 2.834e11 to 1e8, 8,253 to 1), is the printed number.

A measured number that no record shows fails: 'FAIL steps/TRACK/README.md:LINE: ...', with the
nearest record of that step, device and problem. So does a row with measured numbers whose
first cell names no rung of the track, or a table with measured numbers and no device column.
Exit 0 when every measured number is shown by a record, 1 otherwise (2 on a bad ROOT).
"""
import glob
import json
import math
import os
import re
import sys

TRACKS = ("mri", "mc", "epic", "ae")
TIME_MS = {"ms": 1.0, "s": 1000.0, "us": 0.001}
RATES = ("ms/gulp", "pairs/s", "photons/ms", "images/s")
UNIT = r"(ms/gulp|pairs/s|photons/ms|images/s|ms|us|s)(?![\w/])"
PREFIX = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
NUMBER = r"(?<![\w.,^/-])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(?:e([+-]?\d+))?"
WITH_UNIT = re.compile(NUMBER + r"\s?(?:([kMGT])\s)?" + UNIT)
LEADING = re.compile(r"^[\s*]*" + NUMBER)
HEADER_UNIT = re.compile(r"\((?:([kMGT])\s)?" + UNIT + r"\)")
RUNG = re.compile(r"\b(\d\d_[a-z0-9_]+)")
CODE = re.compile(r"`([^`]+)`")


def load_records(root):
    records = []
    for path in sorted(glob.glob(os.path.join(root, "report", "results", "*.jsonl"))):
        with open(path) as f:
            for n, line in enumerate(f, 1):
                if line.strip():
                    r = json.loads(line)
                    r["_where"] = f"{os.path.relpath(path, root)}:{n}"
                    records.append(r)
    return records


def cells_of(line):
    line = line.strip().replace("\\|", "\x00")
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|"):
        line = line[:-1]
    return [c.replace("\x00", "|").strip() for c in line.split("|")]


def ladder_tables(path):
    """[(header cells, [(line number, cells)])] of the tables in '## The ladder'."""
    with open(path) as f:
        lines = f.read().split("\n")
    tables, inside, current = [], False, None
    for n, line in enumerate(lines, 1):
        if line.startswith("## "):
            inside = line.strip() == "## The ladder"
            current = None
            continue
        if not inside:
            continue
        if line.lstrip().startswith("|"):
            cells = cells_of(line)
            if current is None:
                current = (cells, [])
                tables.append(current)
            elif all(re.fullmatch(r":?-+:?", c) for c in cells if c):
                continue
            else:
                current[1].append((n, cells))
        else:
            current = None
    return tables, any(l.strip() == "## The ladder" for l in lines)


def spec_of(text):
    """'`large --batch 256`' -> ('large', {'batch': '256'}); no code span -> (None, {})."""
    m = CODE.search(text or "")
    if not m:
        return None, {}
    words = m.group(1).split()
    problem = None
    if words and not words[0].startswith("--"):
        problem, words = words[0], words[1:]
    params, i = {}, 0
    while i < len(words):
        if words[i].startswith("--"):
            name = words[i][2:]
            value = words[i + 1] if i + 1 < len(words) and not words[i + 1].startswith("--") else ""
            params[name] = value
            i += 2 if value else 1
        else:
            i += 1
    return problem, params


def same_param(want, have):
    if have is None:
        return False
    try:
        return math.isclose(float(want), float(have), rel_tol=1e-9)
    except (TypeError, ValueError):
        return str(want) == str(have)


def device_of(text):
    text = re.sub(r"[*`]", "", text).strip()
    m = re.match(r"(\d+)\s*x\s+(.*)", text)
    count, name = (int(m.group(1)), m.group(2)) if m else (1, text)
    return count, name.split("(")[0].strip()


def measured(cell, header_unit):
    """[(text, value in the unit, half step, unit)] of a cell's measured numbers."""
    out, spans = [], []
    for m in WITH_UNIT.finditer(cell):
        out.append(number(m.group(0), m.group(1), m.group(2), m.group(3), m.group(4) or "", m.group(5)))
        spans.append(m.span())
    if header_unit:
        m = LEADING.match(cell)
        if m and not any(a <= m.start(1) < b for a, b in spans):
            prefix, unit = header_unit
            out.insert(0, number(m.group(0).strip(" *"), m.group(1), m.group(2), m.group(3), prefix, unit))
    return out


def number(text, whole, decimals, exponent, prefix, unit):
    scale = PREFIX[prefix] * 10.0 ** int(exponent or 0)
    value = float(whole.replace(",", "") + ("." + decimals if decimals else "")) * scale
    half = 0.5 * 10.0 ** -len(decimals or "") * scale
    if unit in TIME_MS:
        return text, value * TIME_MS[unit], half * TIME_MS[unit], "ms"
    return text, value, half, unit


def shown_values(record, unit):
    if unit == "ms":
        timing = record.get("timing") or {}
        return [timing[k]["median"] for k in ("kernel_ms", "total_ms")
                if isinstance(timing.get(k), dict) and timing[k].get("median") is not None]
    throughput = record.get("throughput") or {}
    return [throughput["value"]] if throughput.get("unit") == unit and throughput.get("value") is not None else []


def main():
    if len(sys.argv) != 2 or not os.path.isdir(os.path.join(sys.argv[1], "steps")):
        print("usage: readme_numbers.py ROOT (the repository's root)", file=sys.stderr)
        return 2
    root = sys.argv[1]
    records = load_records(root)
    failures, checked, rows, used = [], 0, 0, set()
    for track in TRACKS:
        rel = f"steps/{track}/README.md"
        rungs = set(d for d in os.listdir(os.path.join(root, "steps", track)) if re.fullmatch(r"\d\d_\w+", d))
        tables, has_section = ladder_tables(os.path.join(root, rel))
        if not has_section:
            failures.append(f"FAIL {rel}: no '## The ladder' section")
            continue
        for header, body in tables:
            names = [h.lower() for h in header]
            device_col = next((i for i, h in enumerate(names) if h.startswith("device")), None)
            problem_col = next((i for i, h in enumerate(names) if h.startswith("problem")), None)
            units = []
            for h in header:
                m = HEADER_UNIT.search(h)
                units.append((m.group(1) or "", m.group(2)) if m else None)
            for line, cells in body:
                found = []
                for i, cell in enumerate(cells[1:], 1):
                    if i in (device_col, problem_col):
                        continue
                    for num in measured(cell, units[i] if i < len(units) else None):
                        found.append((i, num))
                if not found:
                    continue
                rows += 1
                where = f"FAIL {rel}:{line}:"
                step = next((s for s in RUNG.findall(cells[0]) if s in rungs), None)
                if step is None:
                    failures.append(f"{where} a row with measured numbers whose first cell names no step of {track}: {cells[0]!r}")
                    continue
                if device_col is None or device_col >= len(cells):
                    failures.append(f"{where} {step}: the table has no device column")
                    continue
                count, device = device_of(cells[device_col])
                for i, (text, value, half, unit) in found:
                    checked += 1
                    problem, params = spec_of(header[i] if i < len(header) else "")
                    if problem is None and problem_col is not None and problem_col < len(cells):
                        problem, more = spec_of(cells[problem_col])
                        params = {**more, **params}
                    candidates = []
                    for r in records:
                        if r.get("track") != track or r.get("step") != step:
                            continue
                        if not (r.get("validation") or {}).get("pass"):
                            continue
                        name = (r.get("device") or {}).get("name") or (r.get("host") or {}).get("cpu") or ""
                        if not device or device not in name:
                            continue
                        if ((r.get("ranks") or {}).get("size") or 1) != count:
                            continue
                        if problem is not None and (r.get("problem") or {}).get("name") != problem:
                            continue
                        have = r.get("params") or {}
                        if any(not same_param(v, have.get(k, have.get(k.replace("-", "_")))) for k, v in params.items()):
                            continue
                        for v in shown_values(r, unit):
                            candidates.append((abs(v - value), v, r))
                    hit = [c for c in candidates if c[0] <= half * (1 + 1e-9) + 1e-12]
                    if hit:
                        used.add(hit[0][2]["_where"])
                        continue
                    what = f"{step} on {count} x {device}" + (f", `{problem}`" if problem else "") + \
                           "".join(f" --{k} {v}" for k, v in params.items())
                    if candidates:
                        d, v, r = min(candidates, key=lambda c: c[0])
                        near = f"; nearest {v:.8g} {unit} ({r['_where']}, commit {r.get('commit')})"
                    else:
                        near = f"; no record of {what} in {unit} at all"
                    failures.append(f"{where} {text!r} ({value:.8g} {unit}, column {header[i]!r}): "
                                    f"no record of {what} shows it at this precision{near}")
    for f in failures:
        print(f)
    print(f"readme_numbers: {checked} measured numbers in {rows} ladder rows of {len(TRACKS)} track READMEs, "
          f"against {len(records)} records of report/results: "
          + (f"{len(failures)} FAILED" if failures else f"all shown by a record ({len(used)} records used)"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
