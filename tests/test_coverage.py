"""The coverage table (theorylab.coverage, `theorylab coverage`): every check id a claim cites is in its work's
catalogue, the statuses follow their definitions, the totals add up, and the command prints the table.

The catalogues list the checks of the digests in shared/spec/ (000 §8, 001 ch1-3 §8 and ch4-6 §6, 002 §5, 003 §8,
004 §5.2); a claim that cites an id they lack, or an n/a check, makes the test of the real registry fail, so the
table cannot drift from the claims."""

import json
from types import SimpleNamespace

import pytest

from theorylab import coverage, registry
from theorylab.app.cli import main
from theorylab.claims import Evidence, claim
from theorylab.sources import papers, register_paper

CATALOGUE = {
    "digest": "toy.md §8",
    "checks": [{"id": "V1", "title": "one"}, {"id": "V2", "title": "two", "why": "runs on a stand-in only"},
               {"id": "V3", "title": "three"},
               {"id": "V4", "title": "four", "status": "n/a", "why": "no experiment in the paper"}],
    "algorithms": [{"name": "FedAvg", "kernel": "fedavg", "spec": {"aggregation": "all"}},
                   {"name": "Special", "module": "theorylab.coverage"}, {"name": "Lost", "why": "no definition"}],
    "figures": [{"name": "Fig. 1", "what": "a sketch", "status": "n/a", "why": "no data"},
                {"name": "Fig. 2", "what": "curves", "recipes": ["toy-fig2"], "claims": ["toy.a"]},
                {"name": "Fig. 3", "what": "images", "claims": ["toy.b"], "stand_in": {"dataset": "digits"}},
                {"name": "Table 1", "what": "numbers", "why": "not attempted"}],
}
RECIPES = {"toy-fig2": "Toy Fig. 2: curves.", "toy-extra": "A figure of ours.", "other-fig": "Not this work's."}
KERNELS = {"fedavg": "FedAvg family."}


def fake(checks=(), partial=()):
    return SimpleNamespace(checks=tuple(checks), partial=tuple(partial))


def toy(claims, catalogue=None, recipes=None, spec_error=None):
    return coverage.cover("toy", CATALOGUE if catalogue is None else catalogue, claims,
                          RECIPES if recipes is None else recipes, KERNELS, spec_error, digests=("toy.md",))


@pytest.fixture
def isolated():
    """The registry as it was before the test (claims and papers registered inside it are forgotten)."""
    registry.load_all()
    saved = {kind: dict(table) for kind, table in registry._REGISTRY.items()}
    yield
    for kind, table in registry._REGISTRY.items():
        table.clear()
        table.update(saved[kind])


def test_statuses_follow_their_definitions():
    cov = toy({"toy.a": fake(["V1"], ["V2"]), "toy.b": fake(partial=["V2"]), "toy.c": fake(),
               "other.x": fake(["V3"])})  # another work's claim counts for nothing here
    assert cov.problems == []
    status = {row.id: row.status for row in cov.checks}
    assert status == {"V1": "covered", "V2": "partial", "V3": "missing", "V4": "n/a"}
    v2 = next(row for row in cov.checks if row.id == "V2")
    assert v2.claims == () and v2.partial == ("toy.a", "toy.b")
    assert [f.status for f in cov.figures] == ["n/a", "faithful", "stand-in", "missing"]
    assert [a.status for a in cov.algorithms] == ["kernel", "module", "none"]
    assert cov.uncited == ["toy.c"] and cov.n_claims == 3
    assert cov.own_recipes == ["toy-extra"]  # named after the work, drawing no catalogued figure


def test_a_partly_tested_check_must_say_why():
    bare = {"digest": "toy.md §8", "checks": [{"id": "V2", "title": "two"}]}
    cov = toy({"toy.a": fake(partial=["V2"])}, catalogue=bare)
    assert len(cov.problems) == 1 and "check V2 of toy is only partly tested" in cov.problems[0]
    cov = toy({"toy.a": fake(["V2"])}, catalogue=bare)  # covered: nothing to explain
    assert cov.problems == []


def test_a_claim_citing_a_check_the_catalogue_lacks_is_a_problem():
    cov = toy({"toy.a": fake(["V1", "V9"]), "toy.b": fake(partial=["7"])})
    assert len(cov.problems) == 2
    assert "toy.a cites check 'V9'" in cov.problems[0] and "toy.b cites check '7'" in cov.problems[1]


def test_citing_an_na_check_and_other_inconsistencies_are_problems():
    cov = toy({"toy.a": fake(["V4"])})
    assert any("V4 of toy is catalogued n/a but cited by toy.a" in p for p in cov.problems)
    catalogue = {**CATALOGUE, "checks": [{"id": "V1", "title": "one", "digest": "elsewhere.md §2"}],
                 "algorithms": [{"name": "Ghost", "kernel": "nope"}, {"name": "Bad", "kernel": "fedavg"},
                                {"name": "Gone", "module": "theorylab.no_such_module"}],
                 "figures": [{"name": "Fig. 9", "recipes": ["toy-missing", "toy-fig2"], "claims": ["toy.zzz"]}]}
    stand_in = {**RECIPES, "toy-fig2": "Toy Fig. 2 analogue on a quadratic."}
    problems = toy({}, catalogue, stand_in, spec_error=lambda kernel, spec: "refused").problems
    for expected in ("digest 'elsewhere.md §2' is not one the work declares", "no kernel 'nope'",
                     "kernel 'fedavg' refuses", "no module 'theorylab.no_such_module'", "no recipe 'toy-missing'",
                     "no claim 'toy.zzz'", "listed as faithful, but recipe 'toy-fig2' says"):
        assert any(expected in p for p in problems), (expected, problems)


