"""``fairops tune``: the command (:mod:`.command`) over its settings, study, job, registration and report."""

from .command import add_parser

__all__ = ["add_parser"]
