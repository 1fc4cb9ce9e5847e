"""Parameters that grow the Fairband schedule are bounded, with the reason, before anything is laid out."""

import pytest

from fairops.fairband import FairbandSampler, FairbandSettings, _schedule as schedule
from fairops.jobs._tune.settings import TuneSettings


@pytest.mark.parametrize("eta, s_max, message", [
    (3, 30, "s_max must be at most 16"), (10**6, 1, "eta must be at most 1000"),
    (10, 6, r"eta\*\*s_max = 10\*\*6 = 1000000 configurations.*above 100,000"),
    (2, -1, "s_max must be an integer >= 0"), (1, 2, "eta must be an integer >= 2")])
def test_schedule_shapes_that_would_not_fit_are_refused_at_once(eta, s_max, message):
    for make in (lambda: FairbandSampler(eta=eta, s_max=s_max), lambda: FairbandSettings(eta=eta, s_max=s_max),
                 lambda: schedule.iteration_size(eta, s_max)):
        with pytest.raises(ValueError, match=message):
            make()


def test_the_largest_allowed_shapes_still_build():
    assert schedule.iteration_size(2, 16) > 2**16
    assert schedule.iteration_size(3, 4) == 206


def test_iterations_are_bounded_in_the_sampler_and_the_tune_settings():
    with pytest.raises(ValueError, match="iterations must be at most 10000"):
        FairbandSampler(iterations=10**9)
    with pytest.raises(ValueError, match="iterations must be at most 10000"):
        TuneSettings(dataset="adult", iterations=10**6)
    with pytest.raises(ValueError, match="iterations must be a positive integer, got 0"):
        TuneSettings(dataset="adult", iterations=0)
    assert FairbandSampler(iterations=schedule.MAX_ITERATIONS).iterations == schedule.MAX_ITERATIONS
