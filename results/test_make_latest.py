#!/usr/bin/env python3
"""Tests of make_latest.py on a small shelf built here: a good shelf passes and its LATEST.md takes each
row from the newest run; a stale LATEST.md, a folder name that disagrees with its manifest, a file no
pattern describes, a missing manifest key and a broken link each fail with the problem named; so do a
LATEST.md figure edited by hand, one without a source file, and a source the run does not list."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, "make_latest.py")


def make_tester_json(date, commit, gflops, speedup):
    rows = [{"backend": "cuda", "routine": "potrf", "precision": "d", "layout": "interleaved", "batch": 16384,
             "n": n, "nrhs": 0, "status": "ok", "gflops": gflops * n,
             "refs": {"cusolver": {"ran": True, "speedup": speedup}}} for n in (8, 16)]
    return {"header": {"date": date, "git_commit": commit, "gpu": {"name": "NVIDIA H200"}}, "rows": rows, "summary": {}}


def manifest(date, commit, figures):
    return {"date": date, "gpu": "NVIDIA H200", "commit": commit, "cuda": "13.0", "topic": "a test run",
            "command": ["tester --routine potrf"], "files": {"*.json": "tester output", "README.md": "what"},
            "figures": figures, "formerly": ""}


def make_shelf(root):
    for date, commit, g, s in (("2026-01-01", "aaaaaaa", 10.0, 2.0), ("2026-02-01", "bbbbbbb", 20.0, 3.0)):
        d = os.path.join(root, f"{date}-h200-{commit}-test")
        os.makedirs(d)
        with open(os.path.join(d, "t.json"), "w") as f:
            json.dump(make_tester_json(date + "T00:00:00Z", commit, g, s), f)
        with open(os.path.join(d, "manifest.json"), "w") as f:
            json.dump(manifest(date, commit, ["t.json"]), f)
        with open(os.path.join(d, "README.md"), "w") as f:
            f.write("See [the other run](../2026-01-01-h200-aaaaaaa-test/) and `../2026-01-01-h200-aaaaaaa-test/t.json`.\n")


def run(root, *extra):
    p = subprocess.run([sys.executable, TOOL, "--root", root, *extra], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def main():
    failures = []

    def expect(name, cond, output=""):
        print(("ok: " if cond else "FAILED: ") + name)
        if not cond:
            failures.append(name)
            print(output)

    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "results")
        make_shelf(root)
        rc, out = run(root, "--check")
        expect("a shelf without LATEST.md fails --check", rc == 1 and "LATEST.md: not what" in out, out)
        rc, out = run(root)
        expect("writing LATEST.md passes", rc == 0, out)
        latest = open(os.path.join(root, "LATEST.md")).read()
        expect("each row comes from the newest run", "| 320 (3.00×) |" in latest and "bbbbbbb" in latest
               and "160 (3.00×)" in latest and "(2.00×)" not in latest, latest)
        rc, out = run(root, "--check")
        expect("--check passes right after writing", rc == 0, out)

        def broken(name, change, message):
            case = os.path.join(tmp, name)
            shutil.copytree(root, case)
            change(case)
            rc, out = run(case, "--check")
            expect(name, rc == 1 and message in out, out)

        def edit_manifest(case, key, value):
            p = os.path.join(case, "2026-02-01-h200-bbbbbbb-test", "manifest.json")
            m = json.load(open(p))
            if value is None:
                del m[key]
            else:
                m[key] = value
            json.dump(m, open(p, "w"))

        broken("a changed figure makes LATEST.md stale",
               lambda c: json.dump(make_tester_json("2026-02-01T00:00:00Z", "bbbbbbb", 30.0, 3.0),
                                   open(os.path.join(c, "2026-02-01-h200-bbbbbbb-test", "t.json"), "w")),
               "LATEST.md: not what")
        broken("a commit that disagrees with the folder's name", lambda c: edit_manifest(c, "commit", "ccccccc"),
               "commit ccccccc but the folder says bbbbbbb")
        broken("a manifest without its topic", lambda c: edit_manifest(c, "topic", None), 'no "topic"')
        broken("a file no pattern describes",
               lambda c: open(os.path.join(c, "2026-02-01-h200-bbbbbbb-test", "notes.txt"), "w").write("x"),
               "notes.txt: not described")
        broken("a folder named otherwise", lambda c: os.makedirs(os.path.join(c, "run7")),
               "run7: the name is not")
        broken("a broken link",
               lambda c: shutil.rmtree(os.path.join(c, "2026-01-01-h200-aaaaaaa-test")) or
               edit_manifest(c, "figures", ["t.json"]),
               "which does not exist")
        # every figure of the committed LATEST.md must come from the file its row names
        rc, out = run(root, "--verify-sources")
        expect("--verify-sources passes on the written LATEST.md", rc == 0 and "figures of LATEST.md" in out, out)

        def latest_edit(name, old, new, message):
            case = os.path.join(tmp, name)
            shutil.copytree(root, case)
            p = os.path.join(case, "LATEST.md")
            text = open(p).read()
            assert old in text, (name, text)
            open(p, "w").write(text.replace(old, new, 1))
            for mode in ("--verify-sources", "--check"):
                rc, out = run(case, mode)
                expect(f"{name} ({mode})", rc == 1 and message in out, out)

        latest_edit("a figure edited by hand", "| 320 (3.00×) |", "| 330 (3.00×) |", "its source gives 320 (3.00×)")
        latest_edit("a row without its source file", ": `t.json` |", " |", "figures without a source file")
        latest_edit("a figure no source row gives", "| — |", "| 99 |", "has no source")
        latest_edit("a source that is not among the run's figures", ": `t.json` |", ": `other.json` |",
                    "is not among that run's")
        # a drafted manifest has the folder's provenance and the figures, and fails until its TODOs are done
        case = os.path.join(tmp, "draft")
        shutil.copytree(root, case)
        d = os.path.join(case, "2026-02-01-h200-bbbbbbb-test")
        os.remove(os.path.join(d, "manifest.json"))
        p = subprocess.run([sys.executable, TOOL, "--draft-manifest", d], capture_output=True, text=True)
        m = json.load(open(os.path.join(d, "manifest.json"))) if p.returncode == 0 else {}
        expect("a drafted manifest takes date, commit, GPU and figures from the folder",
               m.get("date") == "2026-02-01" and m.get("commit") == "bbbbbbb" and m.get("gpu") == "NVIDIA H200"
               and m.get("figures") == ["t.json"], p.stdout + p.stderr + json.dumps(m))
        rc, out = run(case)
        expect("... and fails the check until its TODOs are filled in", rc == 1 and "still has TODOs" in out, out)
    print(f"test_make_latest: {'all checks passed' if not failures else f'{len(failures)} failed'}")
    return 1 if failures else 0


def test_make_latest():
    """The same checks under pytest (python3 -m pytest results/test_make_latest.py)."""
    assert main() == 0


if __name__ == "__main__":
    sys.exit(main())
