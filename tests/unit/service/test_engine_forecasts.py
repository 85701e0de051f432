"""The live engine's answers about the future: what blocks a job and when it starts, EASY's
forecasts (in slices, to a horizon, a read never doing the writer's work), and what-ifs
that answer as a submission would and leave the live state alone."""

from __future__ import annotations

import pytest

from berth.service.handlers.job_commands import submit
from berth.service.queries.answers import WhatIfForecast, begin_what_if, start_info, what_if
from tests.support.live import engine, request
from tests.support.stops import EveryFewQuestions


def test_start_info_names_what_blocks_the_job() -> None:
    live = engine()
    running, _ = submit(live, request(cpus=24, limit=100), now=0)
    waiting, _ = submit(live, request(cpus=16, limit=100), now=0)
    info = start_info(live, waiting.id, 5)
    assert info["predicted_start"] == 100
    assert info["guaranteed_start"] == 100
    blocked = info["blocked_by"]
    assert isinstance(blocked, dict)
    assert blocked["resources"] == {"cpus": {"requested": 16, "free_now": 8}}
    assert blocked["running_jobs_to_end"] == [running.id]


def test_easy_predictions_are_a_forecast_for_every_pending_job() -> None:
    live = engine("easy")
    submit(live, request(cpus=32, limit=100), now=0)
    second, _ = submit(live, request(cpus=32, limit=100), now=0)
    third, _ = submit(live, request(cpus=32, limit=50), now=0)
    _, predicted = live.forecasts.predictions(0)
    assert predicted == {second.id: 100, third.id: 200}
    info = start_info(live, third.id, 0)
    assert "not a promise" in str(info["based_on"])
    assert info["guaranteed_start"] is None


def test_a_read_gives_a_new_forecast_one_slice_and_leaves_one_under_way_to_the_writer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Sliced (the daemon), the read that starts a forecast gives it one slice; a read
    while it is under way answers from the last finished one without driving it (at
    4,096 nodes one never finished within a slice, and every query paid its slice);
    the writer's slices finish it. One job's prediction is that job's in the map."""
    from berth.core.forecast import ForecastRun
    from berth.service.planning import forecasts

    monkeypatch.setattr(forecasts, "FORECAST_SLICE", 0.0)  # one step a slice
    steps: list[int] = []
    advance = ForecastRun.advance

    def counted(run: ForecastRun, stop: object = None) -> bool:
        steps.append(1)
        return advance(run, stop)  # type: ignore[arg-type]

    monkeypatch.setattr(ForecastRun, "advance", counted)
    live = engine("easy")
    live.forecasts.sliced = True
    first, _ = submit(live, request(cpus=32, limit=100), now=0)
    jobs = [submit(live, request(cpus=32, limit=100 + i), now=0)[0] for i in range(6)]
    assert live.forecasts.prediction(jobs[-1].id, 0) == (0, None)  # nothing finished yet
    assert steps == [1]
    assert live.forecasts.under_way
    assert live.forecasts.predictions(0) == (0, {})
    assert live.forecasts.prediction(jobs[-1].id, 0) == (0, None)
    assert steps == [1]  # the reads left the run under way alone
    while not live.forecasts.advance(None):  # the writer's slices
        pass
    at, predicted = live.forecasts.predictions(0)
    assert at == 0
    assert set(predicted) == {j.id for j in jobs}
    for job in jobs:
        assert live.forecasts.prediction(job.id, 0) == (0, predicted[job.id])
    assert live.forecasts.prediction(first.id, 0) == (0, None)  # it runs: no prediction
    submit(live, request(cpus=8, limit=10), now=0)  # a change: the next read starts a run
    live.forecasts.prediction(jobs[0].id, 0)
    assert len(steps) == 3
    assert live.forecasts.under_way


