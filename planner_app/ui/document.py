"""The open scenario: the data every page edits, its file path and unsaved state. Pages
change it through ``update_*`` methods; ``changed`` tells the others. Autosave writes a
copy to the user's data folder so a crash loses nothing."""
from __future__ import annotations

import copy
import os

from PySide6.QtCore import QObject, Signal

from planner_app import scenario
from planner_app.atomic import atomic_write_text
from planner_app.paths import examples_dir, user_data_dir

AUTOSAVE_NAME = "autosave.gpuplan.json"


class ScenarioDocument(QObject):
    changed = Signal(str)  # what changed: "workload", "plans", "meta", "all"
    dirty_changed = Signal(object)
    path_changed = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.data = scenario.new_scenario()
        self.path = ""
        self._dirty = False
        self.template_meta = None  # the meta of an example opened as a template (see _retire_example_meta)
        self.example_name = ""  # file name of the example this untitled scenario was opened from

    # ---- state ------------------------------------------------------------------------
    @property
    def dirty(self) -> bool:
        return self._dirty

    def _set_dirty(self, value: bool) -> None:
        if value != self._dirty:
            self._dirty = value
            self.dirty_changed.emit(value)

    def snapshot(self) -> dict:
        return copy.deepcopy(self.data)

    # ---- edits --------------------------------------------------------------------------
    @staticmethod
    def _apply(target: dict, values: dict) -> bool:
        """Set ``values`` in ``target`` (None or "" removes the key); True if anything changed."""
        changed = False
        for k, v in values.items():
            if v is None or v == "":
                changed |= target.pop(k, None) is not None
            elif target.get(k) != v:
                target[k] = v
                changed = True
        return changed

    def update_workload(self, **values) -> None:
        before = (self.data["workload"].get("model"), self.data["workload"].get("mode", "training"))
        if self._apply(self.data["workload"], values):
            self._set_dirty(True)
            self.changed.emit("workload")
            if before != (self.data["workload"].get("model"), self.data["workload"].get("mode", "training")):
                self._retire_example_meta()

    def _retire_example_meta(self) -> None:
        """An example's title and notes describe the example: once its model or mode changes
        they no longer describe the scenario, so they give way to a plain title (unless the
        user has written their own)."""
        t = self.template_meta
        meta = self.data.setdefault("meta", {})
        if t is None or (meta.get("title"), meta.get("notes")) != (t.get("title"), t.get("notes")):
            self.template_meta = None
            return
        self.template_meta = None
        m = self.data["workload"].get("model")
        name = m if isinstance(m, str) else (m or {}).get("name", "")
        meta["title"] = f"{name} {self.data['workload'].get('mode', 'training')} sizing".strip()
        meta["notes"] = ""
        self.changed.emit("meta")

    def update_serve(self, **values) -> None:
        """The Serve page's inputs (the scenario's optional ``serve`` section)."""
        serve = self.data.setdefault("serve", {})
        if self._apply(serve, values):
            self._set_dirty(True)
            self.changed.emit("serve")

    def update_plan(self, index: int, **values) -> None:
        if self._apply(self.data["plans"][index], values):
            self._set_dirty(True)
            self.changed.emit("plans")

    def set_plans(self, plans: list, chosen: int = 0) -> None:
        self.data["plans"] = copy.deepcopy(plans)
        self.data["chosen_plan"] = min(max(chosen, 0), len(plans) - 1)
        self._set_dirty(True)
        self.changed.emit("plans")

    def add_plan(self, plan: dict) -> int:
        if len(self.data["plans"]) >= scenario.MAX_PLANS:
            raise ValueError(f"at most {scenario.MAX_PLANS} plans")
        self.data["plans"].append(copy.deepcopy(plan))
        self._set_dirty(True)
        self.changed.emit("plans")
        return len(self.data["plans"]) - 1

    def remove_plan(self, index: int) -> None:
        if len(self.data["plans"]) <= 1:
            raise ValueError("a scenario keeps at least one plan")
        del self.data["plans"][index]
        self.data["chosen_plan"] = min(self.data.get("chosen_plan", 0), len(self.data["plans"]) - 1)
        self._set_dirty(True)
        self.changed.emit("plans")

    def set_chosen(self, index: int) -> None:
        if self.data.get("chosen_plan") != index:
            self.data["chosen_plan"] = index
            self._set_dirty(True)
            self.changed.emit("plans")

    def update_meta(self, **values) -> None:
        changed = False
        for k, v in values.items():
            target = self.data if k in ("currency", "calibration") else self.data["meta"]
            if target.get(k) != v:
                target[k] = v
                changed = True
        if changed:
            self._set_dirty(True)
            self.changed.emit("meta")

    # ---- files --------------------------------------------------------------------------
    def new(self, defaults: dict | None = None) -> None:
        """A fresh scenario; ``defaults``: currency, cny_per_usd, framework from the settings."""
        self.data = scenario.new_scenario()
        d = defaults or {}
        if d.get("currency"):
            self.data["currency"] = d["currency"]
        if d.get("cny_per_usd"):
            self.data["cny_per_usd"] = d["cny_per_usd"]
        if d.get("framework") and d["framework"] != "pytorch":
            self.data["workload"]["framework"] = d["framework"]
        self.template_meta = None
        self.example_name = ""  # the new scenario is no longer the example's copy (the title says so)
        self.path = ""
        self.path_changed.emit("")
        self._set_dirty(False)
        self.changed.emit("all")

    def open(self, path: str) -> None:
        """Open a scenario file. A shipped example opens as an untitled copy (Save asks for a
        name, so the example itself is never overwritten)."""
        data = scenario.load(path)  # raises SpecDataError with the field; nothing changes then
        if is_example(path):
            self.load_data(data, path="", dirty=False, template=True)
            self.example_name = os.path.basename(path)
            self.path_changed.emit("")
            return
        self.data = data
        self.template_meta = None
        self.example_name = ""
        self.path = path
        self.path_changed.emit(path)
        self._set_dirty(False)
        self.changed.emit("all")

    def load_data(self, data: dict, path: str = "", dirty: bool = True, template: bool = False) -> None:
        self.data = scenario.validate(scenario.migrate(copy.deepcopy(data)))
        self.template_meta = copy.deepcopy(self.data.get("meta", {})) if template else None
        self.example_name = ""
        self.path = path
        self.path_changed.emit(path)
        self._set_dirty(dirty)
        self.changed.emit("all")

    def save(self, path: str | None = None) -> None:
        target = path or self.path
        if not target:
            raise ValueError("no file name")
        scenario.save(self.data, target)
        self.path = target
        self.example_name = ""
        self.path_changed.emit(target)
        self._set_dirty(False)
        clear_autosave()

    def autosave(self) -> str | None:
        if not self._dirty:
            return None
        path = autosave_path()
        os.makedirs(os.path.dirname(path), exist_ok=True)
        payload = copy.deepcopy(self.data)
        payload.setdefault("meta", {})["autosave_of"] = self.path
        atomic_write_text(path, scenario.dumps(payload))
        return path


def is_example(path: str) -> bool:
    try:
        return os.path.commonpath([os.path.realpath(path), os.path.realpath(examples_dir())]) == \
            os.path.realpath(examples_dir())
    except ValueError:  # different drives (Windows)
        return False


def autosave_path() -> str:
    return os.path.join(user_data_dir(), AUTOSAVE_NAME)


def pending_autosave() -> dict | None:
    """A scenario left by a session that did not close cleanly, or None."""
    path = autosave_path()
    if not os.path.exists(path):
        return None
    try:
        return scenario.load(path)
    except Exception:  # noqa: BLE001 - a damaged autosave is not offered
        return None


def clear_autosave() -> None:
    try:
        os.remove(autosave_path())
    except FileNotFoundError:
        pass
