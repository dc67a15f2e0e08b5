#!/usr/bin/env python3
"""Fetch the PJRT C API headers from a published TensorFlow wheel into a cache.

Kiln never commits pjrt_c_api.h. This script downloads one pinned tf-nightly
wheel with pip (the only network Kiln's builds use is the package registry),
extracts `tensorflow/include/xla/pjrt/c/*.h` into
`<cache>/<package>-<version>/include/xla/pjrt/c/` and deletes the wheel.
From the same wheel's generated `xla/xla.pb.h` it derives
`include/kiln/xla_debug_options.inc`: one line per field of xla.DebugOptions
(name, type, enum value names), the compile options XLA accepts, which Kiln
checks as XLA's CPU backend does (docs/compile-options.md).
It prints the include directory on success. docs/pjrt-header.md says why
this package and version were chosen.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

PACKAGE = "tf-nightly"
VERSION = "2.23.0.dev20261026"
MEMBER_PREFIX = "tensorflow/include/xla/pjrt/c/"
# Generated protobuf headers the option table is read from: DebugOptions and
# the enums its fields use.
PROTO_HEADERS = ("tensorflow/include/xla/xla.pb.h",
                 "tensorflow/include/xla/backends/autotuner/backends.pb.h")
OPTIONS_TABLE = os.path.join("kiln", "xla_debug_options.inc")

# Scalar proto types and the kinds Kiln's table names them by.
SCALAR_KINDS = {"bool": "kBool", "int32": "kInt32", "int64": "kInt64", "uint32": "kUint32",
                "uint64": "kUint64", "float": "kFloat", "double": "kDouble",
                "string": "kString", "bytes": "kString"}


def default_cache_dir():
    base = os.environ.get("KILN_CACHE_DIR")
    if base:
        return base
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(xdg, "kiln")


def move_into_place(staging, include_dir):
    """Moves the folder `staging` to `include_dir` in one rename, so that a
    concurrent build never sees half a cache; a build that renamed first wins."""
    final_tmp = include_dir + f".tmp{os.getpid()}"
    if os.path.abspath(staging) != os.path.abspath(final_tmp):
        shutil.move(staging, final_tmp)
    try:
        os.rename(final_tmp, include_dir)
    except OSError:
        shutil.rmtree(final_tmp, ignore_errors=True)


def pip_commands():
    yield [sys.executable, "-m", "pip"]
    for name in ("python3", "python3.12", "python3.13", "python3.11"):
        path = shutil.which(name)
        if path and os.path.realpath(path) != os.path.realpath(sys.executable):
            yield [path, "-m", "pip"]


def download_wheel(dest):
    last_error = ""
    for pip in pip_commands():
        cmd = pip + ["download", "--quiet", "--no-deps", "--only-binary=:all:",
                     "--python-version", "3.12", "-d", dest, f"{PACKAGE}=={VERSION}"]
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode == 0:
            wheels = [f for f in os.listdir(dest) if f.endswith(".whl")]
            if wheels:
                return os.path.join(dest, wheels[0])
        last_error = result.stderr.strip().splitlines()[-1:] or ["(no output)"]
        last_error = " ".join(last_error)
    sys.exit(f"fetch_pjrt_header: could not download {PACKAGE}=={VERSION} with pip: {last_error}")


def enum_values(headers):
    """{C++ enum name: [value names]} of every enum the headers define."""
    enums = {}
    for text in headers:
        for match in re.finditer(r"^enum (\w+) : int \{\n(.*?)^\};", text, re.M | re.S):
            name, body = match.group(1), match.group(2)
            values = []
            for value in re.findall(r"^  (\w+) =", body, re.M):
                if "_SENTINEL_DO_NOT_USE_" in value:
                    continue
                values.append(value[len(name) + 1:] if value.startswith(name + "_") else value)
            enums[name] = values
    return enums


def debug_option_lines(xla_header, other_headers):
    """The lines of the option table, from the generated xla.pb.h.

    The generated code precedes each field's accessors with a comment
    `  // [optional|repeated] <type> <name> = <number>;`; those inside
    `class ... DebugOptions final` are the options."""
    start = re.search(r"^class (PROTOBUF_EXPORT )?DebugOptions final", xla_header, re.M)
    if start is None:
        sys.exit("fetch_pjrt_header: xla.pb.h has no class DebugOptions")
    end = re.search(r"^class ", xla_header[start.end():], re.M)
    body = xla_header[start.end():start.end() + end.start() if end else len(xla_header)]
    enums = enum_values([xla_header] + other_headers)
    lines, seen = [], set()
    field = re.compile(r"^  // (repeated |optional )?([.\w]+|map<\w+, \w+>) (\w+) = \d+;$", re.M)
    for label, type_name, name in field.findall(body):
        if name in seen:
            continue
        seen.add(name)
        values = []
        if type_name.startswith("map<"):
            kind = "kMessage"
        elif type_name in SCALAR_KINDS:
            kind = SCALAR_KINDS[type_name]
        else:
            parts = type_name.lstrip(".").split(".")
            # .xla.DebugOptions.CpuSchedulerType is DebugOptions_CpuSchedulerType;
            # .xla.autotuner.Backend is Backend (package xla.autotuner).
            candidates = ["_".join(parts[i:]) for i in range(1, len(parts))]
            found = next((c for c in candidates if c in enums), None)
            kind = "kEnum" if found else "kMessage"
            values = enums.get(found, [])
        repeated = "true" if label.strip() == "repeated" else "false"
        lines.append(f'KILN_XLA_OPTION("{name}", {kind}, {repeated}, "{" ".join(values)}")')
    if len(lines) < 100:
        sys.exit(f"fetch_pjrt_header: found only {len(lines)} DebugOptions fields in xla.pb.h")
    return lines


def write_options_table(staging, archive):
    texts = [archive.read(member).decode("utf-8") for member in PROTO_HEADERS]
    lines = debug_option_lines(texts[0], texts[1:])
    target = os.path.join(staging, OPTIONS_TABLE)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "w") as out:
        out.write(f"// Generated by cmake/fetch_pjrt_header.py from xla/xla.pb.h of "
                  f"{PACKAGE}=={VERSION}:\n// the fields of xla.DebugOptions as "
                  f"KILN_XLA_OPTION(name, kind, repeated, enum value names).\n")
        out.write("\n".join(lines) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cache-dir", default=default_cache_dir())
    args = parser.parse_args()
    include_dir = os.path.join(args.cache_dir, f"{PACKAGE}-{VERSION}", "include")
    header = os.path.join(include_dir, "xla", "pjrt", "c", "pjrt_c_api.h")
    table = os.path.join(include_dir, OPTIONS_TABLE)
    if os.path.isfile(header) and os.path.isfile(table):
        print(include_dir)
        return
    with tempfile.TemporaryDirectory(prefix="kiln-pjrt-header-") as tmp:
        wheel = download_wheel(tmp)
        staging = os.path.join(tmp, "include")
        with zipfile.ZipFile(wheel) as archive:
            members = [m for m in archive.namelist()
                       if m.startswith(MEMBER_PREFIX) and m.endswith(".h")]
            if not any(m.endswith("/pjrt_c_api.h") for m in members):
                sys.exit(f"fetch_pjrt_header: {wheel} has no {MEMBER_PREFIX}pjrt_c_api.h")
            for member in members:
                target = os.path.join(staging, "xla", "pjrt", "c", os.path.basename(member))
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with archive.open(member) as src, open(target, "wb") as dst:
                    shutil.copyfileobj(src, dst)
            write_options_table(staging, archive)
        os.makedirs(os.path.dirname(include_dir), exist_ok=True)
        # A cache from before the option table: replaced whole.
        if os.path.isdir(include_dir) and not os.path.isfile(table):
            shutil.rmtree(include_dir, ignore_errors=True)
        move_into_place(staging, include_dir)
    print(include_dir)


if __name__ == "__main__":
    main()
