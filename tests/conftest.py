"""Test configuration: ``slow`` tests run only with ``--runslow``; ``gpu`` tests only with CUDA.

A slow test may give its own skip reason: ``@pytest.mark.slow(reason="...")``.  Hypothesis runs the profile
``fast`` (few, derandomised examples: ``make test`` stays quick and repeatable) and, under ``--runslow``, ``slow``
(many random examples); a test's own ``@settings(max_examples=...)`` still wins."""

import pytest
import torch
from hypothesis import HealthCheck, settings

settings.register_profile("fast", max_examples=30, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("slow", max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("fast")


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False, help="also run tests marked slow")


def pytest_configure(config):
    settings.load_profile("slow" if config.getoption("--runslow") else "fast")


def pytest_collection_modifyitems(config, items):
    skip_gpu = pytest.mark.skip(reason="needs a CUDA device")
    for item in items:
        slow = item.get_closest_marker("slow")
        if slow is not None and not config.getoption("--runslow"):
            why = slow.kwargs.get("reason", "slow statistical test")
            item.add_marker(pytest.mark.skip(reason=f"{why}; run with --runslow (make test-slow)"))
        if "gpu" in item.keywords and not torch.cuda.is_available():
            item.add_marker(skip_gpu)
