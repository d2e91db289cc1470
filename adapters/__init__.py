"""Thin adapters between coding agents' hooks and memsift; the library never imports them."""
