"""The project's layering, read from the source: engine <- testbeds <- figures <- validations.

Every ``import`` and ``from ... import`` statement is parsed (also those inside functions), so a lazy
import cannot slip past.  The command line (theorylab/cli.py and its train and validate commands,
theorylab/cli_train.py and theorylab/cli_validate.py) assembles everything and is the one exception.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("theorylab", "testbeds", "figures", "validations")  # each may import only the ones before it
ASSEMBLERS = {Path("theorylab/cli.py"), Path("theorylab/cli_train.py"), Path("theorylab/cli_validate.py")}
MAX_CLAIM_MODULE_LINES = 400


def imported_packages(path: Path, root: Path = ROOT) -> set[str]:
    """Top-level package names that the module at ``path`` imports (relative imports resolve to its own)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            names.add(path.relative_to(root).parts[0] if node.level else node.module.split(".")[0])
    return names


def modules(layer: str) -> list[Path]:
    return sorted((ROOT / layer).rglob("*.py"))


@pytest.mark.parametrize("layer", LAYERS)
def test_a_layer_imports_only_the_layers_below_it(layer):
    above = set(LAYERS[LAYERS.index(layer) + 1:])
    offenders = {str(path.relative_to(ROOT)): sorted(imported_packages(path) & above)
                 for path in modules(layer) if path.relative_to(ROOT) not in ASSEMBLERS}
    assert {path: names for path, names in offenders.items() if names} == {}


def test_imported_packages_sees_lazy_and_relative_imports(tmp_path):
    module = tmp_path / "figures" / "probe.py"
    module.parent.mkdir()
    module.write_text("import numpy as np\n\ndef f():\n    from validations.fedawe import example1\n"
                      "    from . import fedawe_fig2\n")
    assert imported_packages(module, tmp_path) == {"numpy", "validations", "figures"}


def test_validations_hold_one_package_per_paper_with_short_modules():
    loose = [p.name for p in (ROOT / "validations").glob("*.py") if p.name != "__init__.py"]
    assert loose == [], "claims belong in validations/<paper>/<part>.py"
    long = {str(p.relative_to(ROOT)): n for p in modules("validations")
            if (n := len(p.read_text().splitlines())) > MAX_CLAIM_MODULE_LINES}
    assert long == {}
