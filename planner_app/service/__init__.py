"""The service layer between the faces (CLI, GUI, report, scenario files) and the engine:
typed requests in (option dicts named as the CLI names them), engine results out.
``estimate``, ``search``, ``resolve`` (names to engine types), ``catalog`` (the spec database
with the user's rows), ``validation`` (real-run checks). Imports core, specdb and probe;
never ui or cli (tests/unit/test_layering.py runs the import contracts)."""
