"""Long-term stores: the embedded SQLite one and the Cognee one."""
