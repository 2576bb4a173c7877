"""The search's ZB-H1 step time against the simulated schedule (:mod:`fastsched.costmodel.schedules`)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.costmodel._search import zb_h1_saving
from fastsched.costmodel.cluster import Cluster
from fastsched.costmodel.schedules import pipeline_time
from fastsched.costmodel.search import Transformer, search

times = st.floats(0.1, 5.0)


def _closed_form(fwd, wgrad, m):
    # 1F1B's time (B = W = wgrad per stage), less what ZB-H1's deferred weight gradients save
    xs = [f + 2.0 * w for f, w in zip(fwd, wgrad, strict=True)]
    return sum(xs) + (m - 1) * max(xs) - zb_h1_saving(len(xs), m, min(wgrad), min(fwd))


def _simulated(fwd, wgrad, m):
    bwd = [2.0 * w for w in wgrad]
    return pipeline_time(fwd, bwd, [0.0] * len(fwd), m, schedule="zb-h1", wgrad_fraction=0.5).total


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 8), st.integers(1, 24), times, times)
def test_equal_stages_are_exact(p, m, f, w):
    fwd, wgrad = [f] * p, [w] * p
    assert _closed_form(fwd, wgrad, m) == pytest.approx(_simulated(fwd, wgrad, m), rel=1e-9, abs=1e-9)


@settings(max_examples=80, deadline=None)
@given(st.integers(2, 8), st.integers(1, 24), st.data())
def test_unequal_stages_are_never_faster_than_the_schedule(p, m, data):
    fwd = data.draw(st.lists(times, min_size=p, max_size=p))
    ratio = data.draw(st.floats(0.5, 2.0))
    wgrad = [f * ratio for f in fwd]  # a program's backward is one ratio of its forward
    if data.draw(st.booleans()):  # the transformer's shape: equal stages, the logits on the last
        logits = data.draw(st.floats(0.0, 30.0))
        fwd = [fwd[0]] * (p - 1) + [fwd[0] + logits]
        wgrad = [wgrad[0]] * (p - 1) + [wgrad[0] + logits]
    assert _closed_form(fwd, wgrad, m) >= _simulated(fwd, wgrad, m) * (1 - 1e-12)


def test_a_heavy_vocabulary_leaves_no_negative_bubble():
    # The logits' time was subtracted from every bubble slot: steps below their own compute.
    model = Transformer(layers=4, hidden=512, heads=8, seq=512, vocab=32000, global_batch=3)
    rows = search(model, Cluster(gpus=8)).rows()
    zb = [r for r in rows if r["schedule"] == "zb-h1" and r["pp"] > 1]
    assert zb and min(r["bubble_ms"] for r in zb) >= -1e-9
