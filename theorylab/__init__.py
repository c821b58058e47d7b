"""theorylab: federated-learning theorems as runnable, checked claims.

The engine lives here: participation processes (:mod:`theorylab.participation`),
algorithm kernels (:mod:`theorylab.kernels`), exact moment propagation
(:mod:`theorylab.exact`), the runner, the result store, the claims framework and
the CLI (:mod:`theorylab.app`).  Problems with ground truth live in ``theorylab.testbeds``, claims in
``theorylab.validations`` and figure recipes in ``theorylab.figures`` (top-level folders of the checkout,
:mod:`theorylab.siblings`).

From Python or a notebook: ``theorylab.validate(...)``, ``theorylab.run(config)`` and ``theorylab.figure(name)``
(:mod:`theorylab.api`, imported on first use so that ``import theorylab`` stays light).
"""

from theorylab.siblings import install_finder

__version__ = "0.1.0"

install_finder()

_API = ("validate", "run", "figure")


def __getattr__(name: str):
    """``theorylab.validate``, ``theorylab.run`` and ``theorylab.figure`` from :mod:`theorylab.api`, imported on first
    use."""
    if name in _API:
        from theorylab import api

        return getattr(api, name)
    raise AttributeError(f"module 'theorylab' has no attribute {name!r}")
