#!/usr/bin/env python3
"""Checks the results shelf and writes results/LATEST.md from the run folders' manifests.

Every run folder under results/ is named YYYY-MM-DD-<gpu>-<commit>-<topic> (<gpu>: h100, h200, or cpu for a
run on the CPU alone, whose manifest's "gpu" says "none: CPU run (...)") and holds a manifest.json:

    date      "YYYY-MM-DD" (the folder name's)      gpu       the GPU's name as nvidia-smi gives it
    commit    the commit the binary was built at     cuda      CUDA runtime version
    topic     one sentence: what the run measured    command   the command lines that produced the files
    files     {pattern: what the files are}: every file of the folder matches one (fnmatch; a pattern
              without "/" matches the folder's own files, one with "/" those below it)
    formerly  where the folder was before the shelf (or "")
    figures   (optional) tester JSON files of the library as shipped at the commit: LATEST.md's source
    note      (optional) anything else a reader needs

LATEST.md has one table per routine: for each GPU, precision, layout and batch size the latest run that
measured it (by the manifest's date, then the JSON's), its GFLOP/s and the speed-up over cuSOLVER
timed in the same process, and the folder it came from; then the index of every run folder.

    results/make_latest.py            check the shelf, then write LATEST.md
    results/make_latest.py --check    check the shelf, that LATEST.md is what this would write, and
                                      every figure's source (below)
    results/make_latest.py --verify-sources
                                      only that every figure of the committed LATEST.md comes from
                                      the source files its row names (CTest results.latest_sources)
    results/make_latest.py --root DIR a shelf elsewhere (the tests' fixtures)
    results/make_latest.py --draft-manifest results/FOLDER
                                      a first manifest.json for a new run folder, from its tester
                                      JSON headers and its file names (edit the topic and the files'
                                      descriptions, then run the script)

Every row of LATEST.md's tables names its source files (`folder/file.json` of the run's "figures");
the source check reads the committed LATEST.md, not this script's output: each figure must be what the
row's named files give for that GPU, routine, precision, layout, batch and n, a row without a named
source, a named file that is missing or not among its run's "figures", and a figure that no file gives
all fail, naming the row and the cell.

Also checked: every relative link of the shelf's Markdown files ([text](path) and `../path` in code
spans) names a file or folder that exists. Exit code 1, with every problem listed, when a check fails.
"""
import argparse
import fnmatch
import json
import os
import re
import sys

FOLDER = re.compile(r"^(\d{4}-\d{2}-\d{2})-(h100|h200|cpu)-([0-9a-f]{7,40})-([a-z0-9][a-z0-9-]*)$")
REQUIRED = ("date", "gpu", "commit", "cuda", "topic", "command", "files", "formerly")
OPTIONAL = ("figures", "note")
ROUTINES = ("potrf", "potrs", "posv")
LAYOUT_ORDER = ("interleaved", "chunked", "column_major", "pointer_array")
COLUMNS = (8, 16, 32, 48, 64, 100, 128)  # the n of the tables (the sizes)
MD_LINK = re.compile(r"\]\(([^)\s]+)\)")
CODE_SPAN = re.compile(r"`(\.\./[^`\s]+|\./[^`\s]+)`")


def run_folders(root):
    return sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)) and not d.startswith("."))


def folder_files(path):
    out = []
    for dirpath, _, names in os.walk(path):
        for name in names:
            out.append(os.path.relpath(os.path.join(dirpath, name), path))
    return sorted(out)


def covered(rel, patterns):
    for p in patterns:
        if ("/" in p) != ("/" in rel):
            continue
        if fnmatch.fnmatchcase(rel, p):
            return True
    return False