def test_a_forecast_stops_at_its_horizon_and_the_answer_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A forecast predicts the first FORECAST_HORIZON starts (a deep queue on a large
    cluster would take minutes): a job behind them gets no prediction and an answer
    that says why; one within gets its prediction."""
    from berth.service.planning import forecasts

    monkeypatch.setattr(forecasts, "FORECAST_HORIZON", 2)
    live = engine("easy")
    submit(live, request(cpus=32, limit=100), now=0)
    queued = [submit(live, request(cpus=32, limit=100), now=0)[0] for _ in range(4)]
    _, predicted = live.forecasts.predictions(0)
    assert predicted == {queued[0].id: 100, queued[1].id: 200}
    near = start_info(live, queued[1].id, 0)
    assert near["predicted_start"] == 200
    assert "horizon" not in str(near["based_on"])
    far = start_info(live, queued[3].id, 0)
    assert far["predicted_start"] is None
    assert "beyond its horizon (it predicts the first 2 starts)" in str(far["based_on"])


def test_what_if_leaves_the_live_state_alone() -> None:
    live = engine()
    submit(live, request(cpus=32, limit=100), now=0)
    version = live.outbox.version
    answer = what_if(live, request(cpus=16, limit=10), 0)
    assert answer == {"accepted": True, "reason": answer["reason"], "predicted_start": 100,
                      "guaranteed_start": 100, "guaranteed_end": None}  # fmt: skip
    assert live.outbox.version == version
    assert len(live.jobs) == 1
    assert not live.pending


def test_a_what_if_under_easy_forecasts_only_until_the_job_starts_or_the_horizon(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Under EASY the what-if's start is a forecast of a trial copy, driven until the
    job asked about starts, or until the forecast's horizon (then none, as the start
    query): a deep queue would otherwise be driven to its end inside one read."""
    from berth.core.forecast import ForecastRun

    live = engine("easy")
    submit(live, request(cpus=16, limit=100), now=0)  # runs until 100
    submit(live, request(cpus=16, limit=1000), now=0)  # runs until 1000
    for _ in range(2):  # the head is reserved at 1000
        submit(live, request(cpus=32, limit=100), now=0)
    passes: list[int] = []
    one_pass = ForecastRun._pass

    def counted(run: ForecastRun, moment: int, stop: object) -> bool:
        passes.append(moment)
        return one_pass(run, moment, stop)  # type: ignore[arg-type]

    monkeypatch.setattr(ForecastRun, "_pass", counted)
    backfilled = what_if(live, request(cpus=16, limit=50), 0)
    assert backfilled["predicted_start"] == 100  # beside the head's reservation
    assert backfilled["guaranteed_start"] is None
    assert passes == [0, 100]  # driven no further than its start
    last = what_if(live, request(cpus=32, limit=10), 0)
    assert last["predicted_start"] == 1200  # behind both 32-cpu jobs
    live.forecasts.horizon = 1
    passes.clear()
    beyond = what_if(live, request(cpus=32, limit=10), 0)
    assert beyond["accepted"] is True
    assert beyond["predicted_start"] is None
    assert max(passes) < 1200


def test_a_what_ifs_forecast_in_slices_is_the_whole_one_while_the_live_goes_on() -> None:
    """The daemon drives a what-if's forecast in slices, and the writer goes on between
    them: the answer is the one the whole forecast gives of the state it was asked in."""
    live = engine("easy")
    submit(live, request(cpus=16, limit=100), now=0)
    submit(live, request(cpus=16, limit=1000), now=0)
    for limit in (100, 200, 300):
        submit(live, request(cpus=32, limit=limit), now=0)
    asked = request(cpus=32, limit=10)
    whole = what_if(live, asked, 0)
    assert whole["predicted_start"] == 1600
    begun = begin_what_if(live, asked, 0)
    assert isinstance(begun, WhatIfForecast)
    slices = 1
    while not begun.advance(EveryFewQuestions(1)):
        slices += 1
        submit(live, request(cpus=32, limit=50), now=0)  # the live queue grows meanwhile
    assert slices > 1
    assert begun.answer == whole


def test_a_what_if_under_conservative_answers_its_reservation_and_leaves_the_plan() -> None:
    """Under a policy that reserves every job the what-if's start is the reservation
    the trial copy makes (what the start query would then answer): no forecast."""
    live = engine()
    submit(live, request(cpus=32, limit=100), now=0)
    second, _ = submit(live, request(cpus=32, limit=100), now=0)
    planned = {i: r.planned_start for i, r in live.jobs.items()}
    answer = what_if(live, request(cpus=32, limit=10), 0)
    assert answer["predicted_start"] == answer["guaranteed_start"] == 200
    assert {i: r.planned_start for i, r in live.jobs.items()} == planned
    fits_now = what_if(live, request(cpus=1, limit=10), 0)
    assert fits_now["predicted_start"] == 200  # no cpu is free before the second job ends
    assert second.planned_start == 100
