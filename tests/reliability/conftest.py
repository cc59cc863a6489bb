"""Reliability tests (issue 16): adversarial input, generated scripts, worker isolation, the
user's database. The private user directory and Qt settings come from tests/conftest.py."""
import contextlib
import io

import pytest


def run_cli(argv):
    """``planner_app.cli.main(argv)`` in process: (exit code, stdout, stderr). A traceback is
    a test failure (it propagates); argparse's own exits come back as their code."""
    from planner_app.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(argv)
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else 2
    return rc, out.getvalue(), err.getvalue()


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture
def user_dir(tmp_path, monkeypatch):
    """A fresh, empty user data folder for this test."""
    d = tmp_path / "user"
    d.mkdir()
    monkeypatch.setenv("PLANNER_USER_DIR", str(d))
    return d
