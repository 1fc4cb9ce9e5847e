"""A logging handler that keeps the messages it is given (what a library's handler would print)."""

import logging


class LogRecords(logging.Handler):
    def __init__(self):
        super().__init__()
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())
