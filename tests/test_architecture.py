"""The floors of docs/architecture.md hold: no import of ``src/memlane/`` runs up a floor, no import
circle (lazy imports count), every folder is on a floor. The checker (tests/support/import_graph.py)
is proven on small packages written here, one rule broken in each."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from support.import_graph import circles, read_floors, read_graph, unplaced, upward

ROOT = Path(__file__).resolve().parents[1]
FLOORS = read_floors((ROOT / "docs" / "architecture.md").read_text(encoding="utf-8"))


def test_the_floors_table_is_read():
    assert [f.name for f in FLOORS] == ["base", "ports", "pipelines", "facade", "hosting", "faces"]
    assert [f.number for f in FLOORS] == list(range(len(FLOORS)))
    members = [m for f in FLOORS for m in f.members]
    assert len(members) == len(set(members)), "a folder is listed on two floors"


@pytest.fixture(scope="module")
def memlane_graph():
    return read_graph(ROOT / "src", "memlane")


def test_every_folder_is_on_a_floor(memlane_graph):
    assert unplaced(memlane_graph, FLOORS) == [], "add it to the floors table of docs/architecture.md"


def test_no_import_runs_up_a_floor(memlane_graph):
    assert upward(memlane_graph, FLOORS) == []


def test_no_import_circle(memlane_graph):
    assert circles(memlane_graph.edges) == []


# -- the checker itself, on small packages --------------------------------------------------------

TOY_FLOORS = read_floors("""
| 0 | base | `core/` | |
| 1 | ports | `store/`, `extra.py` | |
| 2 | facade | `facade.py`, `__init__.py` | |
""")


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    base = {"toy/__init__.py": "", "toy/core/__init__.py": "", "toy/core/models.py": "",
            "toy/store/__init__.py": "", "toy/store/sql.py": "from toy.core import models\n",
            "toy/facade.py": "from toy.store import sql\n", "toy/extra.py": ""}
    for name, text in {**base, **files}.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return tmp_path


CASES = [
    # (name, files that change the toy package, upward imports found, circles found)
    ("clean", {}, [], []),
    ("up at module level", {"toy/core/models.py": "import toy.store.sql\n"},
     ["toy.core.models (base) imports toy.store.sql (ports), models.py:1"], [["toy.core.models", "toy.store.sql"]]),
    ("up inside a function", {"toy/store/sql.py": "def f():\n    from toy import facade\n"},
     ["toy.store.sql (ports) imports toy.facade (facade), sql.py:2"], [["toy.facade", "toy.store.sql"]]),
    ("up under TYPE_CHECKING", {"toy/core/models.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                                      "    from toy.store.sql import X\n"},
     ["toy.core.models (base) imports toy.store.sql (ports), models.py:3"], [["toy.core.models", "toy.store.sql"]]),
    ("up through a package's __init__", {"toy/core/models.py": "from toy.store import Store\n"},
     ["toy.core.models (base) imports toy.store (ports), models.py:1"], []),
    ("a module and a package's name in one import", {"toy/core/models.py": "from toy.store import Store, sql\n"},
     ["toy.core.models (base) imports toy.store (ports), models.py:1",
      "toy.core.models (base) imports toy.store.sql (ports), models.py:1"], [["toy.core.models", "toy.store.sql"]]),
    ("sideways is allowed", {"toy/store/sql.py": "from toy import extra\n"}, [], []),
    ("a circle on one floor", {"toy/store/a.py": "from toy.store import b\n",
                               "toy/store/b.py": "def f():\n    import toy.store.a\n"},
     [], [["toy.store.a", "toy.store.b"]]),
    ("a relative import", {"toy/core/models.py": "from ..store import sql\n"},
     ["toy.core.models (base) imports toy.store.sql (ports), models.py:1"], [["toy.core.models", "toy.store.sql"]]),
    ("a compatibility alias is no dependency", {"toy/core/models.py": "def __getattr__(name):\n"
                                                                      "    from toy.store.sql import X\n"
                                                                      "    return X\n"}, [], []),
    ("a class's __getattr__ is code like any other", {"toy/core/models.py": "class A:\n"
                                                                            "    def __getattr__(self, name):\n"
                                                                            "        from toy import facade\n"},
     ["toy.core.models (base) imports toy.facade (facade), models.py:3"],
     [["toy.core.models", "toy.facade", "toy.store.sql"]]),
]


@pytest.mark.parametrize("name, files, found_upward, found_circles", CASES, ids=[c[0] for c in CASES])
def test_the_checker(tmp_path, name, files, found_upward, found_circles):
    graph = read_graph(_package(tmp_path, files), "toy")
    assert upward(graph, TOY_FLOORS) == found_upward
    assert circles(graph.edges) == found_circles


def test_a_folder_on_no_floor_is_named(tmp_path):
    graph = read_graph(_package(tmp_path, {"toy/newfolder/__init__.py": "", "toy/loose.py": ""}), "toy")
    assert unplaced(graph, TOY_FLOORS) == ["loose", "newfolder"]
