"""`python -m kiln_pjrt`: reports Kiln's version, library, C API version and devices.

`python -m kiln_pjrt --library-path` prints only the library's path (for scripts).
"""

import argparse
import os
import sys

import kiln_pjrt
from kiln_pjrt import _capi, cli


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kiln_pjrt", description=__doc__)
    parser.add_argument("--library-path", action="store_true",
                        help="print only the path of the plugin library")
    args = parser.parse_args(argv)

    path = kiln_pjrt.library_path()
    if args.library_path:
        print(path)
        return 0

    print(f"kiln-pjrt {kiln_pjrt.__version__}")
    print(f"library: {path}" + ("" if os.path.isfile(path) else " (missing)"))
    try:
        major, minor = _capi.api_version(path)
    except (OSError, RuntimeError) as error:
        print(f"PJRT C API: cannot load the library: {error}")
        return 1
    print(f"PJRT C API: {major}.{minor}")

    try:
        lines = cli.device_lines()
    except ModuleNotFoundError as error:
        if error.name != "jax":
            raise
        print("devices: jax is not installed, so no devices are listed")
        return 0
    except RuntimeError as error:
        print(f"devices: JAX could not start Kiln: {error}")
        return 1
    print(f"devices: {len(lines)}")
    for line in lines:
        print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
