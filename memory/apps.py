from django.apps import AppConfig


class MemoryConfig(AppConfig):
    """The dashboard and API over the memory engine (memory.engine, which imports no Django)."""

    name = "memory"
    verbose_name = "Agent memory"
