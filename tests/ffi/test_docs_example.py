"""docs/ffi.md's complete example, run as the page gives it: its C++ handler
compiled against `jax.ffi.include_dir()`, its script run with
JAX_PLATFORMS=kiln,cpu in the folder holding the library."""

import os
import re
import shutil
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _blocks(language):
    with open(os.path.join(REPO, "docs", "ffi.md")) as page:
        text = page.read()
    return re.findall(rf"```{language}\n(.*?)```", text, re.S)


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_the_complete_example_runs_on_kiln_and_cpu(tmp_path):
    import jax.ffi

    (tmp_path / "rms_norm.cc").write_text(_blocks("cpp")[0])
    (tmp_path / "run.py").write_text(_blocks("python")[0])
    build = subprocess.run(["g++", "-std=c++17", "-O2", "-shared", "-fPIC",
                            f"-I{jax.ffi.include_dir()}", "rms_norm.cc", "-o", "librms_norm.so"],
                           cwd=tmp_path, capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    env = dict(os.environ, JAX_PLATFORMS="kiln,cpu")
    done = subprocess.run([sys.executable, "run.py"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
    assert "kiln and cpu agree" in done.stdout