def check_manifest(root, folder, problems):
    """The folder's manifest, or None (with the reasons in problems)."""
    where = f"results/{folder}"
    m = FOLDER.match(folder)
    if not m:
        problems.append(f"{where}: the name is not YYYY-MM-DD-<h100|h200|cpu>-<commit>-<topic>")
        return None
    path = os.path.join(root, folder, "manifest.json")
    try:
        with open(path) as f:
            man = json.load(f)
    except FileNotFoundError:
        problems.append(f"{where}: no manifest.json")
        return None
    except json.JSONDecodeError as e:
        problems.append(f"{where}/manifest.json: not JSON ({e})")
        return None
    bad = len(problems)
    for key in REQUIRED:
        if key not in man:
            problems.append(f"{where}/manifest.json: no \"{key}\"")
    for key in man:
        if key not in REQUIRED + OPTIONAL:
            problems.append(f"{where}/manifest.json: unknown key \"{key}\"")
    if len(problems) > bad:
        return None
    date, gpu, commit, _ = m.groups()
    if "TODO" in json.dumps(man):
        problems.append(f"{where}/manifest.json: still has TODOs (a drafted manifest: say what the run and its files are)")
    if man["date"] != date:
        problems.append(f"{where}/manifest.json: date {man['date']} but the folder says {date}")
    if gpu not in man["gpu"].lower():
        problems.append(f"{where}/manifest.json: gpu \"{man['gpu']}\" but the folder says {gpu}")
    if man["commit"] != commit:
        problems.append(f"{where}/manifest.json: commit {man['commit']} but the folder says {commit}")
    if not isinstance(man["files"], dict) or not man["files"]:
        problems.append(f"{where}/manifest.json: \"files\" must map patterns to descriptions")
        return None
    for rel in folder_files(os.path.join(root, folder)):
        if rel != "manifest.json" and not covered(rel, man["files"]):
            problems.append(f"{where}/{rel}: not described by any pattern of the manifest's \"files\"")
    for fig in man.get("figures", []):
        fp = os.path.join(root, folder, fig)
        try:
            with open(fp) as f:
                doc = json.load(f)
            if "header" not in doc or "rows" not in doc:
                raise ValueError("not a tester JSON (no header and rows)")
        except (OSError, ValueError) as e:
            problems.append(f"{where}/{fig}: listed in \"figures\" but unreadable: {e}")
    return man if len(problems) == bad else None


def check_links(paths, repo, problems):
    for md in paths:
        base = os.path.dirname(md)
        with open(md, encoding="utf-8") as f:
            text = f.read()
        targets = MD_LINK.findall(text) + CODE_SPAN.findall(text)
        for t in targets:
            if re.match(r"^[a-z]+:", t) or t.startswith("#") or any(c in t for c in "*<>{}$") or "/." in t[2:]:
                continue
            target = t.split("#", 1)[0].rstrip(".,:;")
            if not os.path.exists(os.path.normpath(os.path.join(base, target))):
                problems.append(f"{os.path.relpath(md, repo)}: link to {t}, which does not exist")


def gpu_short(name):
    m = re.search(r"\b([AHBL]\d{2,3}[A-Z]?)\b", name)
    return m.group(1) if m else name


def cell(row):
    if row.get("status") != "ok":
        return row.get("status", "?")
    g = row["gflops"]
    text = f"{g:.0f}" if g >= 100 else f"{g:.1f}"
    ref = row.get("refs", {}).get("cusolver", {})
    if ref.get("ran") and ref.get("speedup"):
        text += f" ({ref['speedup']:.2f}×)"
    return text


def figure_rows(doc):
    """(key, n, row) of a tester JSON's rows that LATEST.md shows: CUDA, one right-hand side at most."""
    if not (doc["header"].get("gpu") or {}).get("name"):  # a run on a machine without a GPU: CPU rows only
        return
    gpu = gpu_short(doc["header"]["gpu"]["name"])
    for r in doc["rows"]:
        if r.get("backend") != "cuda" or r.get("nrhs", 1) > 1:
            continue
        yield (gpu, r["routine"], r["precision"], r["layout"], r["batch"]), r["n"], r


def latest_rows(root, manifests):
    """{(gpu, routine, precision, layout, batch): (folder, manifest, {n: row})}, the latest run per key."""
    best = {}
    for folder, man in manifests.items():
        docs = []
        for fig in man.get("figures", []):
            with open(os.path.join(root, folder, fig)) as f:
                docs.append((json.load(f), fig))
        docs.sort(key=lambda d: d[0]["header"]["date"])
        merged = {}
        for doc, fig in docs:  # a later JSON of the run replaces the same cells of an earlier one
            for key, n, r in figure_rows(doc):
                merged.setdefault(key, {})[n] = (r, fig)
        stamp = (man["date"], max((d[0]["header"]["date"] for d in docs), default=""))
        for key, cells in merged.items():
            if key not in best or stamp > best[key][0]:
                best[key] = (stamp, folder, man, cells)
    return {k: v[1:] for k, v in best.items()}


