"""End-to-end jobs behind the ``fairops`` command."""
