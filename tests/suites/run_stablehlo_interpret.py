"""Runs the StableHLO interpreter's own tests (openxla/stablehlo's
`stablehlo/tests/interpret`, a folder of `.mlir` files) under `kiln run`.

    python tests/suites/run_stablehlo_interpret.py DIR [--kiln PATH] [--only NAME,...]

Each file's `// RUN:` lines say how upstream runs it (`stablehlo-translate
--interpret` with `--args=...`, `--interpreter-print-dense`,
`--probe-output-dir=...`, piped into FileCheck with a check prefix). This
runs the same file with the matching `kiln run` options, always with
`--spec-semantics` (the interpreter follows the spec where XLA's CPU
backend does not), and checks the output against the file's CHECK lines
with a small FileCheck: `PREFIX:` finds a line at or after the last match,
`PREFIX-NEXT:` must be the next line, `{{...}}` is a regular expression,
`{LITERAL}` turns that off, and runs of spaces match any run of spaces. A
RUN line starting with `not` must fail. `stablehlo-opt
--chlo-legalize-to-stablehlo` steps are skipped: Kiln runs CHLO ops itself.

Prints a line per file and the totals; the exit status is 0 when every file
passes. The folder is not part of Kiln (upstream's tests are never copied
in): check out openxla/stablehlo and point this at it.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_lines(text):
    """The RUN commands of a file, continuation lines joined."""
    lines, current = [], ""
    for line in text.splitlines():
        match = re.match(r"\s*//\s*RUN:\s?(.*)$", line)
        if not match:
            continue
        part = match.group(1).rstrip()
        if part.endswith("\\"):
            current += part[:-1] + " "
            continue
        lines.append(current + part)
        current = ""
    return lines


def kiln_options(command, probe_dir):
    """`kiln run` options for a `stablehlo-translate --interpret` command, the
    FileCheck prefix it pipes into (None: no FileCheck), and whether it must
    fail."""
    must_fail = command.lstrip().startswith("not ")
    options = ["--spec-semantics"]
    translate = command.split("|")[-2] if "FileCheck" in command else command
    if "--interpreter-print-dense" not in translate:
        options.append("--interpreter-format")
    args = re.search(r"--args=(\"[^\"]*\"|'[^']*'|\S+)", translate)
    if args:
        options.append("--args=" + args.group(1).strip("\"'"))
    if "--probe-output-dir" in translate:
        options.append("--probe-output-dir=" + probe_dir)
    prefix = None
    if "FileCheck" in command:
        found = re.search(r"--check-prefix(?:es)?=(\S+)", command.split("FileCheck", 1)[1])
        prefix = found.group(1).split(",")[0] if found else "CHECK"
    return options, prefix, must_fail


def collapse(text):
    return re.sub(r"\s+", " ", text.strip())


def pattern_regex(pattern, literal):
    if literal:
        return re.escape(collapse(pattern))
    pieces = re.split(r"(\{\{.*?\}\})", collapse(pattern))
    return "".join(piece[2:-2] if piece.startswith("{{") else re.escape(piece)
                   for piece in pieces)


def file_check(text, output, prefix):
    """The first CHECK line of `prefix` the output does not satisfy, or None."""
    lines = [collapse(line) for line in output.splitlines()]
    position = 0  # the line after the last match
    directive = re.compile(r"//\s*(" + re.escape(prefix) + r")(-NEXT)?(\{LITERAL\})?:(.*)$")
    for line in text.splitlines():
        match = directive.search(line)
        if not match:
            continue
        regex = re.compile(pattern_regex(match.group(4), bool(match.group(3))))
        if match.group(2):  # -NEXT: the very next line
            if position >= len(lines) or not regex.search(lines[position]):
                return line.strip()
            position += 1
            continue
        for at in range(max(position - 1, 0) if position else 0, len(lines)):
            if at >= position and regex.search(lines[at]):
                position = at + 1
                break
        else:
            return line.strip()
    return None


def run_file(kiln, path):
    text = open(path).read()
    commands = [c for c in run_lines(text) if "--interpret" in c]
    if not commands:
        commands = ["stablehlo-translate --interpret %s"]
    probe_dir = tempfile.mkdtemp(prefix="kiln-probes-")
    try:
        for command in commands:
            options, prefix, must_fail = kiln_options(command, probe_dir)
            result = subprocess.run([kiln, "run", *options, path], capture_output=True,
                                    text=True, timeout=600)
            if must_fail:
                if result.returncode == 0:
                    return f"expected a failure: {command}"
                continue
            if result.returncode != 0:
                tail = (result.stdout + result.stderr).strip().splitlines()[-3:]
                return f"exit {result.returncode}: " + " | ".join(tail)
            if prefix is not None:
                missed = file_check(text, result.stdout, prefix)
                if missed is not None:
                    return f"{prefix} not matched: {missed}"
        return None
    finally:
        shutil.rmtree(probe_dir, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder")
    parser.add_argument("--kiln", default=os.path.join(ROOT, "build", "cpp", "kiln-tool"))
    parser.add_argument("--only", help="comma-separated file names (relative to the folder)")
    args = parser.parse_args()
    files = []
    for folder, _, names in os.walk(args.folder):
        files += [os.path.join(folder, n) for n in sorted(names) if n.endswith(".mlir")]
    files.sort()
    if args.only:
        wanted = set(args.only.split(","))
        files = [f for f in files if os.path.relpath(f, args.folder) in wanted]
    failed = []
    for path in files:
        name = os.path.relpath(path, args.folder)
        problem = run_file(args.kiln, path)
        print(f"{'PASS' if problem is None else 'FAIL'} {name}"
              + ("" if problem is None else f": {problem}"), flush=True)
        if problem is not None:
            failed.append(name)
    print(f"{len(files) - len(failed)} of {len(files)} files pass")
    sys.exit(0 if not failed else 1)


if __name__ == "__main__":
    main()
