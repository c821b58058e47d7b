"""The project's layering, read from the source: engine <- testbeds <- figures <- validations <- app.

Every ``import`` and ``from ... import`` statement is parsed (also those inside functions), so a lazy import
cannot slip past.  The layers are the engine ``theorylab``, its siblings ``theorylab.testbeds``,
``theorylab.figures`` and ``theorylab.validations`` (top-level folders of the checkout, theorylab/siblings.py) and
the assembling layer ``theorylab.app`` (the command line), which alone may import all the others.  The siblings
are imported by their full names only: a bare ``import figures`` would meet a user's own ``figures`` package.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("theorylab", "testbeds", "figures", "validations", "app")  # each may import only the ones before it
SUB_LAYERS = LAYERS[1:]  # theorylab.<name>
FOLDERS = {"theorylab": ROOT / "theorylab", "app": ROOT / "theorylab" / "app",
           **{name: ROOT / name for name in ("testbeds", "figures", "validations")}}
ENTRY_POINT = ROOT / "theorylab" / "__main__.py"  # `python -m theorylab`: the command line, so the app layer
MAX_CLAIM_MODULE_LINES = 400


def layer_of(module: str) -> str:
    """The layer of a dotted module name: ``theorylab.<sibling or app>...`` is that layer, other ``theorylab``
    names the engine, anything else its own top-level name (numpy, or a bare sibling name: an offence)."""
    parts = module.split(".")
    if parts[0] == "theorylab":
        return parts[1] if len(parts) > 1 and parts[1] in SUB_LAYERS else "theorylab"
    return parts[0]


def layer_of_path(path: Path, folders=None) -> str:
    folders = folders or FOLDERS
    if path == ENTRY_POINT:
        return "app"
    inside = [name for name, folder in folders.items() if path.is_relative_to(folder)]
    return max(inside, key=lambda name: len(folders[name].parts))  # app lies inside theorylab/


def imported_layers(path: Path, folders=None) -> set[str]:
    """Layers (or top-level packages) that the module at ``path`` imports (relative imports resolve to its own)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names |= {layer_of(alias.name) for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            names.add(layer_of_path(path, folders) if node.level else layer_of(node.module))
    return names


def modules(layer: str) -> list[Path]:
    return sorted({p for folder in FOLDERS.values() for p in folder.rglob("*.py") if layer_of_path(p) == layer})


@pytest.mark.parametrize("layer", LAYERS)
def test_a_layer_imports_only_the_layers_below_it(layer):
    above = set(LAYERS[LAYERS.index(layer) + 1:])
    offenders = {str(path.relative_to(ROOT)): sorted(imported_layers(path) & above) for path in modules(layer)}
    assert {path: names for path, names in offenders.items() if names} == {}


def bare_sibling_imports(path: Path) -> list[str]:
    """Imports of ``testbeds``, ``figures`` or ``validations`` by their top-level name."""
    names = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names.append(node.module)
    return [name for name in names if name.split(".")[0] in SUB_LAYERS]


def test_siblings_are_imported_by_their_full_names():
    bare = {str(path.relative_to(ROOT)): names for layer in LAYERS for path in modules(layer)
            if (names := bare_sibling_imports(path))}
    assert bare == {}


def test_imported_layers_sees_lazy_relative_and_bare_imports(tmp_path):
    folders = {"theorylab": tmp_path / "theorylab", "app": tmp_path / "theorylab" / "app",
               "figures": tmp_path / "figures"}
    module = folders["figures"] / "probe.py"
    module.parent.mkdir()
    module.write_text("import numpy as np\n\ndef f():\n    from theorylab.validations.fedawe import example1\n"
                      "    from . import fedawe_fig2\n    import theorylab.app.cli\n    from theorylab import runner\n"
                      "    import testbeds.quadratic\n")
    assert imported_layers(module, folders) == {"numpy", "validations", "figures", "app", "theorylab", "testbeds"}


def test_validations_hold_one_package_per_paper_with_short_modules():
    loose = [p.name for p in (ROOT / "validations").glob("*.py") if p.name != "__init__.py"]
    assert loose == [], "claims belong in validations/<paper>/<part>.py"
    long = {str(p.relative_to(ROOT)): n for p in modules("validations")
            if (n := len(p.read_text().splitlines())) > MAX_CLAIM_MODULE_LINES}
    assert long == {}
