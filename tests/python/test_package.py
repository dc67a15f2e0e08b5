"""The installed kiln-pjrt package: registration, reporting tools, exported symbols."""

import importlib.metadata
import os
import re
import shutil
import subprocess
import sys

import pytest

import kiln_pjrt
from kiln_pjrt import _capi, torch_plugin


def test_version_matches_distribution():
    assert kiln_pjrt.__version__ == importlib.metadata.version("kiln-pjrt")


def test_importing_kiln_pjrt_imports_no_framework(run_python):
    code = """
    import sys, kiln_pjrt
    print(sorted(name for name in ("jax", "jaxlib", "torch", "torch_xla") if name in sys.modules))
    """
    assert run_python(code).stdout.strip() == "[]"


def test_library_is_shipped_next_to_the_module():
    path = kiln_pjrt.library_path()
    assert os.path.isabs(path) and os.path.isfile(path), path
    assert os.path.dirname(path) == os.path.dirname(os.path.abspath(kiln_pjrt.__file__))
    assert os.path.basename(path) == "pjrt_plugin_kiln.so"


def test_library_path_override(monkeypatch, tmp_path):
    monkeypatch.setenv("KILN_LIBRARY_PATH", str(tmp_path / "custom.so"))
    assert kiln_pjrt.library_path() == str(tmp_path / "custom.so")


def test_entry_points_are_registered():
    jax_plugins = importlib.metadata.entry_points(group="jax_plugins")
    assert [ep.value for ep in jax_plugins if ep.name == "kiln"] == ["kiln_pjrt"]
    torch_plugins = importlib.metadata.entry_points(group="torch_xla.plugins")
    (entry,) = [ep for ep in torch_plugins if ep.name == "kiln"]
    assert entry.load() is torch_plugin.KilnPlugin


def test_torch_plugin(monkeypatch):
    plugin = torch_plugin.KilnPlugin()
    assert plugin.library_path() == kiln_pjrt.library_path()
    plugin.configure_single_process()
    monkeypatch.delenv("KILN_NUM_DEVICES", raising=False)
    assert plugin.physical_chip_count() == 1
    monkeypatch.setenv("KILN_NUM_DEVICES", "4")
    assert plugin.physical_chip_count() == 4
    assert plugin.client_create_options() == {"num_devices": 4}
    monkeypatch.setenv("KILN_NUM_DEVICES", "zero")
    with pytest.raises(ValueError, match="KILN_NUM_DEVICES"):
        plugin.physical_chip_count()


def test_capi_version():
    major, minor = _capi.api_version()
    assert major == 0 and minor >= 29, (major, minor)


def test_module_reports_library_path(run_python):
    result = run_python("", args=("-m", "kiln_pjrt", "--library-path"))
    assert result.stdout == kiln_pjrt.library_path() + "\n"


def test_module_report(run_python):
    result = run_python("", args=("-m", "kiln_pjrt"), env={"KILN_NUM_DEVICES": "2"})
    out = result.stdout
    assert f"kiln-pjrt {kiln_pjrt.__version__}" in out
    assert kiln_pjrt.library_path() in out
    assert re.search(r"PJRT C API: 0\.\d+", out), out
    assert "devices: 2" in out
    assert out.count("platform=kiln kind=") == 2, out
    if (os.environ.get("KILN_BACKEND") or "host") == "host":
        assert out.count("platform=kiln kind=kiln-cpu") == 2, out


def kiln_command(*args: str, env=None) -> subprocess.CompletedProcess:
    script = os.path.join(os.path.dirname(sys.executable), "kiln")
    assert os.path.isfile(script), f"console script {script} is not installed"
    return subprocess.run([script, *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})})


def test_console_script():
    version = kiln_command("--version")
    assert version.returncode == 0 and version.stdout.strip() == f"kiln {kiln_pjrt.__version__}"
    devices = kiln_command("devices", env={"KILN_NUM_DEVICES": "3"})
    assert devices.returncode == 0, devices.stderr
    lines = devices.stdout.strip().splitlines()
    assert len(lines) == 3 and all("platform=kiln" in line for line in lines), lines


@pytest.mark.skipif(shutil.which("nm") is None, reason="needs nm (binutils)")
def test_library_exports_only_get_pjrt_api_and_kilns_registrations():
    listing = subprocess.run(["nm", "-D", "--defined-only", kiln_pjrt.library_path()],
                             capture_output=True, text=True, check=True).stdout
    # Type "A" entries are version-script node names, not symbols.
    # Names may carry a symbol version ("GetPjrtApi@@KILN_1").
    exported = [fields[-1].split("@")[0] for fields in map(str.split, listing.splitlines())
                if len(fields) == 3 and fields[1] != "A"]
    # KilnRegisterHostFunction: the functions the host lends (SciPy's LAPACK).
    # KilnXlaFfiApi, KilnRegisterCustomCallTarget, XlaCustomCallStatusSet*:
    # jax.ffi registrations and legacy custom calls' status (docs/ffi.md).
    assert sorted(exported) == ["GetPjrtApi", "KilnRegisterCustomCallTarget",
                                "KilnRegisterHostFunction", "KilnXlaFfiApi",
                                "XlaCustomCallStatusSetFailure",
                                "XlaCustomCallStatusSetSuccess"], listing
