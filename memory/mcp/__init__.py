"""The MCP front door: the engine's memory as MCP tools and resources, for agents that speak the
Model Context Protocol (docs/mcp.md).

`tools` defines each tool over the API's own request serializers and filter forms (the same
limits and messages), `schemas` derives their input schemas from the API's OpenAPI document,
`server` is the SDK's low-level server that lists and calls them for the caller bound to the
call, `http` serves it at /mcp/ inside the Django process (API tokens), and `manage.py oam_mcp`
over stdio.
"""
