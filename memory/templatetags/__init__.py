"""The `oam` template tag library (templates load it by name: {% load oam %})."""