def render(root, manifests):
    rows = latest_rows(root, manifests)
    out = ["# Latest figures", "",
           "Generated by `make_latest.py` from the run folders' `manifest.json` (do not edit: CTest",
           "`results.latest` fails when this file is not what the script writes). For each GPU, precision,",
           "layout and batch size, the latest run that measured it: GFLOP/s of the library's routine (its",
           "tuned configuration, one right-hand side for potrs and posv) and, in parentheses, its speed-up over",
           "cuSOLVER's batched routine timed in the same process; — where that run has no such n. The last",
           "column names the files each row's figures come from (checked by CTest `results.latest_sources`).",
           ""]
    for routine in ROUTINES:
        keys = [k for k in rows if k[1] == routine]
        if not keys:
            continue
        out += [f"## {routine}", "",
                "| GPU | precision | layout | batch | " + " | ".join(f"n = {n}" for n in COLUMNS) + " | from |",
                "|---|---|---|---:|" + "---:|" * len(COLUMNS) + "---|"]
        keys.sort(key=lambda k: (k[0], k[2], LAYOUT_ORDER.index(k[3]) if k[3] in LAYOUT_ORDER else 9, k[4]))
        keys.sort(key=lambda k: rows[k][1]["date"], reverse=True)  # the newest runs first (stable)
        for k in keys:
            folder, man, cells = rows[k]
            values = [cell(cells[n][0]) if n in cells else "—" for n in COLUMNS]
            sources = sorted({cells[n][1] for n in COLUMNS if n in cells})
            out.append(f"| {k[0]} | {k[2]} | {k[3]} | {k[4]} | " + " | ".join(values) +
                       f" | [{folder}]({folder}/) ({man['commit']}): " + ", ".join(f"`{s}`" for s in sources) + " |")
        out.append("")
    out += ["## Every run", "",
            "Newest first; `manifest.json` in each folder says what its files are and how they were made.", "",
            "| folder | GPU | commit | topic |", "|---|---|---|---|"]
    for folder in sorted(manifests, reverse=True):
        man = manifests[folder]
        topic = man["topic"].replace("|", "/")
        out.append(f"| [{folder}]({folder}/) | {man['gpu']} | {man['commit']} | {topic} |")
    return "\n".join(out) + "\n"


ROW = re.compile(r"^\| (?P<gpu>[^|]+) \| (?P<precision>[^|]+) \| (?P<layout>[^|]+) \| (?P<batch>\d+) \| "
                 r"(?P<cells>(?:[^|]+ \| ){%d})(?P<source>[^|]*) \|$" % len(COLUMNS))
SOURCE = re.compile(r"^\[(?P<folder>[^\]]+)\]\((?P=folder)/\) \([0-9a-f]+\): (?P<files>`[^`]+`(?:, `[^`]+`)*)$")


