"""Fails when a *_test.cc file of the tree is built by no test target.

    check_tests_built.py SOURCE_DIR BUILT_LIST

BUILT_LIST is the list tests/CMakeLists.txt writes of the test files its
targets compile. Files under build folders and virtual environments are
ignored; a file here must be added to a target (or its folder's glob).
"""
import os
import sys


def main():
    source_dir, built_list = sys.argv[1], sys.argv[2]
    built = {os.path.realpath(line.strip()) for line in open(built_list) if line.strip()}
    missing = []
    for top in ("src", "tests", "tools", "fuzz", "bench"):
        for folder, dirs, files in os.walk(os.path.join(source_dir, top)):
            dirs[:] = [d for d in dirs if not d.startswith((".", "build"))]
            for name in files:
                path = os.path.realpath(os.path.join(folder, name))
                if name.endswith("_test.cc") and path not in built:
                    missing.append(os.path.relpath(path, source_dir))
    if missing:
        print("These test files are built by no target (tests/CMakeLists.txt):")
        for path in sorted(missing):
            print("  " + path)
        return 1
    print(f"{len(built)} test files, all built")
    return 0


if __name__ == "__main__":
    sys.exit(main())
