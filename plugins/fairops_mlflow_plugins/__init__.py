"""Adapters that other hosts discover through entry points (installed as ``fairops.plugins``)."""
