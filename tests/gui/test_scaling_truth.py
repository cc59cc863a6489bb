"""Issue 29, item 11: the Scaling page compares networks as they would really be built. The example's
plan runs on AWS p5.48xlarge (32 EFA v2 NICs per node); the page used to give every network compared
those 32 NICs, so 100 Gb/s TCP Ethernet (32 x 100 Gb/s) ended 4 points below InfiniBand NDR at 64
nodes. Now a network other than the plan's own has the NIC count the catalogue's nodes on it have
(spec_data/instances.csv), shown in the table and the legend; lines that lie on each other stay
visible (the lower drawn on top, the one under it wider, "same as" in the legend); the legend sits
under the plot, never over a line."""
from collections import Counter

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QRect, Qt

from planner_app.core.options import build
from planner_app.core.requests import ScalingRequest
from planner_app.service import scaling

SCALING_ROW = 3  # the page list: Workload, Plan, Compare, Scaling, ...


def _scaling_page(window, qtbot):
    sp = window.scaling_page
    window.nav.setCurrentRow(SCALING_ROW)
    qtbot.waitUntil(lambda: len(sp.curves) == 4 and bool(sp.model.rows), timeout=30000)
    return sp


def _rows_by_network(sp) -> dict:
    out: dict = {}
    for r in sp.model.rows:
        out.setdefault(r["fabric"], []).append(r)
    return out


def _names(sp) -> dict:
    return sp.fabric_list.labels()


def test_each_network_has_its_own_nic_count(window, qtbot):
    sp = _scaling_page(window, qtbot)
    db = window.db
    inst = db.instance(window.doc.snapshot()["plans"][0]["instance"])
    names = _names(sp)
    rows = _rows_by_network(sp)
    nics = {fid: rows[names[fid]][0]["nics"] for fid in sp.curves}
    # the plan's own network (EFA v2 on p5.48xlarge) keeps the instance's NICs
    assert inst.fabric_id in nics and nics[inst.fabric_id] == inst.nics
    # another network has what the catalogue's 8-GPU instances on it have, never p5's 32
    for fid in ("eth-100", "ib-ndr", "roce-400"):
        on_it = Counter(r["nics"] for r in db.records["instances"]
                        if r["fabric_id"] == fid and r["gpu_count"] == inst.gpu_count and r["nics"])
        assert on_it and nics[fid] in on_it, (fid, nics[fid], on_it)
        assert nics[fid] != inst.nics
    # 100 Gb/s TCP Ethernet with its one NIC falls far below InfiniBand NDR at the largest count
    last = {fid: max(rows[names[fid]], key=lambda r: r["nodes"]) for fid in sp.curves}
    assert last["eth-100"]["nodes"] == last["ib-ndr"]["nodes"] == 64
    assert last["eth-100"]["efficiency"] < last["ib-ndr"]["efficiency"] - 0.2, last
    # the table's NICs column and the legend say it
    legend = [lab.text() for lab in sp.chart.legend.labels]
    for fid in sp.curves:
        assert any(t.startswith(names[fid]) and f"NICs per node: {nics[fid]}" in t for t in legend), (fid, legend)
    assert all(f"{names[fid]}: {nics[fid]}," in sp.notes.text() for fid in sp.curves), sp.notes.text()


def test_ticking_a_network_adds_it_with_its_own_nics(window, qtbot):
    sp = _scaling_page(window, qtbot)
    names = _names(sp)
    item = next(sp.fabric_list.item(i) for i in range(sp.fabric_list.count())
                if sp.fabric_list.item(i).text() == names["eth-400"])
    sp.fabric_list.scrollToItem(item)
    rect = sp.fabric_list.visualItemRect(item)
    # the check box sits at the row's left edge
    qtbot.mouseClick(sp.fabric_list.viewport(), Qt.LeftButton, pos=QPoint(rect.left() + 10, rect.center().y()))
    qtbot.waitUntil(lambda: "eth-400" in sp.curves, timeout=30000)
    n = _rows_by_network(sp)[names["eth-400"]][0]["nics"]
    assert n == scaling.typical_nics(window.db, "eth-400", 8)[0] and n < 8


