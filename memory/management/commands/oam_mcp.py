"""manage.py oam_mcp: the memory store as an MCP server over stdio, for an agent on this machine.

The same tools and resources as /mcp/ (memory.mcp), against the configured store (OAM_STORE_URL),
unscoped: whoever can run this command can read the store's files. Only the protocol goes to
stdout; logs go to stderr.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import anyio
from django.core.management.base import BaseCommand, CommandError, CommandParser
from mcp.server.stdio import stdio_server

from memory.engine import check_id_text
from memory.mcp.server import SERVER, serving
from memory.mcp.tools import Caller


async def run_stdio() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await SERVER.run(read_stream, write_stream, SERVER.create_initialization_options())


class Command(BaseCommand):
    help = (
        "Serve the memory store over MCP on stdin/stdout (an agent's MCP client starts this command). "
        "Each call is recorded in the activity log under --caller; --read-only lists and allows only "
        "the read tools."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--caller", default="mcp", help='The activity log\'s caller of each call (default "mcp").')
        parser.add_argument("--read-only", action="store_true", help="Only the read tools: no writes.")

    def handle(self, *args: Any, **options: Any) -> None:
        caller_name = options["caller"].strip()
        try:
            check_id_text("caller", caller_name)
        except ValueError as error:
            raise CommandError(f"--caller: {error}") from None
        # Logs to stderr: stdout carries the protocol only.
        logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
        for handler in logging.getLogger().handlers:
            if isinstance(handler, logging.StreamHandler) and getattr(handler, "stream", None) is sys.stdout:
                handler.setStream(sys.stderr)
        caller = Caller(name=caller_name, writes=not options["read_only"], token_name="")
        with serving(caller):
            anyio.run(run_stdio)
