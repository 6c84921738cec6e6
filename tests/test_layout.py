"""The harness's module list is kept in two places a reader looks (README.md's Layout table and compare/__init__.py);
both must name exactly the modules of compare/, so neither goes stale when a module is added or renamed."""
import re
from pathlib import Path

import compare

REPO = Path(__file__).resolve().parent.parent


def _modules_in_folder() -> set[str]:
    return {p.stem for p in (REPO / "compare").glob("*.py") if not p.stem.startswith("_")}


def test_the_readme_layout_names_every_module_of_the_harness():
    row = next(line for line in (REPO / "README.md").read_text().splitlines() if line.startswith("| `compare/` |"))
    assert set(re.findall(r"`(\w+)`", row.split("|")[2])) == _modules_in_folder()


def test_the_package_docstring_names_every_module_of_the_harness():
    listed = compare.__doc__.split("Modules, one job each", 1)[1].split("):", 1)[1]
    named = set(re.findall(r"(?:^|, |\n)\s*(\w+)\s+\(", listed))
    assert named == _modules_in_folder()
