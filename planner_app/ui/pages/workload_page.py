"""Workload page: the model (preset, imported config.json, or edited dimensions) and the
training or inference setup shared by every plan."""
from __future__ import annotations

import json

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
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

from planner_app.core.training.setup import TrainingSetup
from planner_app.i18n import engine_text
from planner_app.service.options import BY_KEY, OPTION_DEFAULTS
from planner_app.ui.fields import (
    ChoiceField,
    IntField,
    NumberField,
    add_option_row,
    option_choice_field,
    option_int_field,
    option_label,
    option_number_field,
    with_option_tooltip,
)

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
        # labels, help, ranges, choices and defaults from the option table (service/options.py)
        self.micro_batch = option_int_field("micro_batch")
        self.seq_len = option_int_field("seq_len", value=4096)
        self.global_batch = option_int_field("global_batch", auto=self.tr("auto"))
        self.tokens = option_number_field("tokens", placeholder=self.tr("e.g. 1e12 (optional)"))
        self.recipe = option_choice_field("recipe", auto=self.tr("auto"))
        self.optimizer = option_choice_field("optimizer")
        self.optimizer_impl = option_choice_field("optimizer_impl")
        self.attention = option_choice_field("attention", auto=self.tr("auto"))
        self.recompute = option_choice_field("recompute")
        self.framework = option_choice_field("framework")
        self.offload = option_choice_field("offload")
        for key in ("micro_batch", "seq_len", "global_batch", "tokens", "recipe", "optimizer", "optimizer_impl",
                    "attention", "recompute", "framework", "offload"):
            add_option_row(tf, key, getattr(self, key))
        # fine-tuning: LoRA / QLoRA as PEFT and bitsandbytes run them (core/training/lora.py)
        self.finetune = option_choice_field("finetune")
        self.lora_rank = option_int_field("lora_rank", value=TrainingSetup.lora_rank)
        self.lora_targets = with_option_tooltip("lora_targets", QComboBox())
        self.lora_targets.setEditable(True)
        self.lora_targets.addItems(["", "all-linear", "q_proj,v_proj", "q_proj,k_proj,v_proj,o_proj"])
        self.lora_targets.lineEdit().setPlaceholderText(self.tr("PEFT's default for the model"))
        self.lora_dtype = option_choice_field("lora_dtype")
        opt = BY_KEY["lora_dropout"]
        self.lora_dropout = with_option_tooltip("lora_dropout", QDoubleSpinBox())
        self.lora_dropout.setRange(opt.minimum, opt.maximum)
        self.lora_dropout.setDecimals(3)
        self.lora_dropout.setSingleStep(0.05)
        self.qlora_prepare = with_option_tooltip("qlora_prepare", QCheckBox(option_label("qlora_prepare")))
        for key in ("finetune", "lora_rank", "lora_targets", "lora_dtype", "lora_dropout"):
            add_option_row(tf, key, getattr(self, key))
        tf.addRow("", self.qlora_prepare)
        self.stack.addWidget(train)

        infer = QWidget()
        inf = QFormLayout(infer)
        self.batch = option_int_field("batch")
        self.prompt_len = option_int_field("prompt_len")
        self.new_tokens = option_int_field("new_tokens")
        self.weights_dtype = option_choice_field("weights_dtype")
        self.kv_dtype = option_choice_field("kv_dtype")
        self.inference_api = option_choice_field("inference_api")
        for key in ("batch", "prompt_len", "new_tokens", "inference_api", "weights_dtype", "kv_dtype"):
            add_option_row(inf, key, getattr(self, key))
        # the scenario's own target (not an estimate option)
        self.target = NumberField(self.tr("Target tokens/s"), placeholder=self.tr("optional"))
        inf.addRow(self.tr("Target tokens/s"), self.target)
        self.stack.addWidget(infer)

        self.model_combo.currentIndexChanged.connect(self._preset_chosen)
        self.mode.currentIndexChanged.connect(self._edited)
        for w in (self.micro_batch, self.seq_len, self.global_batch, self.batch, self.prompt_len, self.new_tokens):
            w.valueChanged.connect(self._edited)
        for w in (self.recipe, self.optimizer, self.optimizer_impl, self.attention, self.recompute, self.framework,
                  self.offload, self.weights_dtype, self.kv_dtype, self.finetune, self.lora_dtype, self.inference_api):
            w.currentIndexChanged.connect(self._edited)
        self.lora_rank.valueChanged.connect(self._edited)
        self.lora_dropout.valueChanged.connect(self._edited)
        self.lora_targets.lineEdit().editingFinished.connect(self._edited)
        self.lora_targets.activated.connect(self._edited)
        self.qlora_prepare.toggled.connect(self._edited)
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
            self.inference_api.set_value(w.get("inference_api") or d["inference_api"])
            self.finetune.set_value(w.get("finetune") or d["finetune"])
            self.lora_rank.setValue(int(w.get("lora_rank") or TrainingSetup.lora_rank))
            self.lora_targets.setEditText(w.get("lora_targets") or "")
            self.lora_dtype.set_value(w.get("lora_dtype") or TrainingSetup.lora_dtype)
            self.lora_dropout.setValue(float(w.get("lora_dropout") or 0.0))
            self.qlora_prepare.setChecked(bool(w.get("qlora_prepare")))
            self._enable_lora_fields()
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

        from planner_app.core.models.hf_config import model_to_hf_config
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
        from planner_app.core.models.hf_config import model_from_hf_config
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

    def _enable_lora_fields(self):
        lora = self.finetune.value() != "full"
        for w in (self.lora_rank, self.lora_targets, self.lora_dtype, self.lora_dropout):
            w.setEnabled(lora)
        self.qlora_prepare.setEnabled(self.finetune.value() == "qlora")

    def _lora_values(self, training: bool) -> dict:
        """The scenario's fine-tuning keys: unset (None) unless LoRA/QLoRA is chosen, and then only
        what differs from PEFT's defaults."""
        ft = self.finetune.value() if training else "full"
        lora = ft != "full"
        targets = self.lora_targets.currentText().strip()
        return {"finetune": ft if lora else None,
                "lora_rank": self.lora_rank.value() if lora else None,
                "lora_targets": targets if lora and targets else None,
                "lora_dtype": self.lora_dtype.value() if lora and self.lora_dtype.value() != TrainingSetup.lora_dtype
                else None,
                "lora_dropout": self.lora_dropout.value() if lora and self.lora_dropout.value() > 0 else None,
                "qlora_prepare": True if ft == "qlora" and self.qlora_prepare.isChecked() else None}

    def _edited(self):
        if self._loading:
            return
        self._enable_lora_fields()
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
            inference_api=self.inference_api.value() if mode == "inference" and
            self.inference_api.value() != OPTION_DEFAULTS["inference_api"] else None,
            target_tokens_per_s=self.target.value() if mode == "inference" else None,
            **self._lora_values(mode == "training"))
