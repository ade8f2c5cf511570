"""Case definitions by theme; importing a module registers its cases (see registry.py)."""
