"""Package layout only (the metadata is in pyproject.toml): the checkout's top-level ``testbeds/``, ``validations/``
and ``figures/`` folders are installed inside the package, as ``theorylab.testbeds`` and so on
(:mod:`theorylab.siblings`)."""

from setuptools import find_packages, setup

SIBLINGS = ("testbeds", "validations", "figures")

packages = find_packages(include=["theorylab", "theorylab.*"])
for sibling in SIBLINGS:
    packages += [f"theorylab.{name}" for name in find_packages(include=[sibling, f"{sibling}.*"])]

setup(packages=packages, package_dir={f"theorylab.{sibling}": sibling for sibling in SIBLINGS})
