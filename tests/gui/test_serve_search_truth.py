"""The Serve page's SLO search tells the truth about cost (issue 29, item 5), driven through its
widgets: the meeting's Llama-3.1-70B for 64 users on p5.48xlarge, run with the real button. Its #1
is billed the whole instances its replicas take (shown: GPUs, instances, idle GPUs, and $/h = the
instances x the instance's price); the rows run in cost per million output tokens; the weights
stay the model's own bf16 until "Quantized weights" is ticked; the Pareto front has no 2,048-GPU
deployments for 64 users, and the status says what it left out."""
import math

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QStyle, QStyleOptionButton

from planner_app.ui.pages.hardware import hw_key

INSTANCE = "p5.48xlarge"


def _open_serve(window, qtbot):
    window.doc.update_workload(model="llama-3.1-70b")
    window.nav.setCurrentRow([k for k, _t in window._page_titles].index("serve"))
    page = window.serve_page
    qtbot.waitUntil(lambda: page.last_result is not None or bool(page.error.text()), timeout=20000)
    return page


def _type(qtbot, field, text: str) -> None:
    field.setFocus()
    field.selectAll()
    qtbot.keyClick(field, Qt.Key_Delete)
    qtbot.keyClicks(field, text)
    qtbot.keyClick(field, Qt.Key_Return)


def _run(page, qtbot):
    with qtbot.waitSignal(page.search_slot.succeeded, timeout=60000):
        qtbot.mouseClick(page.run_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: page.run_button.isEnabled(), timeout=5000)
    return page.search_result


def _click_box(qtbot, box: QCheckBox) -> None:
    """A click on the check box's indicator (where a user clicks a box without text)."""
    opt = QStyleOptionButton()
    box.initStyleOption(opt)
    where = box.style().subElementRect(QStyle.SE_CheckBoxIndicator, opt, box).center()
    qtbot.mouseClick(box, Qt.LeftButton, pos=where)


def _cells(page, row: int) -> dict:
    """The table's row as shown: column key -> display text."""
    m = page.table_model
    return {c.key: m.data(m.index(row, j), Qt.DisplayRole) for j, c in enumerate(m.columns)}


def _raw(page, key: str) -> list:
    m = page.table_model
    j = [c.key for c in m.columns].index(key)
    return [m.data(m.index(i, j), Qt.UserRole) for i in range(m.rowCount())]


def test_number_one_is_billed_whole_instances_and_ranked_by_cost_per_token(window, qtbot):
    page = _open_serve(window, qtbot)
    page.machines.set_checked({hw_key("instance", INSTANCE)})
    _type(qtbot, page.ttft_target, "1000")
    _type(qtbot, page.tpot_target, "33.3")
    res = _run(page, qtbot)
    assert page.table_model.rowCount() == len(res.cheapest) >= 5
    price = window.db.instance(INSTANCE).prices.on_demand
    first = _cells(page, 0)
    gpus, instances, idle = int(first["gpus"]), int(first["instances"]), int(first["idle_gpus"])
    tp, pp, _ep, replicas = (int(x) for x in first["layout"].split("×"))
    assert gpus == tp * pp * replicas
    assert instances == math.ceil(replicas / (8 // (tp * pp)))  # replicas share an 8-GPU instance
    assert idle == 8 * instances - gpus
    assert first["usd_h"] == f"{instances * price:,.2f}"
    assert first["price_basis"] == "on-demand"
    for i in range(page.table_model.rowCount()):  # every row's bill is its whole instances
        row = _cells(page, i)
        assert int(row["idle_gpus"]) == 8 * int(row["instances"]) - int(row["gpus"])
        assert row["usd_h"] == f"{int(row['instances']) * price:,.2f}"
    per_m = _raw(page, "usd_per_m")
    assert per_m == sorted(per_m)  # the cheapest first: USD per million output tokens
    assert {_cells(page, i)["dtypes"].split(" / ")[0] for i in range(page.table_model.rowCount())} == {"bf16"}
    # the front: deployments sized for 64 users, and what was left out is said
    assert res.pareto and max(p["gpus"] for p in res.pareto) < 2048
    assert "Pareto front:" in page.search_status.text() and "left out" in page.search_status.text()
    # the #1 row put into the deployment: the single estimate bills the same
    before = page.last_result
    qtbot.mouseClick(page.use_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: page.last_result is not before and page.last_result is not None
                    and not page.timer.isActive() and not page.slot.busy, timeout=20000)
    cost = page.last_result["cost"]
    assert (cost["instances"], cost["idle_gpus"]) == (instances, idle)
    assert f"{instances:,} instance(s) of 8 GPUs, {idle:,} GPUs idle" in page.verdict.text()


def test_quantized_weights_are_searched_only_when_ticked(window, qtbot):
    page = _open_serve(window, qtbot)
    page.machines.set_checked({hw_key("instance", INSTANCE)})
    _type(qtbot, page.ttft_target, "1000")
    _type(qtbot, page.tpot_target, "33.3")
    plain = _run(page, qtbot)
    assert {p["weights_dtype"] for p in plain.cheapest + plain.pareto} == {"bf16"}
    box = page.search_options.findChild(QCheckBox, "option:quantized_weights")
    assert box is not None and not box.isChecked()
    _click_box(qtbot, box)
    assert box.isChecked() and window.doc.data["serve"]["quantized_weights"] is True
    asked = _run(page, qtbot)
    assert {"fp8", "int4"} & {p["weights_dtype"] for p in asked.cheapest + asked.pareto}
    assert asked.evaluated > plain.evaluated
    _click_box(qtbot, box)
    assert "quantized_weights" not in window.doc.data["serve"]  # the default is not written
