"""`gpu-planner gui --page/--lang` (issue 29, item 16) refuse a value they do not know, naming the
option and what is allowed, before any window opens."""
import contextlib
import io

import pytest

from planner_app.cli import main


@pytest.mark.parametrize("argv,field,allowed", [(["gui", "--page", "bogus"], "--page", "specs"),
                                                 (["gui", "--lang", "fr"], "--lang", "zh_CN")])
def test_gui_refuses_an_unknown_page_or_language(argv, field, allowed):
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main(argv) == 2
    assert f"argument {field}: invalid choice" in err.getvalue() and allowed in err.getvalue()
