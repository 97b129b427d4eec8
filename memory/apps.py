from django.apps import AppConfig
from django.urls import register_converter


class MemoryConfig(AppConfig):
    """The dashboard and API over the memory engine (memory.engine, which imports no Django)."""

    name = "memory"
    verbose_name = "Agent memory"

    def ready(self) -> None:
        from memory.web.converters import EngineIdConverter

        register_converter(EngineIdConverter, "id")  # for the dashboard's URLs and the API's
