"""The open scenario: the data every page edits, its file path and unsaved state. Pages
change it through ``update_*`` methods; ``changed`` tells the others. Autosave writes a
copy to the user's data folder so a crash loses nothing."""
from __future__ import annotations

import copy
import os

from PySide6.QtCore import QObject, Signal

from planner_app import scenario
from planner_app.paths import user_data_dir

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
        if self._apply(self.data["workload"], values):
            self._set_dirty(True)
            self.changed.emit("workload")

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
        self.path = ""
        self.path_changed.emit("")
        self._set_dirty(False)
        self.changed.emit("all")

    def open(self, path: str) -> None:
        data = scenario.load(path)  # raises SpecDataError with the field; nothing changes then
        self.data = data
        self.path = path
        self.path_changed.emit(path)
        self._set_dirty(False)
        self.changed.emit("all")

    def load_data(self, data: dict, path: str = "", dirty: bool = True) -> None:
        self.data = scenario.validate(scenario.migrate(copy.deepcopy(data)))
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
        self.path_changed.emit(target)
        self._set_dirty(False)
        clear_autosave()

    def autosave(self) -> str | None:
        if not self._dirty:
            return None
        from planner_app.specdb.importers import atomic_write_text
        path = autosave_path()
        os.makedirs(os.path.dirname(path), exist_ok=True)
        payload = copy.deepcopy(self.data)
        payload.setdefault("meta", {})["autosave_of"] = self.path
        atomic_write_text(path, scenario.dumps(payload))
        return path


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
