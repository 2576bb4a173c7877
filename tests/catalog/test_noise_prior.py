"""The gradient-noise prior: stated ranges, the catalogue's defaults at their centre, seeded draws."""

import math

import pytest

from fastsched.catalog.models import STUDY_MODELS, model_spec
from fastsched.catalog.noise_prior import PRIORS, Z90, draw_noise_scale, noise_prior


@pytest.mark.parametrize("name", sorted(STUDY_MODELS) + ["gpt-125m", "gpt-13b", "llama-70b"])
def test_the_catalogue_defaults_are_the_prior_centre(name):
    m = model_spec(name)
    assert m.noise_scale == pytest.approx(noise_prior(m).central, rel=1e-12)


@pytest.mark.parametrize("family", sorted(PRIORS) + ["decoder"])
def test_every_range_brackets_its_centre_and_names_a_source(family):
    p = noise_prior("gpt-1.3b") if family == "decoder" else PRIORS[family]
    for lo, c, hi in zip(p.low, p.central, p.high, strict=True):
        assert 0 < lo < c < hi
    assert p.central[0] < p.central[1]  # the noise scale grows as the loss falls
    assert p.source.strip()


def test_decoders_follow_kaplan_at_their_sequence_length():
    short, long = noise_prior("gpt-1.3b"), noise_prior("llama-70b")  # 2,048 and 4,096 tokens
    assert long.central[0] * 2 == pytest.approx(short.central[0])
    # B_crit(L) = 2e8 / L^(1/0.21) tokens at L = 4 nats
    assert short.central[0] == pytest.approx(2e8 / 4.0 ** (1 / 0.21) / 2048)


def test_draws_are_log_normal_with_the_stated_percentiles():
    p = noise_prior("imagenet")
    assert draw_noise_scale(p, 0.0) == p.central
    assert draw_noise_scale(p, Z90) == pytest.approx(p.high)
    assert draw_noise_scale(p, -Z90) == pytest.approx(p.low)
    zs = [-3, -1, -0.1, 0.1, 1, 3]
    ends = [draw_noise_scale(p, z)[1] for z in zs]
    assert ends == sorted(ends)
    # halfway in z is halfway in log
    assert math.log(draw_noise_scale(p, Z90 / 2)[1]) == pytest.approx(
        0.5 * (math.log(p.central[1]) + math.log(p.high[1]))
    )
    with pytest.raises(ValueError, match="z"):
        draw_noise_scale(p, float("nan"))
