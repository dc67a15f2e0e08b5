#!/usr/bin/env python3
"""Fetch the PJRT C API headers from a published TensorFlow wheel into a cache.

Kiln never commits pjrt_c_api.h. This script downloads one pinned tf-nightly
wheel with pip (the only network Kiln's builds use is the package registry),
extracts `tensorflow/include/xla/pjrt/c/*.h` into
`<cache>/<package>-<version>/include/xla/pjrt/c/` and deletes the wheel.
It prints the include directory on success. docs/pjrt-header.md says why
this package and version were chosen.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

PACKAGE = "tf-nightly"
VERSION = "2.23.0.dev20261026"
MEMBER_PREFIX = "tensorflow/include/xla/pjrt/c/"


def default_cache_dir():
    base = os.environ.get("KILN_CACHE_DIR")
    if base:
        return base
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(xdg, "kiln")


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


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cache-dir", default=default_cache_dir())
    args = parser.parse_args()
    include_dir = os.path.join(args.cache_dir, f"{PACKAGE}-{VERSION}", "include")
    header = os.path.join(include_dir, "xla", "pjrt", "c", "pjrt_c_api.h")
    if os.path.isfile(header):
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
        os.makedirs(os.path.dirname(include_dir), exist_ok=True)
        # Move into place atomically so a concurrent build never sees half a cache.
        final_tmp = include_dir + f".tmp{os.getpid()}"
        shutil.move(staging, final_tmp)
        try:
            os.rename(final_tmp, include_dir)
        except OSError:
            shutil.rmtree(final_tmp, ignore_errors=True)
    print(include_dir)


if __name__ == "__main__":
    main()
