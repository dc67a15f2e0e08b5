"""Checks the layer map of docs/architecture.md against the includes.

    check_layers.py SRC_DIR LAYER_MAP

LAYER_MAP has a line per library of Kiln ("name folder dep dep ..."), as the
top-level CMakeLists.txt writes it from kiln_add_library. A layer is a
top-level folder of src/; it may include headers of itself, of base, and of
the layers of the libraries its own libraries name in DEPS (directly, not
through another layer). Test code (*_test.cc, *_test_util.h) links
everything and is not checked. Prints each include that crosses the map and
exits 1 if there is one.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/')


def main():
    src, layer_map = sys.argv[1], sys.argv[2]
    layers = {name for name in os.listdir(src) if os.path.isdir(os.path.join(src, name))}
    folder_of = {}
    lines = [line.split() for line in open(layer_map) if line.strip()]
    for fields in lines:
        folder_of[fields[0]] = fields[1].split("/")[0]
    allowed = {layer: {layer, "base"} for layer in layers}
    for fields in lines:
        layer = folder_of[fields[0]]
        for dep in fields[2:]:
            if dep in folder_of:
                allowed.setdefault(layer, {layer, "base"}).add(folder_of[dep])
    crossings = []
    for layer in sorted(layers):
        for folder, _, files in os.walk(os.path.join(src, layer)):
            for name in sorted(files):
                if not name.endswith((".cc", ".h", ".inc")) or "_test" in name:
                    continue
                path = os.path.join(folder, name)
                for number, text in enumerate(open(path, encoding="utf-8"), 1):
                    match = INCLUDE.match(text)
                    if match and match.group(1) in layers and \
                            match.group(1) not in allowed.get(layer, set()):
                        crossings.append(f"{os.path.relpath(path, src)}:{number}: "
                                         f"{layer} includes {match.group(1)}/, which its "
                                         f"libraries do not name in DEPS")
    for crossing in crossings:
        print(crossing)
    if crossings:
        return 1
    print(f"{len(layers)} layers, every include within the map")
    return 0


if __name__ == "__main__":
    sys.exit(main())