def _ib_pixels(chart, colour: str) -> int:
    """Pixels of ``colour`` inside the plot area (the view box, legend left out)."""
    legend = getattr(chart.plot, "legend", None)
    if legend is not None:  # a legend drawn inside the plot is not a line
        legend.hide()
    vb = chart.plot.getViewBox()
    r = chart.plot_widget.mapFromScene(vb.sceneBoundingRect()).boundingRect()
    img = chart.plot_widget.grab(QRect(r)).toImage()
    arr = np.frombuffer(img.constBits(), np.uint8).reshape(img.height(), img.bytesPerLine() // 4, 4)[:, :img.width()]
    want = np.array([int(colour[i:i + 2], 16) for i in (5, 3, 1)])  # BGRA in memory
    return int((np.abs(arr[..., :3].astype(int) - want).sum(axis=2) < 40).sum())


def test_coinciding_lines_stay_visible(window, qtbot):
    sp = _scaling_page(window, qtbot)
    window.resize(1440, 900)
    qtbot.wait(50)
    chart, names = sp.chart, _names(sp)
    lines = {fid: next(k for k in chart._curves if k.startswith(names[fid]) and "(no overlap)" not in k)
             for fid in sp.curves}
    ib, roce = chart._curves[lines["ib-ndr"]], chart._curves[lines["roce-400"]]
    ib_y, roce_y = ib.getData()[1], roce.getData()[1]
    assert np.max(np.abs(ib_y - roce_y)) < 1.0  # the two lie on each other at the chart's scale
    # the line drawn under another is wider, so its colour shows around it
    under, over = (ib, roce) if ib.zValue() < roce.zValue() else (roce, ib)
    assert under.opts["pen"].widthF() > over.opts["pen"].widthF() + 2
    assert ib.opts["symbol"] != roce.opts["symbol"]
    # the slowest network is drawn last, on top
    eth = chart._curves[lines["eth-100"]]
    assert eth.zValue() > max(ib.zValue(), roce.zValue())
    colour = ib.opts["pen"].color().name()
    assert _ib_pixels(chart, colour) > 300
    legend = [lab.text() for lab in chart.legend.labels]
    top = lines["roce-400"] if over is roce else lines["ib-ndr"]
    assert any(t.startswith(top) and "same as" in t for t in legend), legend


def test_the_legend_is_outside_the_plot(window, qtbot):
    sp = _scaling_page(window, qtbot)
    chart = sp.chart
    assert getattr(chart.plot, "legend", None) is None  # no legend item inside the plot
    assert chart.legend.isVisible() and chart.legend.labels
    plot = chart.plot_widget.geometry()
    assert not plot.intersects(chart.legend.geometry())
    assert chart.legend.geometry().top() >= plot.bottom()
    # an entry per network (its NICs named), and one for the dashed no-overlap references
    assert len(chart.legend.labels) == len(sp.curves) + 1
    assert "no-overlap" in chart.legend.labels[-1].text()


# ---- the service itself: the rule, beyond the page's four networks ------------------------------
def _request(**machine) -> ScalingRequest:
    return build(ScalingRequest, {"model": "llama-2-7b", "gpus": 16, "nodes": "1,2,4",
                                  "fabrics": "ib-ndr,eth-100", **machine})


@pytest.fixture
def scaling_db():
    from planner_app.specdb.catalog import shipped_db
    return shipped_db()


def test_a_gpu_plan_keeps_one_nic_per_gpu_on_its_own_network_only(scaling_db):
    out = scaling.run_scaling(_request(gpu="h100-sxm"), scaling_db)
    assert out.nics["ib-ndr"] == 8  # the plan's own (default) network: one per GPU, as estimated
    assert out.nics["eth-100"] == scaling.typical_nics(scaling_db, "eth-100", 8)[0] != 8
    assert "spec data" in out.nics_from["eth-100"]


def test_a_nic_count_the_user_gives_holds_for_every_network(scaling_db):
    out = scaling.run_scaling(_request(gpu="h100-sxm", nics_per_node=4), scaling_db)
    assert out.nics == {"ib-ndr": 4, "eth-100": 4}
    assert all("--nics-per-node" in t for t in out.nics_from.values())


def test_a_network_no_instance_uses_gets_one_per_gpu(scaling_db):
    n, why = scaling.typical_nics(scaling_db, "gaudi-roce", 8)
    assert n == 8 and "no instance" in why
