"""Workload page: the model (preset, imported config.json, or edited dimensions) and the
training or inference setup shared by every plan."""
from __future__ import annotations

import json

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QFileDialog, QFormLayout, QGroupBox, QHBoxLayout, QLabel, QLineEdit, QPlainTextEdit,
                               QPushButton, QStackedWidget, QVBoxLayout, QWidget)

from planner_app.i18n import engine_text
from planner_app.service.options import OPTION_DEFAULTS
from planner_app.ui.fields import ChoiceField, IntField, NumberField, option_choice_field, option_int_field

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
        for key, label, lo, hi in DIMS:
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

        train = QWidget()
        tf = QFormLayout(train)
        # ranges, choices and defaults from the option table (service/options.py)
        self.micro_batch = option_int_field("micro_batch")
        self.seq_len = option_int_field("seq_len", value=4096)
        self.global_batch = option_int_field("global_batch", auto=self.tr("auto"))
        self.tokens = NumberField(self.tr("Tokens"), placeholder=self.tr("e.g. 1e12 (optional)"))
        self.recipe = option_choice_field("recipe", auto=self.tr("auto"))
        self.optimizer = option_choice_field("optimizer")
        self.optimizer_impl = option_choice_field("optimizer_impl")
        self.attention = option_choice_field("attention", auto=self.tr("auto"))
        self.recompute = option_choice_field("recompute")
        self.framework = option_choice_field("framework")
        self.offload = option_choice_field("offload")
        for label, w in ((self.tr("Micro-batch"), self.micro_batch), (self.tr("Sequence length"), self.seq_len),
                         (self.tr("Global batch"), self.global_batch), (self.tr("Tokens"), self.tokens),
                         (self.tr("Recipe"), self.recipe), (self.tr("Optimizer"), self.optimizer),
                         (self.tr("Optimizer implementation"), self.optimizer_impl),
                         (self.tr("Attention"), self.attention), (self.tr("Recomputation"), self.recompute),
                         (self.tr("Framework"), self.framework), (self.tr("Offload"), self.offload)):
            tf.addRow(label, w)
        self.stack.addWidget(train)

        infer = QWidget()
        inf = QFormLayout(infer)
        self.batch = option_int_field("batch")
        self.prompt_len = option_int_field("prompt_len")
        self.new_tokens = option_int_field("new_tokens")
        self.weights_dtype = option_choice_field("weights_dtype")
        self.kv_dtype = option_choice_field("kv_dtype")
        self.target = NumberField(self.tr("Target tokens/s"), placeholder=self.tr("optional"))
        for label, w in ((self.tr("Concurrent sequences"), self.batch), (self.tr("Prompt length"), self.prompt_len),
                         (self.tr("New tokens"), self.new_tokens), (self.tr("Weights"), self.weights_dtype),
                         (self.tr("KV cache"), self.kv_dtype), (self.tr("Target tokens/s"), self.target)):
            inf.addRow(label, w)
        self.stack.addWidget(infer)

        self.model_combo.currentIndexChanged.connect(self._preset_chosen)
        self.mode.currentIndexChanged.connect(self._edited)
        for w in (self.micro_batch, self.seq_len, self.global_batch, self.batch, self.prompt_len, self.new_tokens):
            w.valueChanged.connect(self._edited)
        for w in (self.recipe, self.optimizer, self.optimizer_impl, self.attention, self.recompute, self.framework,
                  self.offload, self.weights_dtype, self.kv_dtype):
            w.currentIndexChanged.connect(self._edited)
        self.tokens.value_changed.connect(self._edited)
        self.target.value_changed.connect(self._edited)
        doc.changed.connect(self._doc_changed)
        self.load_from_doc()

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
            d = OPTION_DEFAULTS  # a key the scenario leaves out shows the engine's default
            mode = w.get("mode", d["mode"])
            self.mode.set_value(mode)
            self.stack.setCurrentIndex(0 if mode == "training" else 1)
            self.micro_batch.setValue(int(w.get("micro_batch", d["micro_batch"])))
            self.seq_len.setValue(int(w.get("seq_len") or 4096))
            self.global_batch.setValue(int(w.get("global_batch") or 0))
            self.tokens.set_value(w.get("tokens"))
            for key, field in (("recipe", self.recipe), ("optimizer", self.optimizer),
                               ("optimizer_impl", self.optimizer_impl), ("attention", self.attention),
                               ("recompute", self.recompute), ("framework", self.framework), ("offload", self.offload),
                               ("weights_dtype", self.weights_dtype), ("kv_dtype", self.kv_dtype)):
                field.set_value(w.get(key, d[key]))
            for key, field in (("batch", self.batch), ("prompt_len", self.prompt_len), ("new_tokens", self.new_tokens)):
                field.setValue(int(w.get(key, d[key])))
            self.target.set_value(w.get("target_tokens_per_s"))
            self._load_meta()
        finally:
            self._loading = False

    def _show_model(self, model_ref):
        from planner_app.service.resolve import resolve_model
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
        from dataclasses import replace

        from planner_app.core.hf_config import model_to_hf_config
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
        from planner_app.core.hf_config import model_from_hf_config
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
        self.doc.update_workload(
            mode=mode, micro_batch=self.micro_batch.value(), seq_len=self.seq_len.value(),
            global_batch=self.global_batch.value_or_none(), tokens=self.tokens.value(), recipe=self.recipe.value(),
            optimizer=self.optimizer.value(), attention=self.attention.value(), recompute=self.recompute.value(),
            optimizer_impl=None if self.optimizer_impl.value() == OPTION_DEFAULTS["optimizer_impl"] or
            mode != "training" else self.optimizer_impl.value(),
            framework=self.framework.value(), offload=self.offload.value(),
            batch=self.batch.value() if mode == "inference" else None,
            prompt_len=self.prompt_len.value() if mode == "inference" else None,
            new_tokens=self.new_tokens.value() if mode == "inference" else None,
            weights_dtype=self.weights_dtype.value() if mode == "inference" else None,
            kv_dtype=self.kv_dtype.value() if mode == "inference" else None,
            target_tokens_per_s=self.target.value() if mode == "inference" else None)
