"""Safe imports (issue 27, item 2): theorylab's testbeds, validations and figures live under its own namespace, so a
user's folder with packages of those names neither shadows them nor is shadowed by them."""

import shutil
import subprocess
import sys
import zipfile

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]

NOTEBOOK = """
import sys
import figures, testbeds, validations  # the user's own, from the working directory (first on sys.path)
import theorylab
results = theorylab.validate("fedawe.prop1", out="out")
import theorylab.figures, theorylab.validations
assert figures.OWNER == testbeds.OWNER == validations.OWNER == "user", "the user's packages were shadowed"
assert "site-packages" in theorylab.figures.__file__ or theorylab.figures.__file__.startswith(sys.argv[1])
print(results[0].verdict, figures.OWNER, theorylab.figures.__name__)
"""


def test_a_claim_runs_from_a_folder_with_its_own_figures_package(tmp_path):
    # A notebook kernel puts its working directory first on sys.path, as `python -c` does.
    for name in ("figures", "testbeds", "validations"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text('OWNER = "user"\n')
    done = subprocess.run([sys.executable, "-c", NOTEBOOK, str(ROOT)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    verdict, owner, name = done.stdout.split()[-3:]
    assert verdict == "holds" and owner == "user" and name == "theorylab.figures"


def test_the_wheel_installs_everything_inside_the_theorylab_package(tmp_path):
    # Built from a copy: setuptools writes build/ beside the sources it builds.
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    for package in ("theorylab", "testbeds", "validations", "figures"):
        shutil.copytree(ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__"))
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                           "--disable-pip-version-check", "-w", str(tmp_path), str(source)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    (wheel,) = tmp_path.glob("theorylab-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    assert tops == {"theorylab", next(t for t in tops if t.endswith(".dist-info"))}
    for expected in ("theorylab/testbeds/quadratic.py", "theorylab/validations/fedawe/__init__.py",
                     "theorylab/figures/__init__.py", "theorylab/validations/afga/full_costs.json",
                     "theorylab/validations/thesis/catalogue.json",
                     "theorylab/app/cli.py", "theorylab/templates/report.html.j2"):
        assert expected in names
