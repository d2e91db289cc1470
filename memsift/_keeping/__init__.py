"""What waits to be kept: the store's outbox, the spool of a home that cannot be written."""
