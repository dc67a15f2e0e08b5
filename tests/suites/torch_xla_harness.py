"""pytest plugin loaded into torch_xla's test files when they run on Kiln.

torch_xla's device-type harness (pytorch_test_base.py, which PyTorch's
instantiate_device_type_tests loads with runpy from TORCH_TEST_DEVICES)
asserts that the XLA device's hardware type is one it keeps a list of
disabled tests for, and keeps lists only for TPU and CPU: on any other
plugin ("KILN", and GPU too) test_ops.py and test_python_ops.py fail to
collect with "Unsupported device type". Kiln is a CPU device, so it takes
the CPU's list. Nothing else of the suite is changed.
"""


def _give_kiln_the_cpu_list(table):
    if isinstance(table, dict) and "CPU" in table:
        table.setdefault("KILN", table["CPU"])


def pytest_configure(config):
    # The harness exists twice: the copy PyTorch loads with runpy (its
    # XLATestBase in common_device_type's list of test bases), and the
    # module the test files import by name, whose table is the one the
    # assertion reads when the tests are instantiated. Both get the entry.
    try:
        from torch.testing._internal import common_device_type
        import pytorch_test_base
    except ImportError:
        return
    _give_kiln_the_cpu_list(getattr(pytorch_test_base, "DISABLED_TORCH_TESTS", None))
    for base in getattr(common_device_type, "device_type_test_bases", []):
        method = getattr(base, "instantiate_test", None)
        function = getattr(method, "__func__", method)
        _give_kiln_the_cpu_list(getattr(function, "__globals__", {}).get("DISABLED_TORCH_TESTS"))
