"""Plugins (theorylab.plugins, theorylab.scaffold): a plugin written by `theorylab new` in a folder outside the
repository passes its own tests and is validated through `--plugin` (serially and on dask workers) and through its
entry point once pip-installed; names are namespaced, a clash names both owners, a bad plugin or NAME is a clear
error, and an edit of the plugin changes the cache key of its runs (and of no built-in run)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from theorylab import plugins, registry
from theorylab.app.cli import main
from theorylab.config import RunConfig
from theorylab.scaffold import create

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
BUILT_IN_RUN = RunConfig(problem={"name": "scalar_quadratic", "centers": [0.0, 1.0]},
                         participation={"name": "bernoulli", "p": [0.9, 0.1]}, algorithm={"name": "fedavg"}, rounds=3)


def theorylab(*args, cwd, env=None):
    """Run the installed command in ``cwd`` (outside the repository); returns the completed process."""
    return subprocess.run([str(BIN / "theorylab"), *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=300)


@pytest.fixture(scope="module")
def plugin(tmp_path_factory) -> Path:
    """`theorylab new mylemma` in a temporary folder outside the repository."""
    where = tmp_path_factory.mktemp("plugins")
    assert ROOT not in where.parents
    done = theorylab("new", "mylemma", "--dir", where, cwd=where)
    assert done.returncode == 0, done.stderr
    return where / "mylemma"


@pytest.fixture
def isolated(tmp_path):
    """Registry, loaded plugins and the modules imported from ``tmp_path`` as they were before the test."""
    registry.load_all()
    saved = {kind: dict(table) for kind, table in registry._REGISTRY.items()}
    loaded, given = dict(plugins._LOADED), list(plugins._GIVEN)
    yield tmp_path
    for kind, table in registry._REGISTRY.items():
        table.clear()
        table.update(saved[kind])
    plugins._LOADED.clear()
    plugins._LOADED.update(loaded)
    plugins._GIVEN[:] = given
    for name, module in list(sys.modules.items()):
        if str(getattr(module, "__file__", None) or "").startswith(str(tmp_path)):
            del sys.modules[name]


def write_plugin(parent: Path, name: str, body: str) -> Path:
    folder = parent / name
    folder.mkdir()
    (folder / "__init__.py").write_text(body)
    return folder


def test_new_writes_the_scaffold_and_its_tests_pass(plugin):
    assert {p.name for p in plugin.iterdir()} >= {"__init__.py", "lemma.md", "kernel.py", "claims.py", "figure.py",
                                                   "tests", "pyproject.toml", "README.md"}
    assert (plugin / "tests" / "test_mylemma.py").is_file()
    assert "{{" not in "".join(p.read_text() for p in plugin.rglob("*.py"))
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(plugin / "tests")],
                          cwd=plugin.parent, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "4 passed" in done.stdout


@pytest.fixture(scope="module")
def serial(plugin, tmp_path_factory) -> dict:
    """`theorylab validate mylemma --plugin DIR --quick --format json`, run once, from outside the repository."""
    where = tmp_path_factory.mktemp("serial")
    done = theorylab("validate", "mylemma", "--plugin", plugin, "--quick", "--format", "json", "--out", where / "out",
                     cwd=where)
    assert done.returncode == 0, done.stderr
    (result,) = json.loads(done.stdout)
    provenance = json.loads((where / "out" / "provenance.json").read_text())
    assert provenance["plugins"]["mylemma"]["origin"] == str(plugin.resolve())
    return result


def test_validate_list_and_figure_with_plugin(plugin, serial, tmp_path):
    assert (serial["id"], serial["kind"], serial["verdict"], serial["basis"]) == (
        "mylemma.contraction", "statement", "holds", "closed_form")
    assert serial["quote"] == "|x_{t+1} - x*| = |1 - eta L| |x_t - x*|"
    assert [c["theory"] for c in serial["checks"]] == pytest.approx([0.7, 0.4, 0.5, 1.25])
    listed = theorylab("list", "--plugin", plugin, cwd=tmp_path)
    assert "mylemma.contraction" in listed.stdout and "mylemma.gd" in listed.stdout
    assert "[plugin mylemma]" in listed.stdout
    figure = theorylab("figure", "mylemma.contraction", "--plugin", plugin, "--quick", "--out", tmp_path / "gallery",
                       cwd=tmp_path)
    assert figure.returncode == 0, figure.stderr
    assert (tmp_path / "gallery" / "mylemma.contraction.png").is_file()


def test_validate_with_plugin_on_dask_workers_equals_serial(plugin, serial, tmp_path):
    """The workers load the client's --plugin folders (theorylab.plugins.given) before they look the claim up."""
    parallel = theorylab("validate", "mylemma.contraction", "--plugin", plugin, "--quick", "--format", "json",
                         "--workers", "2", "--out", tmp_path / "parallel", cwd=tmp_path)
    assert parallel.returncode == 0, parallel.stderr
    (twin,) = json.loads(parallel.stdout)
    assert {k: twin[k] for k in ("verdict", "measured", "theory", "checks")} == {
        k: serial[k] for k in ("verdict", "measured", "theory", "checks")}