def verify_sources(root, latest, manifests, problems):
    """Every figure of the tables in `latest` (the committed file) from the source files its row names."""
    try:
        with open(latest, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        problems.append(f"{latest}: missing")
        return 0
    routine, checked = None, 0
    for number, line in enumerate(lines, 1):
        where = f"{os.path.basename(latest)}:{number}"
        if line.startswith("## "):
            routine = line[3:].strip() if line[3:].strip() in ROUTINES else None
            continue
        if routine is None or not line.startswith("| ") or line.startswith("| GPU |"):
            continue
        m = ROW.match(line)
        if not m:
            problems.append(f"{where}: a table row that is not GPU | precision | layout | batch | "
                            f"{len(COLUMNS)} figures | source")
            continue
        values = [v.strip() for v in m.group("cells").split(" | ")]
        values[-1] = values[-1].rstrip(" |").strip()
        src = SOURCE.match(m.group("source").strip())
        if not src:
            if any(v != "—" for v in values):
                problems.append(f"{where}: figures without a source file (the row names none)")
            continue
        folder = src.group("folder")
        files = re.findall(r"`([^`]+)`", src.group("files"))
        man = manifests.get(folder)
        derived = {}
        docs = []
        for fig in files:
            path = os.path.join(root, folder, fig)
            if man is None or fig not in man.get("figures", []):
                problems.append(f"{where}: source {folder}/{fig} is not among that run's \"figures\"")
                continue
            try:
                with open(path) as f:
                    docs.append(json.load(f))
            except (OSError, ValueError) as e:
                problems.append(f"{where}: source {folder}/{fig} unreadable: {e}")
        docs.sort(key=lambda d: d["header"]["date"])
        key = (m.group("gpu").strip(), routine, m.group("precision").strip(), m.group("layout").strip(),
               int(m.group("batch")))
        for doc in docs:
            for k, n, r in figure_rows(doc):
                if k == key:
                    derived[n] = cell(r)
        for n, value in zip(COLUMNS, values):
            checked += value != "—"
            if value == "—":
                if n in derived:
                    problems.append(f"{where}: n = {n} shows — but {folder} has {derived[n]}")
            elif n not in derived:
                problems.append(f"{where}: n = {n} figure {value} has no source (no row of {', '.join(files)})")
            elif derived[n] != value:
                problems.append(f"{where}: n = {n} figure {value}, but its source gives {derived[n]}")
    return checked


# What the usual files of a run are (make_latest.py --draft-manifest).
DRAFT_FILES = {
    "README.md": "what was measured, how, and what it showed",
    "gpu.txt": "nvidia-smi at the start of the call (GPU, driver, clocks, temperature)",
    "*.json": "tester output (header: GPU, CUDA, commit, date, command line; one row per case)",
    "*.log": "console log of the run of the same name",
    "*.log.xz": "console log of the run of the same name (xz)",
    "*.png": "TODO: what the plot shows",
    "targets.md": "the targets met or missed, row by row (validation/target_report.py)",
    "*.tar.gz": "logs of the GPU test suites (scripts/on-gpu.sh gpu-tests)",
    "*.jsonl.xz": "TODO: the tuner's candidate log or resume file (xz)",
}


def draft_manifest(folder):
    """A manifest from the folder's name, its tester JSON headers and its files; TODO where a person must say."""
    name = os.path.basename(os.path.normpath(folder))
    m = FOLDER.match(name)
    if not m:
        sys.exit(f"make_latest: {folder}: name it YYYY-MM-DD-<h100|h200>-<commit>-<topic> first")
    date, gpu, commit, topic = m.groups()
    headers, figures = [], []
    for rel in folder_files(folder):
        if rel.endswith(".json") and rel != "manifest.json":
            try:
                with open(os.path.join(folder, rel)) as f:
                    doc = json.load(f)
            except ValueError:
                continue
            if isinstance(doc, dict) and "header" in doc and "rows" in doc:
                headers.append(doc["header"])
                figures.append(rel)
    files = {}
    for rel in folder_files(folder):
        if rel == "manifest.json" or covered(rel, files):
            continue
        pattern = next((p for p in DRAFT_FILES if covered(rel, [p])), None)
        files[pattern or rel] = DRAFT_FILES.get(pattern, "TODO: what this file is")
    commands = []
    for h in headers:
        c = re.sub(r" --json \S+", "", re.sub(r"^\S*/", "", h.get("command_line", "")))
        if c and c not in commands:
            commands.append(c)
    gpus = sorted({h.get("gpu", {}).get("name", "") for h in headers} - {""})
    cudas = sorted({h.get("gpu", {}).get("cuda_runtime_version", "") for h in headers} - {""})
    return {"date": date, "gpu": ", ".join(gpus) or f"TODO: the {gpu.upper()}'s name (gpu.txt)", "commit": commit,
            "cuda": ", ".join(cudas) or "TODO", "topic": f"TODO: one sentence on {topic.replace('-', ' ')}",
            "command": commands or ["TODO"], "files": files,
            "figures": figures, "formerly": ""}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=here, help="the results folder (default: this script's)")
    ap.add_argument("--check", action="store_true", help="write nothing; fail when LATEST.md is out of date")
    ap.add_argument("--links-also", action="append", default=[],
                    help="another folder whose Markdown links are checked too (e.g. experiments/)")
    ap.add_argument("--draft-manifest", metavar="FOLDER", help="write a first manifest.json for a new run folder")
    ap.add_argument("--verify-sources", action="store_true",
                    help="only check every figure of the committed LATEST.md against its named source files")
    args = ap.parse_args()
    if args.draft_manifest:
        path = os.path.join(args.draft_manifest, "manifest.json")
        if os.path.exists(path):
            sys.exit(f"make_latest: {path} exists; not replaced")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(draft_manifest(args.draft_manifest), f, indent=1, ensure_ascii=False)
            f.write("\n")
        print(f"make_latest: {path} drafted: fill in the TODOs and drop from \"figures\" what is not the "
              "shipped library (before/after comparisons), then run make_latest.py")
        return 0
    root = os.path.abspath(args.root)
    problems = []
    manifests = {}
    for folder in run_folders(root):
        man = check_manifest(root, folder, problems)
        if man is not None:
            manifests[folder] = man
    latest = os.path.join(root, "LATEST.md")
    if args.verify_sources:
        checked = verify_sources(root, latest, manifests, problems)
        for p in problems:
            print(f"make_latest: {p}", file=sys.stderr)
        if problems:
            print(f"make_latest: {len(problems)} problem(s)", file=sys.stderr)
            return 1
        print(f"make_latest: {checked} figures of LATEST.md, each from its named source file")
        return 0
    markdown = []
    for top in [root] + [os.path.abspath(p) for p in args.links_also]:
        for dirpath, _, names in os.walk(top):
            markdown += [os.path.join(dirpath, n) for n in names if n.endswith(".md")]
    check_links(sorted(markdown), os.path.dirname(root), problems)
    text = render(root, manifests)
    if args.check:
        verify_sources(root, latest, manifests, problems)
        try:
            with open(latest, encoding="utf-8") as f:
                committed = f.read()
        except FileNotFoundError:
            committed = None
        if committed != text:
            problems.append(f"{latest}: not what make_latest.py writes from the manifests "
                            "(run results/make_latest.py and commit LATEST.md)")
    elif not problems:
        with open(latest, "w", encoding="utf-8") as f:
            f.write(text)
    for p in problems:
        print(f"make_latest: {p}", file=sys.stderr)
    if problems:
        print(f"make_latest: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    print(f"make_latest: {len(manifests)} run folders, LATEST.md {'up to date' if args.check else 'written'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
