"""A prior for the gradient-noise scale per model family: a range with its sources, not one point.

A job without measured statistics needs the simple noise scale ``B_noise = tr(Sigma) / |G|^2``
(samples) over its training, which sets the statistical efficiency ``(B_noise + B0) / (B_noise
+ B)`` of a total batch ``B`` (McCandlish et al. 2018, *An Empirical Model of Large-Batch
Training*, arXiv:1812.06162). The oracle's applications carry it as ``(start, end)``: the scale
grows geometrically from the first epoch's value to the last's. This module states, per model
family, a **central** pair and a **low** and **high** pair, read as the 10th and 90th
percentiles of a log-normal uncertainty (one draw moves start and end together). Every number
below was written down with its source before any was scored, and none was chosen or adjusted
on the Sia or Pollux validation files (``benchmarks/results/oracle.md``, sixth session).

Facts used, with their sources:

* McCandlish et al. 2018 (abstract and section 3): the largest useful batch of ImageNet
  training reaches "tens of thousands" of samples; the noise scale predicts it (the critical
  batch is about the noise scale); the noise scale grows as the loss falls, by about an order of
  magnitude or more over a run.
* Goyal et al. 2017 (*Accurate, Large Minibatch SGD*, arXiv:1706.02677): ResNet-50 trained at a
  batch of 8,192 reaches the accuracy of the 256 baseline, so the end-of-training critical
  batch of ImageNet is at least of that order.
* Kaplan et al. 2020 (*Scaling Laws for Neural Language Models*, arXiv:2001.08361, eq. 1.4):
  ``B_crit(L) = B* / L^(1/alpha_B)`` tokens, ``B* = 2e8``, ``alpha_B = 0.21``, for the loss
  ``L`` in nats.
* Devlin et al. 2019 (*BERT*, arXiv:1810.04805, section 4 and appendix A.3): fine-tuning runs
  2-4 epochs at batches of 16 or 32.
* He et al. 2017 (*Neural Collaborative Filtering*): NeuMF trained at batches of 128 to 1,024;
  recommendation benchmarks train the same model at far larger batches (MLPerf's NCF), so the
  span is wide.

The choices (start, end in samples; low / central / high):

============== ===================== ===================== ===================== =========================
family         low                   central               high                  from
============== ===================== ===================== ===================== =========================
vision         (300, 3,000)          (1,000, 10,000)       (3,000, 30,000)       McCandlish; Goyal
language       (30, 300)             (100, 1,000)          (300, 3,000)          Devlin; McCandlish growth
speech         (100, 1,000)          (1,000, 10,000)       (10,000, 100,000)     vision's, widened
recommendation (1,000, 10,000)       (10,000, 100,000)     (100,000, 1,000,000)  He; a decade each way
decoder        Kaplan at B*/3        Kaplan, L 4 -> 2 nats Kaplan at 3 B*        Kaplan (eq. 1.4)
============== ===================== ===================== ===================== =========================

* **vision**: the end value 10^4 is ImageNet's critical batch of "tens of thousands" (upper
  reading, the high end 3 x 10^4) and Goyal's 8,192 (lower reading); the start is one order of
  magnitude below (McCandlish's growth over a run). The range, half a decade each way, is our
  judgement of the spread between image models and data sets (CIFAR-10's smaller images and
  classes are not measured separately in the sources above, so they share it).
* **language** (fine-tuning a pre-trained encoder): Devlin's batches of 16-32 over a few epochs
  put the start near 10^2; the end one order of magnitude above, as in McCandlish's language
  model. Kaplan's law is for pre-training loss and is not used here.
* **speech**: no published noise-scale measurement of a speech model was found; the prior
  borrows vision's centre and widens the range to a decade each way, saying so.
* **recommendation**: the centre in the (log) middle of the published training batches, a
  decade each way. (The catalogue's NCF trains at one fixed batch, where the noise scale does
  not change its progress.)
* **decoder**: Kaplan's ``B_crit`` at ``L`` = 4 nats (start) and 2 nats (end) over the
  sequence length, as :func:`fastsched.catalog.decoder_spec` sets it; the range scales ``B*``
  by 3 either way (Kaplan's fit gives no error bar; a factor of 3 is our judgement).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from fastsched.catalog.models import FAMILIES, ModelSpec, model_spec

__all__ = ["NoisePrior", "PRIORS", "DRAW_GROUPS", "draw_group", "noise_prior", "draw_noise_scale", "Z90"]

#: The standard normal's 90th percentile: low and high are the 10th and 90th percentiles.
Z90 = 1.2815515655446004


class NoisePrior(NamedTuple):
    """A family's gradient-noise prior: ``(start, end)`` samples at the 10th, 50th and 90th percentiles.

    Examples
    --------
    >>> p = noise_prior("cifar10")
    >>> p.family, p.central, p.low[1] < p.central[1] < p.high[1]
    ('vision', (1000.0, 10000.0), True)
    """

    family: str
    low: tuple
    central: tuple
    high: tuple
    source: str


#: Kaplan et al. 2020, eq. 1.4: ``B_crit(L) = B* / L^(1/alpha_B)`` tokens.
KAPLAN_B_STAR = 2e8
KAPLAN_ALPHA_B = 0.21
#: The decoder's loss at the start and end of the span the prior covers, nats.
DECODER_LOSS = (4.0, 2.0)

#: The non-decoder families' priors (samples; see the module docstring for each source).
PRIORS = {
    "vision": NoisePrior(
        "vision",
        (300.0, 3_000.0),
        (1_000.0, 10_000.0),
        (3_000.0, 30_000.0),
        "McCandlish et al. 2018 (ImageNet's critical batch: tens of thousands; growth over a run); "
        "Goyal et al. 2017 (ResNet-50 at 8,192)",
    ),  # fmt: skip
    "language": NoisePrior(
        "language",
        (30.0, 300.0),
        (100.0, 1_000.0),
        (300.0, 3_000.0),
        "Devlin et al. 2019 (fine-tuning at 16-32); McCandlish et al. 2018 (growth over a run)",
    ),
    "speech": NoisePrior(
        "speech",
        (100.0, 1_000.0),
        (1_000.0, 10_000.0),
        (10_000.0, 100_000.0),
        "no published speech measurement: vision's centre, a decade each way",
    ),
    "recommendation": NoisePrior(
        "recommendation",
        (1_000.0, 10_000.0),
        (10_000.0, 100_000.0),
        (100_000.0, 1_000_000.0),
        "He et al. 2017 and MLPerf NCF training batches; a decade each way",
    ),  # fmt: skip
}


#: Families whose ranges share one source draw together (:func:`draw_group`): speech's prior is
#: vision's centre widened, so the uncertainty of that centre is one for both.
DRAW_GROUPS = {"vision": "vision", "speech": "vision", "language": "language", "recommendation": "recommendation",
               "decoder": "decoder"}  # fmt: skip


def draw_group(model) -> str:
    """Return the group whose one draw moves ``model``'s noise scale (:data:`DRAW_GROUPS`).

    A family's range states the uncertainty of one number that prices every member of the
    family (and speech borrows vision's), so an uncertainty draw moves them together rather
    than independently per application.

    Examples
    --------
    >>> draw_group("cifar10"), draw_group("deepspeech2"), draw_group("bert")
    ('vision', 'vision', 'language')
    """
    m = model if isinstance(model, ModelSpec) else model_spec(model)
    if m.family not in DRAW_GROUPS:
        raise ValueError(f"model.family must be one of {list(FAMILIES)}, got {m.family!r}")
    return DRAW_GROUPS[m.family]


def _kaplan(seq, b_star) -> tuple:
    return tuple(b_star / loss ** (1.0 / KAPLAN_ALPHA_B) / seq for loss in DECODER_LOSS)


def noise_prior(model) -> NoisePrior:
    """Return the prior of ``model``'s family (a decoder's from Kaplan et al. 2020 at its sequence length).

    Parameters
    ----------
    model : str or ModelSpec
        A catalogued name or a spec (its ``family`` picks the prior).

    Examples
    --------
    >>> noise_prior("bert").central
    (100.0, 1000.0)
    >>> d = noise_prior("gpt-1.3b")  # Kaplan's B_crit at 4 and 2 nats over 2,048 tokens
    >>> round(d.central[0]), round(d.central[1]), d.family
    (133, 3599, 'decoder')
    """
    m = model if isinstance(model, ModelSpec) else model_spec(model)
    if m.family == "decoder":
        seq = m.transformer[3] if m.transformer is not None else 2048
        return NoisePrior("decoder", _kaplan(seq, KAPLAN_B_STAR / 3.0), _kaplan(seq, KAPLAN_B_STAR),
                          _kaplan(seq, KAPLAN_B_STAR * 3.0), "Kaplan et al. 2020, eq. 1.4")  # fmt: skip
    if m.family not in PRIORS:
        raise ValueError(f"model.family must be one of {list(FAMILIES)}, got {m.family!r}")
    return PRIORS[m.family]


def draw_noise_scale(prior: NoisePrior, z) -> tuple:
    """``(start, end)`` at the standard-normal quantile ``z`` of ``prior`` (0: central; +-Z90: high, low).

    Log-normal on each side of the centre: ``central x (high / central)^(z / Z90)`` above,
    ``central x (central / low)^(z / Z90)`` below, so the stated low and high are the 10th and
    90th percentiles even where the range is not symmetric.

    Examples
    --------
    >>> p = noise_prior("imagenet")
    >>> draw_noise_scale(p, 0.0) == p.central
    True
    >>> [round(x) for x in draw_noise_scale(p, Z90)], [round(x) for x in draw_noise_scale(p, -Z90)]
    ([3000, 30000], [300, 3000])
    """
    z = float(z)
    if not math.isfinite(z):
        raise ValueError(f"z must be a finite number, got {z!r}")
    side = prior.high if z >= 0 else prior.low
    out = []
    for c, s in zip(prior.central, side, strict=True):
        out.append(float(c * np.exp(abs(z) / Z90 * np.log(s / c))))
    return tuple(out)
