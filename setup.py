"""Build step only: a wheel carries the bundled example data (manifests/, sources/, examples/)
inside the package as ctxcli/_bundled, so `ctx init --example claims` works after a plain
`pip install`. An editable install reads the same files from the repository instead
(ctxcli/bundled.py). Everything else is in pyproject.toml."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
BUNDLED = ("manifests", "sources", "examples")


class BuildWithExamples(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        dest = Path(self.build_lib) / "ctxcli" / "_bundled"
        if dest.exists():
            shutil.rmtree(dest)
        for name in BUNDLED:
            shutil.copytree(HERE / name, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


setup(cmdclass={"build_py": BuildWithExamples})
