#!/usr/bin/env python3
"""Compresses the shelf's large raw files with xz and points every reference at the compressed name.

A device call carries the whole checkout (64 MiB at most), and the results shelf is most of it; the
raw files nobody reads in place (console logs, kernel lists, SASS dumps, per-case JSON) shrink 5-20x
under xz. Kept as they are: README.md, manifest.json, targets.json, any Markdown, images, files
already compressed, the tester JSON files a manifest names under "figures" (LATEST.md's sources,
read by make_latest.py and its CTest check), and any file a tracked file outside results/ names
(scripts and tests read those in place).

For each file compressed, FILE becomes FILE.xz (the original removed, `xz -9` equivalent); in its
folder's manifest every "files" pattern that matched FILE gains a twin PATTERN.xz with the same
description marked "(xz)"; and every tracked text file of the repository that names the file's path
(`results/FOLDER/FILE`, or `FILE` alone inside its own folder's Markdown) is rewritten to the new
name. Read one back with `xz -dc FILE.xz`.

    results/compact_raw.py               list what would be compressed and the bytes saved
    results/compact_raw.py --apply       do it (then run results/make_latest.py --check)
    results/compact_raw.py --min-bytes N only files of at least N bytes (default 65536)
"""
import argparse
import fnmatch
import json
import lzma
import os
import re
import subprocess
import sys

KEEP_NAMES = {"README.md", "manifest.json", "targets.json"}
KEEP_SUFFIXES = (".md", ".png", ".svg", ".jpg", ".xz", ".gz", ".zst", ".bz2", ".zip", ".h5")


def tracked(repo, *paths):
    out = subprocess.run(["git", "-C", repo, "ls-files", "-z", *paths], capture_output=True, check=True)
    return [p for p in out.stdout.decode().split("\0") if p]


def named_outside_shelf(repo):
    """Every results/... path that a tracked file outside results/ mentions."""
    out = subprocess.run(["git", "-C", repo, "grep", "-h", "-o", "-I", "-E", r"results/[0-9]{4}-[0-9A-Za-z._/-]+",
                          "--", ":!results"], capture_output=True, text=True)
    return set(out.stdout.split())


def candidates(repo, min_bytes):
    manifests, named = {}, named_outside_shelf(repo)
    for path in tracked(repo, "results"):
        parts = path.split("/")
        if len(parts) < 3:
            continue
        folder, rel, name = parts[1], "/".join(parts[2:]), parts[-1]
        if name in KEEP_NAMES or name.endswith(KEEP_SUFFIXES):
            continue
        full = os.path.join(repo, path)
        if os.path.getsize(full) < min_bytes or path in named:
            continue
        if folder not in manifests:
            try:
                with open(os.path.join(repo, "results", folder, "manifest.json")) as f:
                    manifests[folder] = json.load(f)
            except (OSError, ValueError):
                manifests[folder] = None
        man = manifests[folder]
        if man is None or rel in (man.get("figures") or []):
            continue
        yield folder, rel, full


def add_xz_patterns(man, rel):
    files = man["files"]
    for pattern, what in list(files.items()):
        if ("/" in pattern) != ("/" in rel) or not fnmatch.fnmatchcase(rel, pattern):
            continue
        twin = pattern + ".xz"
        if twin not in files and not fnmatch.fnmatchcase(rel + ".xz", pattern):
            files[twin] = f"{what} (xz)"


def rewrite_references(repo, renames):
    """renames: {"results/F/x.json": "results/F/x.json.xz"}; also bare names in the folder's Markdown."""
    by_folder = {}
    for old in renames:
        folder, rel = old.split("/", 2)[1:]
        by_folder.setdefault(folder, []).append(rel)
    changed = []
    for path in tracked(repo):
        full = os.path.join(repo, path)
        if not os.path.isfile(full) or os.path.getsize(full) > 4 << 20:
            continue
        try:
            with open(full, encoding="utf-8") as f:
                text = f.read()
        except (UnicodeDecodeError, OSError):
            continue
        new = text
        for old, repl in renames.items():
            # a path followed by a character that cannot continue a file name
            new = re.sub(re.escape(old) + r"(?![\w.\-])", repl, new)
        parts = path.split("/")
        if len(parts) >= 3 and parts[0] == "results" and parts[-1].endswith(".md") and parts[1] in by_folder:
            for rel in by_folder[parts[1]]:
                new = re.sub(r"(?<![\w./\-])" + re.escape(rel) + r"(?![\w.\-])", rel + ".xz", new)
        if new != text:
            with open(full, "w", encoding="utf-8") as f:
                f.write(new)
            changed.append(path)
    return changed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--apply", action="store_true", help="compress and rewrite (default: list only)")
    ap.add_argument("--min-bytes", type=int, default=65536, help="smallest file compressed (default 65536)")
    ap.add_argument("--repo", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    args = ap.parse_args()
    todo = list(candidates(args.repo, args.min_bytes))
    before = sum(os.path.getsize(full) for _, _, full in todo)
    if not args.apply:
        for folder, rel, full in todo:
            print(f"{os.path.getsize(full):>10}  results/{folder}/{rel}")
        print(f"{len(todo)} files, {before} bytes (run with --apply to compress)")
        return 0
    renames, after, manifests = {}, 0, {}
    for folder, rel, full in todo:
        with open(full, "rb") as f:
            data = lzma.compress(f.read(), preset=9)
        with open(full + ".xz", "wb") as f:
            f.write(data)
        os.remove(full)
        after += len(data)
        man_path = os.path.join(args.repo, "results", folder, "manifest.json")
        if man_path not in manifests:
            with open(man_path) as f:
                manifests[man_path] = json.load(f)
        add_xz_patterns(manifests[man_path], rel)
        renames[f"results/{folder}/{rel}"] = f"results/{folder}/{rel}.xz"
    for man_path, man in manifests.items():
        with open(man_path, "w") as f:
            json.dump(man, f, indent=1, ensure_ascii=False)
            f.write("\n")
    changed = rewrite_references(args.repo, renames)
    print(f"compressed {len(todo)} files: {before} -> {after} bytes; references rewritten in {len(changed)} files")
    for path in changed:
        print("  " + path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
