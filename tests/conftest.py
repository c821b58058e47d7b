"""Test configuration: ``slow`` tests run only with ``--runslow``; ``gpu`` tests only with CUDA.

A slow test may give its own skip reason: ``@pytest.mark.slow(reason="...")``."""

import pytest
import torch


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False, help="also run tests marked slow")


def pytest_collection_modifyitems(config, items):
    skip_gpu = pytest.mark.skip(reason="needs a CUDA device")
    for item in items:
        slow = item.get_closest_marker("slow")
        if slow is not None and not config.getoption("--runslow"):
            why = slow.kwargs.get("reason", "slow statistical test")
            item.add_marker(pytest.mark.skip(reason=f"{why}; run with --runslow (make test-slow)"))
        if "gpu" in item.keywords and not torch.cuda.is_available():
            item.add_marker(skip_gpu)
