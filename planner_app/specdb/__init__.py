"""The spec database: the shipped CSV catalog (catalog.py, schema.py) and the user's own rows in SQLite (userdb.py)."""
