"""Workload page: the model (preset, imported config.json, or edited dimensions) and the
training or inference setup shared by every plan."""
from __future__ import annotations

import json
from dataclasses import replace

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from planner_app.core.models.hf_config import model_from_hf_config, model_to_hf_config
from planner_app.core.options import options_of
from planner_app.core.requests import MODE, InferenceRequest, TrainingRequest
from planner_app.i18n import engine_text
from planner_app.i18n import tr as translate  # lupdate reads translate(context, text)
from planner_app.service.resolve import resolve_model
from planner_app.ui.fields import ChoiceField, IntField, NumberField
from planner_app.ui.option_form import OptionForm

DIMS = (("hidden", "hidden size", 64, 65536), ("layers", "layers", 1, 1024), ("heads", "attention heads", 1, 1024),
        ("kv_heads", "key/value heads", 1, 1024), ("ffn_hidden", "feed-forward size", 1, 1 << 20),
        ("vocab", "vocabulary", 1, 1 << 22))


class WorkloadPage(QWidget):
    def __init__(self, doc, db, parent=None):
        super().__init__(parent)
        self.doc, self.db = doc, db
        self._loading = False
        self._base_model = None
        root = QHBoxLayout(self)

        # ---- model ----------------------------------------------------------------------
        mbox = QGroupBox(self.tr("Model"))
        mform = QFormLayout(mbox)
        self.model_combo = ChoiceField([(m, m) for m in db.model_ids()])
        self.model_combo.setMaxVisibleItems(20)
        imp = QPushButton(self.tr("Import config.json…"))
        imp.clicked.connect(self._import_dialog)
        row = QHBoxLayout()
        row.addWidget(self.model_combo, 1)
        row.addWidget(imp)
        mform.addRow(self.tr("Preset"), row)
        self.model_summary = QLabel()
        self.model_summary.setWordWrap(True)
        self.model_summary.setTextInteractionFlags(Qt.TextSelectableByMouse)
        mform.addRow(self.tr("Parameters"), self.model_summary)
        self.dims = {}
        dim_labels = {"hidden": self.tr("Hidden size"), "layers": self.tr("Layers"),
                      "heads": self.tr("Attention heads"), "kv_heads": self.tr("Key/value heads"),
                      "ffn_hidden": self.tr("Feed-forward size"), "vocab": self.tr("Vocabulary")}
        for key, _label, lo, hi in DIMS:
            f = IntField(lo, hi, lo)
            f.valueChanged.connect(self._dims_edited)
            self.dims[key] = f
            mform.addRow(dim_labels[key], f)
        self.error = QLabel()
        self.error.setStyleSheet("color: #b00;")
        self.error.setWordWrap(True)
        mform.addRow(self.error)
        left = QVBoxLayout()
        left.addWidget(mbox, 1)
        root.addLayout(left, 1)

        # ---- setup ------------------------------------------------------------------------
        sbox = QGroupBox(self.tr("Setup"))
        slay = QVBoxLayout(sbox)
        self.mode = ChoiceField([("training", self.tr("Training")), ("inference", self.tr("Inference"))])
        top = QFormLayout()
        top.addRow(self.tr("Mode"), self.mode)
        slay.addLayout(top)
        self.stack = QStackedWidget()
        slay.addWidget(self.stack)
        # what the report's title block shows (scenario "meta")
        rbox = QGroupBox(self.tr("Report"))
        rform = QFormLayout(rbox)
        self.meta_fields = {"title": QLineEdit(), "project": QLineEdit(), "author": QLineEdit()}
        for w in self.meta_fields.values():
            w.setMaxLength(200)
            w.editingFinished.connect(self._meta_edited)
        self.notes = QPlainTextEdit()
        self.notes.setMaximumHeight(90)
        self.notes.setPlaceholderText(self.tr("shown with the inputs on the report's first page"))
        self.notes.textChanged.connect(self._meta_edited)
        rform.addRow(self.tr("Title"), self.meta_fields["title"])
        rform.addRow(self.tr("Project"), self.meta_fields["project"])
        rform.addRow(self.tr("Author"), self.meta_fields["author"])
        rform.addRow(self.tr("Notes"), self.notes)
        left.addWidget(rbox)
        slay.addStretch(1)
        root.addWidget(sbox, 1)

        # the training and inference setups: a row for every workload option of the requests
        # (core/requests.py), its label, help, range, choices and default from the option
        self.lora_targets = _TargetsField(translate("WorkloadPage", "PEFT's default for the model"))
        train_opts = [o for o in options_of(TrainingRequest).values() if o.scope == "workload" and o.kind != "model"]
        self.train_form = OptionForm(train_opts, custom={"lora_targets": self.lora_targets})
        self.lora_targets.edited.connect(self.train_form.edited)
        self.stack.addWidget(self.train_form)
        infer = QWidget()
        inf = QVBoxLayout(infer)
        inf.setContentsMargins(0, 0, 0, 0)
        infer_opts = [o for o in options_of(InferenceRequest).values()
                      if o.scope == "workload" and o.kind != "model" and o.key not in self.train_form.fields]
        self.infer_form = OptionForm(infer_opts)
        inf.addWidget(self.infer_form)
        # the scenario's own target (not an estimate option)
        tgt = QFormLayout()
        self.target = NumberField(self.tr("Target tokens/s"), placeholder=self.tr("optional"))
        tgt.addRow(self.tr("Target tokens/s"), self.target)
        inf.addLayout(tgt)
        self.stack.addWidget(infer)

        self.model_combo.currentIndexChanged.connect(self._preset_chosen)
        self.mode.currentIndexChanged.connect(self._edited)
        self.train_form.edited.connect(self._edited)
        self.infer_form.edited.connect(self._edited)
        self.target.value_changed.connect(self._edited)
        doc.changed.connect(self._doc_changed)
        self.load_from_doc()

    def field(self, key: str):
        """The input of option ``key`` (a row of the training or the inference form)."""
        form = self.train_form if key in self.train_form.fields else self.infer_form
        return form.widget(key)

    # ---- document -> widgets -----------------------------------------------------------------
    def _doc_changed(self, what):
        if what in ("all",):
            self.load_from_doc()
        elif what == "meta":
            self._load_meta()

    def _load_meta(self):
        was = self._loading
        self._loading = True
        try:
            meta = self.doc.data.get("meta", {})
            for k, w in self.meta_fields.items():
                if w.text() != (meta.get(k) or ""):
                    w.setText(meta.get(k) or "")
            if self.notes.toPlainText() != (meta.get("notes") or ""):
                self.notes.setPlainText(meta.get("notes") or "")
        finally:
            self._loading = was

    def _meta_edited(self):
        if self._loading:
            return
        values = {k: w.text().strip() for k, w in self.meta_fields.items()}
        values["notes"] = self.notes.toPlainText().strip()
        self.doc.update_meta(**values)

    def load_from_doc(self):
        self._loading = True
        try:
            w = self.doc.data["workload"]
            model = w.get("model")
            if isinstance(model, str):
                self.model_combo.set_value(model)
            self._show_model(model)
            mode = w.get("mode", MODE.default)
            self.mode.set_value(mode)
            self.stack.setCurrentIndex(0 if mode == "training" else 1)
            self.train_form.set_values(w)
            self.infer_form.set_values(w)
            self.target.set_value(w.get("target_tokens_per_s"))
            self._load_meta()
        finally:
            self._loading = False

    def _show_model(self, model_ref):
        try:
            m = resolve_model(model_ref, self.db)
        except Exception as e:  # noqa: BLE001 - shown at the field
            self.error.setText(str(e))
            return
        self.error.setText("")
        self._base_model = m
        self.model_summary.setText(f"{m.params_total / 1e9:,.2f} B ({m.params_total:,})\n{engine_text(m.summary())}")
        was = self._loading
        self._loading = True
        for key, _, _, _ in DIMS:
            v = getattr(m, key, None)
            if v:
                self.dims[key].setValue(int(v))
            self.dims[key].setEnabled(bool(v))
        self._loading = was

    # ---- widgets -> document ---------------------------------------------------------------
    def _preset_chosen(self):
        if self._loading:
            return
        name = self.model_combo.value()
        self._show_model(name)
        self.doc.update_workload(model=name)

    def _dims_edited(self):
        if self._loading or self._base_model is None:
            return
        changes = {k: f.value() for k, f in self.dims.items() if f.isEnabled()}
        if changes.get("kv_heads") and changes.get("heads") and changes["heads"] % changes["kv_heads"]:
            self.error.setText(self.tr("attention heads must be a multiple of key/value heads"))
            return
        if changes.get("hidden") and changes.get("heads") and changes["hidden"] % changes["heads"]:
            self.error.setText(self.tr("hidden size must be a multiple of attention heads"))
            return
        if changes.get("layers") and changes["layers"] != self._base_model.layers:
            changes.update(self._base_model.layer_count_changes(changes["layers"]))
        try:
            m = replace(self._base_model, **changes)
            cfg = model_to_hf_config(m)
        except Exception as e:  # noqa: BLE001 - shown at the field
            self.error.setText(str(e))
            return
        self.error.setText("")
        base_name = self._base_model.name.replace(" (edited)", "")
        self.model_summary.setText(f"{m.params_total / 1e9:,.2f} B ({m.params_total:,})\n{engine_text(m.summary())}")
        self.doc.update_workload(model={"name": f"{base_name} (edited)", "hf_config": cfg})

    def import_config(self, path: str) -> bool:
        """Read a Hugging Face config.json into the workload (embedded in the scenario)."""
        try:
            with open(path, encoding="utf-8") as f:
                cfg = json.load(f)
            m = model_from_hf_config(cfg, cfg.get("_name_or_path") or path.rsplit("/", 1)[-1])
        except (OSError, ValueError) as e:
            self.error.setText(self.tr("cannot import {path}: {err}").format(path=path, err=e))
            return False
        except Exception as e:  # noqa: BLE001 - InputError names the field
            self.error.setText(self.tr("cannot import {path}: {err}").format(path=path, err=e))
            return False
        ref = {"name": m.name, "hf_config": cfg}
        self._show_model(ref)
        self.doc.update_workload(model=ref)
        return True

    def _import_dialog(self):
        path, _ = QFileDialog.getOpenFileName(self, self.tr("Import a Hugging Face config.json"), "",
                                              self.tr("JSON files (*.json)"))
        if path:
            self.import_config(path)

    def _edited(self):
        if self._loading:
            return
        mode = self.mode.value()
        self.stack.setCurrentIndex(0 if mode == "training" else 1)
        # both setups are kept (a workload switched to inference and back keeps its training options);
        # an estimate takes its own mode's (scenario.plan_options)
        self.doc.update_workload(mode=mode, **self.infer_form.values(), **self.train_form.values(),
                                 target_tokens_per_s=self.target.value() if mode == "inference" else None)


class _TargetsField(QComboBox):
    """LoRA's target modules: PEFT's names typed in, or picked from the usual sets."""

    edited = Signal()

    def __init__(self, placeholder: str):
        super().__init__()
        self.setEditable(True)
        self.addItems(["", "all-linear", "q_proj,v_proj", "q_proj,k_proj,v_proj,o_proj"])
        self.lineEdit().setPlaceholderText(placeholder)
        self.lineEdit().editingFinished.connect(self.edited)
        self.activated.connect(lambda _i: self.edited.emit())

    def value(self):
        return self.currentText().strip() or None

    def set_value(self, v) -> None:
        self.setEditText(v or "")
