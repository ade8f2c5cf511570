"""Shared setup of splice's Python tests: the package under test (the build's python/ folder
on PYTHONPATH, as scripts/test sets it, or an installed wheel) and the conformance cases."""

import os
import shutil
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CASES = os.path.join(ROOT, "tests", "cases")


@pytest.fixture
def scratch():
    """A folder this test made (mkdtemp) and removes, and nothing else."""
    path = tempfile.mkdtemp(prefix="splice-pytest-")
    yield path
    assert os.path.basename(path).startswith("splice-pytest-")
    shutil.rmtree(path)


def case_dir(name):
    return os.path.join(CASES, name)
