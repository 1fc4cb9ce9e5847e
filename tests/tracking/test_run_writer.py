"""Writes on a thread of their own: in order, a bounded backlog, errors raised where the caller sees them."""

import threading

import pytest

from fairops.tracking._run_writer import BackgroundWrites


def test_writes_run_in_order_and_flush_waits_for_them():
    done = []
    writes = BackgroundWrites(backlog=3)
    for i in range(50):
        writes.submit(lambda i=i: done.append(i))
    writes.flush()
    assert done == list(range(50)) and writes.pending() == 0


def test_a_submit_waits_while_the_backlog_is_full():
    held, submitted = threading.Event(), threading.Event()
    writes = BackgroundWrites(backlog=1)
    writes.submit(held.wait)  # being written, held until the test lets it go
    writes.submit(lambda: None)  # waiting: the backlog is full now

    def third():
        writes.submit(lambda: None)
        submitted.set()

    thread = threading.Thread(target=third)
    thread.start()
    assert not submitted.wait(0.3)  # cannot return: the first write is held
    assert writes.pending() == 2
    held.set()
    thread.join(timeout=30)
    assert submitted.is_set()
    writes.flush()
    assert writes.pending() == 0


def test_an_error_is_raised_once_by_the_next_submit_or_flush():
    writes = BackgroundWrites()

    def fail():
        raise KeyError("store gone")

    writes.submit(fail)
    with pytest.raises(KeyError, match="store gone"):
        writes.flush()
    writes.flush()  # raised once
    writes.submit(fail)
    writes._own_writer().thread.submit(lambda: None).result()  # one thread, in order: the failed write is done
    with pytest.raises(KeyError):
        writes.submit(lambda: None)


def test_a_backlog_below_one_is_refused():
    with pytest.raises(ValueError, match="backlog must be an int >= 1"):
        BackgroundWrites(backlog=0)
