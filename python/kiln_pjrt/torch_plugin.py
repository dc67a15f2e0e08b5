"""Kiln as a PyTorch/XLA device plugin: select it with `PJRT_DEVICE=KILN`.

PyTorch/XLA loads `KilnPlugin` through the `torch_xla.plugins` entry point.
This module imports without torch_xla installed, so loading the entry point
never fails; the plugin is only usable once torch_xla is present.
"""

import os

from kiln_pjrt import library_path as _library_path

try:
    from torch_xla.experimental.plugins import DevicePlugin as _DevicePlugin
except ImportError:

    class _DevicePlugin:
        """Stands in for torch_xla's DevicePlugin when torch_xla is absent."""

        def configure_multiprocess(self, local_rank: int, local_world_size: int) -> None:
            raise NotImplementedError("Kiln runs in a single process")

        def requires_xla_coordinator(self) -> bool:
            return False


def _num_devices() -> int:
    text = os.environ.get("KILN_NUM_DEVICES") or "1"
    try:
        count = int(text)
    except ValueError:
        count = 0
    if count < 1:
        raise ValueError(f"KILN_NUM_DEVICES: expected a positive integer, found {text!r}")
    return count


class KilnPlugin(_DevicePlugin):
    """Points PyTorch/XLA at Kiln's PJRT library."""

    def library_path(self) -> str:
        return _library_path()

    def configure_single_process(self) -> None:
        # Kiln needs no per-process setup: the device count comes from
        # KILN_NUM_DEVICES or the create options below.
        pass

    def physical_chip_count(self) -> int:
        return _num_devices()

    def client_create_options(self) -> dict:
        return {"num_devices": _num_devices()}
