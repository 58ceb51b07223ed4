"""``ringmcp.mcp.shared``: what code written for ``mcp.shared`` imports."""
