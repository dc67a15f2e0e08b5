"""The `kiln` command line.

Each subcommand is one `_add_<name>(subparsers)` function that declares its
arguments and sets `run`, a function from the parsed arguments to an exit code;
`_SUBCOMMANDS` lists them. Commands on programs (print, inspect, plan, run) run the
C++ `kiln-tool` shipped in the package, which links Kiln's readers and compiler.
"""

import argparse
import os
import subprocess
import sys

import kiln_pjrt


def device_lines() -> list[str]:
    """One line per device of the `kiln` platform, as JAX reports it.

    Raises ModuleNotFoundError when jax is not installed, RuntimeError when JAX
    cannot create Kiln's client.
    """
    # Decides which backends JAX initializes; it must be set before jax is
    # first imported, which is why jax is imported here and not at the top.
    os.environ["JAX_PLATFORMS"] = kiln_pjrt.PLATFORM_NAME
    import jax

    return [
        f"id={device.id} platform={device.platform} kind={device.device_kind} {device}"
        for device in jax.devices(kiln_pjrt.PLATFORM_NAME)
    ]


def _run_devices(args: argparse.Namespace) -> int:
    try:
        lines = device_lines()
    except ModuleNotFoundError as error:
        if error.name != "jax":
            raise
        print("kiln devices: jax is not installed; install it with `pip install jax`",
              file=sys.stderr)
        return 1
    except RuntimeError as error:
        print(f"kiln devices: JAX could not start Kiln: {error}", file=sys.stderr)
        return 1
    for line in lines:
        print(line)
    return 0


def _add_devices(subparsers) -> None:
    parser = subparsers.add_parser("devices", help="list Kiln's devices as JAX sees them")
    parser.set_defaults(run=_run_devices)


def _forward_to_tool(args: argparse.Namespace) -> int:
    """Runs the C++ `kiln-tool` shipped with the package for program commands."""
    tool = kiln_pjrt.tool_path()
    if not os.path.isfile(tool):
        print(f"kiln {args.command}: {tool} does not exist; reinstall kiln-pjrt or set "
              "KILN_TOOL_PATH", file=sys.stderr)
        return 1
    # Options of the tool's own spelling, before the file.
    extra = [part for entry in getattr(args, "infeed", []) for part in ("--infeed", entry)]
    time = ["--time", str(args.time)] if getattr(args, "time", None) is not None else []
    if getattr(args, "partitions", None) is not None:
        time += ["--partitions", str(args.partitions)]
    if getattr(args, "args", None) is not None:
        extra.append(f"--args={args.args}")
    if getattr(args, "probe_output_dir", None) is not None:
        extra.append(f"--probe-output-dir={args.probe_output_dir}")
    command = [tool, args.command, *args.options, *extra, *time, args.file,
               *getattr(args, "inputs", [])]
    sys.stdout.flush()
    return subprocess.run(command, check=False).returncode


def _add_print(subparsers) -> None:
    parser = subparsers.add_parser(
        "print", help="print a program (portable artifact or text) as StableHLO text")
    parser.add_argument("file")
    parser.add_argument("--generic", dest="options", action="append_const", const="--generic",
                        default=[], help="print every op in MLIR's generic form")
    parser.add_argument("--locations", dest="options", action="append_const",
                        const="--locations", help="print source locations")
    parser.add_argument("--verify", dest="options", action="append_const", const="--verify",
                        help="check the program with Kiln's verifier first")
    parser.set_defaults(run=_forward_to_tool)


def _add_inspect(subparsers) -> None:
    parser = subparsers.add_parser(
        "inspect", help="show a portable artifact's producer, versions and op histogram")
    parser.add_argument("file")
    parser.set_defaults(run=_forward_to_tool, options=[])


def _add_plan(subparsers) -> None:
    parser = subparsers.add_parser(
        "plan", help="compile a program and list its plan: the nodes Kiln runs, in order, "
                     "with the ops each fused loop computes")
    parser.add_argument("--time", metavar="N", type=int,
                        help="also run the plan N times on generated arguments and show each "
                             "node's mean time")
    parser.add_argument("--partitions", metavar="N", type=int,
                        help="plan a sharded program for N devices (an HLO program from "
                             "PyTorch/XLA's SPMD mode names none)")
    parser.add_argument("file")
    parser.set_defaults(run=_forward_to_tool, options=[])


def _add_run(subparsers) -> None:
    parser = subparsers.add_parser(
        "run", help="compile and run a program's main function on the host and print its "
                    "results; runs StableHLO conformance tests (check ops, `// -----` cases)")
    parser.add_argument("--infeed", metavar="ENTRY", action="append", default=[],
                        help="an entry for the program's infeed ops, in order: literals "
                             "joined by ';' (repeatable); outfeed entries are printed")
    # The StableHLO interpreter's conventions (stablehlo-translate --interpret),
    # for upstream's interpreter tests.
    parser.add_argument("--args", metavar="[LITERAL, ...]",
                        help="the arguments as one bracketed list of literals, before any "
                             "positional ones")
    parser.add_argument("--interpreter-format", dest="options", action="append_const",
                        const="--interpreter-format", default=[],
                        help="print results as the StableHLO interpreter does")
    parser.add_argument("--probe-output-dir", metavar="DIR",
                        help="folder where interpreter.probe ops write their .npy files "
                             "(listed in DIR/index.csv)")
    parser.add_argument("--spec-semantics", dest="options", action="append_const",
                        const="--spec-semantics",
                        help="the StableHLO spec's arithmetic instead of XLA's CPU backend's: "
                             "denormals kept, NaN rounded to infinity with no mantissa bits")
    parser.add_argument("file")
    parser.add_argument("inputs", nargs="*",
                        help="arguments as literals, e.g. 'dense<[1, 2]> : tensor<2xi32>'")
    parser.set_defaults(run=_forward_to_tool)


_SUBCOMMANDS = [_add_devices, _add_print, _add_inspect, _add_plan, _add_run]


def make_parser() -> argparse.ArgumentParser:
    """The `kiln` argument parser with every subcommand."""
    parser = argparse.ArgumentParser(prog="kiln", description="Kiln, a PJRT device plugin.")
    parser.add_argument("--version", action="version",
                        version=f"%(prog)s {kiln_pjrt.__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add_subcommand in _SUBCOMMANDS:
        add_subcommand(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `kiln` console script."""
    args = make_parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
