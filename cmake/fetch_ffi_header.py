#!/usr/bin/env python3
"""Fetch XLA's FFI headers (xla/ffi/api/*.h) of a pinned jaxlib into a cache.

Kiln never commits upstream headers. XLA's FFI C API (`c_api.h`, the table
Kiln hands to users' handlers) and its C++ binding (`api.h`, `ffi.h`, which
the handlers of tests/ffi are written against) ship in jaxlib wheels under
`jaxlib/include/xla/ffi/api/` (what `jax.ffi.include_dir()` returns). This
script copies them into `<cache>/jaxlib-<version>/include/xla/ffi/api/`:
from an installed jaxlib of that version when a Python on PATH (or the
one running this script) has it, else from the wheel `pip download` gets.
It prints the include directory on success. docs/ffi.md says more.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

from fetch_pjrt_header import default_cache_dir, move_into_place  # this folder is on sys.path

MEMBER_PREFIX = "jaxlib/include/xla/ffi/api/"
REQUIRED = ("c_api.h", "api.h", "ffi.h")


def pythons():
    yield sys.executable
    for name in ("python3.12", "python3", "python3.13", "python3.11"):
        path = shutil.which(name)
        if path:
            yield path


def installed_headers(version):
    """The xla/ffi/api folder of an installed jaxlib==version, or None."""
    probe = ("import importlib.metadata as m, os, jaxlib; "
             "print(m.version('jaxlib')); "
             "print(os.path.join(os.path.dirname(jaxlib.__file__), 'include', 'xla', 'ffi', 'api'))")
    for python in pythons():
        result = subprocess.run([python, "-c", probe], capture_output=True, text=True)
        lines = result.stdout.split("\n")
        if result.returncode == 0 and len(lines) >= 2 and lines[0].strip() == version:
            folder = lines[1].strip()
            if all(os.path.isfile(os.path.join(folder, name)) for name in REQUIRED):
                return folder
    return None


def download_wheel(version, dest):
    last_error = "(no pip ran)"
    for python in pythons():
        cmd = [python, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
               "--python-version", "3.12", "-d", dest, f"jaxlib=={version}"]
        result = subprocess.run(cmd, capture_output=True, text=True)
        wheels = [f for f in os.listdir(dest) if f.endswith(".whl")]
        if result.returncode == 0 and wheels:
            return os.path.join(dest, wheels[0])
        last_error = " ".join(result.stderr.strip().splitlines()[-1:]) or "(no output)"
    sys.exit(f"fetch_ffi_header: could not download jaxlib=={version} with pip: {last_error}")


def stage_headers(version, staging):
    target = os.path.join(staging, "xla", "ffi", "api")
    os.makedirs(target)
    folder = installed_headers(version)
    if folder is not None:
        for name in os.listdir(folder):
            if name.endswith(".h"):
                shutil.copy(os.path.join(folder, name), target)
        return
    with tempfile.TemporaryDirectory(prefix="kiln-ffi-header-") as tmp:
        wheel = download_wheel(version, tmp)
        with zipfile.ZipFile(wheel) as archive:
            members = [m for m in archive.namelist()
                       if m.startswith(MEMBER_PREFIX) and m.endswith(".h")
                       and "/" not in m[len(MEMBER_PREFIX):]]
            for member in members:
                with archive.open(member) as src, \
                        open(os.path.join(target, os.path.basename(member)), "wb") as dst:
                    shutil.copyfileobj(src, dst)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cache-dir", default=default_cache_dir())
    parser.add_argument("--jaxlib-version", required=True)
    args = parser.parse_args()
    include_dir = os.path.join(args.cache_dir, f"jaxlib-{args.jaxlib_version}", "include")
    api_dir = os.path.join(include_dir, "xla", "ffi", "api")
    if all(os.path.isfile(os.path.join(api_dir, name)) for name in REQUIRED):
        print(include_dir)
        return
    os.makedirs(os.path.dirname(include_dir), exist_ok=True)
    staging = include_dir + f".tmp{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    stage_headers(args.jaxlib_version, staging)
    missing = [n for n in REQUIRED if not os.path.isfile(os.path.join(staging, "xla", "ffi", "api", n))]
    if missing:
        shutil.rmtree(staging, ignore_errors=True)
        sys.exit(f"fetch_ffi_header: jaxlib=={args.jaxlib_version} has no "
                 f"{', '.join(MEMBER_PREFIX + n for n in missing)}")
    shutil.rmtree(include_dir, ignore_errors=True)
    move_into_place(staging, include_dir)
    print(include_dir)


if __name__ == "__main__":
    main()