def test_a_malformed_catalogue_is_named(tmp_path):
    assert coverage.shape_problems([]) == ["a catalogue is a JSON object"]
    twice = {"checks": [{"id": "V1", "title": "a"}, {"id": "V1", "title": "b", "colour": "red"}]}
    faults = coverage.shape_problems(twice)
    assert any("listed twice" in f for f in faults) and any("unknown keys ['colour']" in f for f in faults)
    assert any("needs `why`" in f for f in coverage.shape_problems({"checks": [{"id": "V1", "title": "a",
                                                                                   "status": "n/a"}]}))
    path = tmp_path / "catalogue.json"
    path.write_text(json.dumps(twice))
    with pytest.raises(ValueError, match="catalogue .*catalogue.json: .*check id 'V1' is listed twice"):
        coverage.load(path)
    path.write_text("{not json")
    with pytest.raises(ValueError, match="catalogue .*catalogue.json"):
        coverage.load(path)


def test_the_claim_decorator_takes_tuples_of_ids():
    with pytest.raises(ValueError, match="checks must be a tuple of check ids"):
        claim("toy.s", "src", "st", kind="digest", checks="V1")
    with pytest.raises(ValueError, match="cited both in checks and in partial"):
        claim("toy.s", "src", "st", kind="digest", checks=("V1",), partial=("V1",))


def test_every_cited_check_is_in_its_works_catalogue():
    """The real registry: no claim cites an id its catalogue lacks, every recipe, claim and kernel named exists,
    every kernel accepts its spec, and no recipe that calls itself a stand-in is listed as faithful."""
    found = coverage.collect()
    assert {c.paper for c in found} >= {"afga", "fedawe", "masfl", "performative", "thesis"}
    assert {c.paper: c.problems for c in found if c.problems} == {}
    for work in found:  # every claim citing a check belongs to a work with a catalogue
        assert all(row.status in coverage.CHECK_STATUSES for row in work.checks)
    works = {name for name, p in papers().items() if p.catalogue is not None}
    citing = {c.paper for c in (e.obj for e in registry.entries("claim").values()) if c.checks or c.partial}
    assert citing <= works


def test_totals_add_up():
    found = coverage.collect()
    for work in found:
        t = work.totals()
        catalogue = coverage.load(papers()[work.paper].catalogue)
        assert t["checks"]["total"] == len(catalogue["checks"]) == sum(t["checks"][s] for s in coverage.CHECK_STATUSES)
        assert t["algorithms"]["total"] == len(catalogue["algorithms"]) == sum(
            t["algorithms"][s] for s in coverage.ALGORITHM_STATUSES)
        assert t["figures"]["total"] == len(catalogue["figures"]) == sum(
            t["figures"][s] for s in coverage.FIGURE_STATUSES)
    total = coverage.grand_total(found)
    assert total["checks"]["total"] == sum(w.totals()["checks"]["total"] for w in found)
    assert total["checks"]["covered"] == sum(w.totals()["checks"]["covered"] for w in found)


def test_performative_v19_is_not_applicable_and_says_why():
    (work,) = coverage.collect(["performative"])
    v19 = next(row for row in work.checks if row.id == "V19")
    assert v19.status == "n/a" and "no CNN experiment" in v19.why


def test_a_registered_claim_citing_an_unknown_check_fails_the_table(isolated):
    @claim("fedawe.toy_unknown_check", "test", "a claim citing a check digest 000 does not number", kind="digest",
           checks=("99",))
    def toy_claim(ctx):
        return Evidence([])

    (work,) = coverage.collect(["fedawe"])
    assert any("fedawe.toy_unknown_check cites check '99'" in p for p in work.problems)
    assert main(["coverage", "fedawe"]) == 1


def test_a_work_without_a_catalogue(isolated, tmp_path):
    with pytest.raises(ValueError, match="its catalogue .* is not a file"):
        register_paper("toy", "", "Toy", catalogue=tmp_path / "absent.json")
    register_paper("toy", "", "Toy")
    assert "toy" not in {c.paper for c in coverage.collect()}
    with pytest.raises(ValueError, match="has no catalogue"):
        coverage.collect(["toy"])
    with pytest.raises(ValueError, match="no source work"):
        coverage.collect(["nowhere"])


def test_the_command_prints_the_table(capsys):
    assert main(["coverage"]) == 0
    out = capsys.readouterr().out
    assert "| work | checks | covered | partial | missing | n/a |" in out
    for paper in ("afga", "fedawe", "masfl", "performative", "thesis", "**all**"):
        assert f"| {paper} |" in out
    assert "| V19 | " in out and "| n/a | the paper has no CNN experiment" in out
    assert main(["coverage", "masfl", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [w["paper"] for w in data["works"]] == ["masfl"]
    assert data["totals"]["checks"]["total"] == len(data["works"][0]["checks"])
    assert main(["coverage", "nowhere"]) == 2
    assert "no source work" in capsys.readouterr().err