def test_train_runs_a_plugin_kernel(plugin, tmp_path):
    done = theorylab("train", "--plugin", plugin, "--algorithm", "mylemma.gd", "--testbed", "digits", "--model",
                     "logistic", "--clients", "3", "--rounds", "2", "--every", "1", "--window", "1", "--batch-size", "4",
                     "--local-steps", "2", "--testbed-options", '{"train_size": 120, "eval_train": 30, "eval_test": 30}',
                     "--out", tmp_path / "out", "--no-cache", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "mylemma.gd" in done.stdout and list((tmp_path / "out" / "figures").glob("train-*mylemma.gd*.png"))


def test_an_edit_of_the_plugin_changes_its_runs_cache_key_only(plugin, tmp_path):
    copy = shutil.copytree(plugin, tmp_path / "mylemma")
    probe = ("import sys; from theorylab.plugins import load_path; load_path(sys.argv[1]); "
             "from mylemma.figure import config; from theorylab.config import RunConfig; "
             f"print(config(0.2).key(), RunConfig(**{BUILT_IN_RUN.as_dict()!r}).key())")

    def keys():
        done = subprocess.run([sys.executable, "-c", probe, str(copy)], cwd=tmp_path, capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout.split()

    before = keys()
    kernel = copy / "kernel.py"
    kernel.write_text(kernel.read_text() + "\n# an edit\n")
    after = keys()
    assert before[0] != after[0]  # the plugin's run
    assert before[1] == after[1] == BUILT_IN_RUN.key()  # a built-in run: the key it has without plugins


def test_plugin_in_process_namespaced_names_and_key(plugin, isolated):
    without = BUILT_IN_RUN.key()
    loaded = plugins.load_given([shutil.copytree(plugin, isolated / "mylemma")])[0]
    assert loaded.namespace == "mylemma" and plugins.given() == (str(isolated / "mylemma"),)
    assert loaded.registered == {"algorithm": ["mylemma.gd"], "claim": ["mylemma.contraction"],
                                 "figure": ["mylemma.contraction"], "paper": ["mylemma"]}
    assert registry.lookup("claim", "mylemma.contraction").owner == "mylemma"
    assert plugins.load(isolated / "mylemma") is loaded  # loading twice is loading once
    from mylemma.figure import config

    assert plugins.fingerprints_in(config(0.2).as_dict()) == {"mylemma": loaded.fingerprint}
    assert BUILT_IN_RUN.key() == without


def test_a_clash_with_a_built_in_names_both(isolated):
    clash = write_plugin(isolated, "fedawe", "from theorylab.registry import register\n\n"
                         "@register('algorithm', 'fedawe')\ndef mine():\n    '''Not FedAWE.'''\n")
    with pytest.raises(ValueError) as err:
        plugins.load_path(clash)
    message = str(err.value)
    assert "plugin 'fedawe'" in message and "the built-in algorithm 'fedawe' (module theorylab.kernels.fedawe)" in message
    assert registry.lookup("algorithm", "fedawe").owner == registry.BUILT_IN
    assert "fedawe" not in plugins.loaded() and "fedawe" not in sys.modules


def test_two_plugins_cannot_share_a_namespace(isolated):
    body = "from theorylab.registry import register\n\nregister('algorithm', 'twin.gd')(lambda: None)\n"
    plugins.load_path(write_plugin(isolated, "twin", body))
    other = isolated / "elsewhere"
    other.mkdir()
    with pytest.raises(ValueError, match="two plugins cannot share a namespace"):
        plugins.load_path(write_plugin(other, "twin", body))


def test_a_name_outside_the_namespace_is_refused(isolated):
    folder = write_plugin(isolated, "badns", "from theorylab.registry import register\n\n"
                          "register('algorithm', 'gd')(lambda: None)\n")
    with pytest.raises(ValueError, match=r"plugin 'badns' .* registers algorithm 'gd': a plugin's names must be its "
                                         r"namespace or start with it, e\.g\. 'badns\.gd'"):
        plugins.load_path(folder)
    assert "gd" not in registry.entries("algorithm") and "badns" not in sys.modules


def test_bad_plugins_are_clear_errors(isolated, capsys):
    with pytest.raises(ValueError, match="registers nothing"):
        plugins.load_path(write_plugin(isolated, "empty", '"""Nothing here."""\n'))
    (isolated / "loose").mkdir()
    with pytest.raises(ValueError, match="holds no __init__.py"):
        plugins.load_path(isolated / "loose")
    with pytest.raises(ValueError, match="does not exist"):
        plugins.load_path(isolated / "absent")
    with pytest.raises(ValueError, match="neither a path that exists nor an importable module"):
        plugins.load("no_such_module_here")
    with pytest.raises(ValueError, match="Python identifier"):
        plugins.load_path(write_plugin(isolated, "bad-name", ""))
    assert main(["list", "claim", "--plugin", str(isolated / "absent")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_new_refuses_bad_names_and_existing_folders(tmp_path, capsys):
    for name, why in [("1bad", "Python identifier"), ("class", "Python identifier"), ("figures", "theorylab's own"),
                      ("fedawe", "is taken"), ("numpy", "importable module")]:
        with pytest.raises(ValueError, match=why):
            create(name, tmp_path)
    (tmp_path / "mine").mkdir()
    with pytest.raises(ValueError, match="never overwrites"):
        create("mine", tmp_path)
    assert main(["new", "2x", "--dir", str(tmp_path)]) == 2
    assert "Python identifier" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine"]  # nothing half-written


def test_installed_plugin_is_found_through_its_entry_point(plugin, tmp_path):
    source = shutil.copytree(plugin, tmp_path / "src" / "mylemma")  # building writes build/ and egg-info there
    target = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                           "--target", str(target), str(source)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(target), os.environ.get("PYTHONPATH")]))}
    listed = theorylab("list", "claim", cwd=tmp_path, env=env)
    assert listed.returncode == 0, listed.stderr
    assert "mylemma.contraction" in listed.stdout and "[plugin mylemma]" in listed.stdout
    validated = theorylab("validate", "mylemma", "--quick", "--format", "json", "--out", tmp_path / "out", cwd=tmp_path,
                          env=env)
    assert validated.returncode == 0, validated.stderr
    assert [r["verdict"] for r in json.loads(validated.stdout)] == ["holds"]
    clash = theorylab("list", "--plugin", plugin, cwd=tmp_path, env=env)  # the same namespace twice
    assert clash.returncode == 2 and "two plugins cannot share a namespace" in clash.stderr
