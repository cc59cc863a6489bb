"""The Plan page's host-side panel (issue 19): checkpoint size and write cost, host RAM per
node against the instance's, and the input pipeline's verdict, from the estimate's ``host``
key (service/host.py). Shows only; computes nothing."""
from __future__ import annotations

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtWidgets import QFormLayout, QGroupBox, QLabel

from planner_app import units
from planner_app.ui.fields import add_option_row, duration_text, option_number_field


def verdict_text(verdict: str) -> str:
    """The input pipeline's verdict in the UI's language."""
    return {"fed": QCoreApplication.translate("HostPanel", "fed"),
            "cpu-bound": QCoreApplication.translate("HostPanel", "CPU-bound"),
            "storage-bound": QCoreApplication.translate("HostPanel", "storage-bound"),
            }.get(verdict, QCoreApplication.translate("HostPanel", "unknown (choose an instance)"))


def checkpoint_line(h: dict) -> str:
    c = h["checkpoint"]
    return QCoreApplication.translate(
        "HostPanel", "{total} resumable ({weights} weights), {files} file(s); {write} per save at {bw:g} GB/s per "
                     "node = {pct:.2f}% of training; {kept} kept: {disk}").format(
        total=units.fmt_bytes(c["resumable_bytes"]), weights=units.fmt_bytes(c["weights_bytes"]), files=c["files"],
        write=duration_text(c["write_s"]), bw=c["write_gb_s_per_node"], pct=c["overhead_fraction"] * 100,
        kept=c["kept"], disk=units.fmt_bytes(c["disk_bytes"]))


def ram_line(h: dict) -> str:
    r = h["ram"]
    need = units.fmt_bytes(r["needed_bytes"])
    if r["ram_bytes"] is None:
        return QCoreApplication.translate("HostPanel", "{need} per node (choose an instance to compare)").format(
            need=need)
    text = QCoreApplication.translate("HostPanel", "{need} of {ram} per node ({states} offloaded states)").format(
        need=need, ram=units.fmt_bytes(r["ram_bytes"]), states=units.fmt_bytes(r["parts"]["offloaded_states"]))
    if not r["fits"]:
        text += " — " + QCoreApplication.translate("HostPanel", "DOES NOT FIT the host")
    return text


def input_line(h: dict) -> str:
    p = h["input"]
    # rates to two significant digits: a small job's 0.082 samples/s printed as "0" with ",.0f"
    return QCoreApplication.translate(
        "HostPanel", "{verdict}: {need} samples/s per node ({read}/s, {cores} cores); "
                     "{workers} loader workers per GPU").format(
        verdict=verdict_text(p["verdict"]), need=units.fmt_rate(p["samples_per_s_per_node"]),
        read=units.fmt_bytes(p["read_gb_s_per_node"] * 1e9), cores=units.fmt_rate(p["cores_needed_per_node"]),
        workers=p["workers_per_gpu"])


# The plan options this panel edits (service/options.py): number fields, empty = the default
HOST_OPTION_KEYS = ("checkpoint_interval_min", "checkpoints_kept", "storage_write_gb_s")


class HostPanel(QGroupBox):
    """The checkpoint options of the plan (interval, kept, write bandwidth) and three result
    lines: checkpoint, host RAM, input pipeline."""

    def __init__(self, parent=None):
        super().__init__(QCoreApplication.translate("HostPanel", "Host side"), parent)
        form = QFormLayout(self)
        self.fields = {k: option_number_field(k, placeholder=QCoreApplication.translate("HostPanel", "default"))
                       for k in HOST_OPTION_KEYS}
        for k, f in self.fields.items():
            add_option_row(form, k, f)
        self.labels = {}
        for key, title in (("checkpoint", QCoreApplication.translate("HostPanel", "Checkpoint")),
                           ("ram", QCoreApplication.translate("HostPanel", "Host RAM")),
                           ("input", QCoreApplication.translate("HostPanel", "Input pipeline"))):
            lab = QLabel("–")
            lab.setWordWrap(True)
            lab.setTextInteractionFlags(Qt.TextSelectableByMouse)
            form.addRow(title, lab)
            self.labels[key] = lab

    def option_values(self) -> dict:
        """The plan's values of the panel's options (None: unset, the engine's default)."""
        out = {}
        for k, f in self.fields.items():
            v = f.value()
            out[k] = int(v) if v is not None and k == "checkpoints_kept" else v
        return out

    def load(self, plan: dict) -> None:
        for k, f in self.fields.items():
            f.set_value(plan.get(k))

    def set_estimate(self, est: dict | None) -> None:
        h = (est or {}).get("host")
        for lab in self.labels.values():
            lab.setVisible(h is not None)
        if h is None:
            return
        self.labels["checkpoint"].setText(checkpoint_line(h))
        self.labels["ram"].setText(ram_line(h))
        self.labels["input"].setText(input_line(h))
