"""Uncertainty bands: seeded draws of a profile folder, run as an ordinary sweep."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.catalog.profile import read_profile_info, write_profile
from fastsched.sweep import uncertainty_bands
from fastsched.sweep.uncertainty import draw_profiles


def _files(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*.csv"))}


@pytest.fixture
def profiles(tmp_path):
    src = tmp_path / "profiles"
    write_profile("cifar10", ["t4", "v100"], src)
    write_profile("bert", ["t4"], src)
    return src


def test_draws_are_seeded_and_the_central_folder_is_the_profile(profiles, tmp_path):
    a = draw_profiles(profiles, tmp_path / "a", 3, seed=7)
    b = draw_profiles(profiles, tmp_path / "b", 3, seed=7)
    c = draw_profiles(profiles, tmp_path / "c", 3, seed=8)
    assert [f.name for f in a] == ["central", "draw-0", "draw-1", "draw-2"]
    assert all(_files(x) == _files(y) for x, y in zip(a, b, strict=True))
    assert _files(a[1]) != _files(c[1]) and _files(a[1]) != _files(a[2])
    assert _files(a[0]) == _files(profiles)  # every z = 0: the profiles themselves


def test_without_ranges_every_draw_is_the_central_one(profiles, tmp_path):
    folders = draw_profiles(profiles, tmp_path / "d", 2, noise=False, step_sigma={"datasheet": 0.0})
    assert _files(folders[1]) == _files(folders[0]) == _files(folders[2])


def test_the_noise_draw_moves_the_statistics_and_the_step_draw_the_times(profiles, tmp_path):
    only_noise = draw_profiles(profiles, tmp_path / "n", 1, step_sigma={"datasheet": 0.0})
    only_step = draw_profiles(profiles, tmp_path / "s", 1, noise=False)
    central, n, s = _files(only_noise[0]), _files(only_noise[1]), _files(only_step[1])
    val = [k for k in central if "validation" in k]
    place = [k for k in central if "placements" in k]
    assert all(n[k] == central[k] for k in place) and any(n[k] != central[k] for k in val)
    assert all(s[k] == central[k] for k in val) and all(s[k] != central[k] for k in place)
    info = read_profile_info(only_step[1] / "cifar10")
    assert info["types"]["aws"]["mode"] == "bootstrap"  # a drawn profile records its adjusted prices


def test_measured_applications_are_used_as_they_are(profiles, tmp_path):
    measured = profiles / "mine"
    measured.mkdir()
    (measured / "placements.csv").write_text("placement,local_bsz,step_time,sync_time\n1,8,0.1,0\n")
    folders = draw_profiles(profiles, tmp_path / "m", 1)
    assert (folders[1] / "mine" / "placements.csv").read_text() == (measured / "placements.csv").read_text()


def test_bands_come_from_one_run_per_draw_and_policy(profiles, tmp_path):
    wl = tmp_path / "w.csv"
    wl.write_text("name,time,application,num_replicas,batch_size\nj0,0,cifar10,1,128\nj1,60,bert,1,12\n")
    r = uncertainty_bands(wl, profiles, policies=["tiresias", "fifo"], draws=3, seed=1, cluster="1xt4",
                          max_time=10 * 86400)  # fmt: skip
    assert len(r.rows) == 2 * (3 + 1) and {row["draw"] for row in r.rows} == {-1, 0, 1, 2}
    for p in ("tiresias", "fifo"):
        b = r.bands[p]
        assert b.draws == 3 and b.p10 <= b.median <= b.p90
        jcts = [row["avg_jct_s"] for row in r.rows if row["policy"] == p and row["draw"] >= 0]
        assert min(jcts) <= b.median <= max(jcts)
    assert set(r.order) == {"tiresias", "fifo"} and 0.0 <= r.order_holds <= 1.0
    # the same seed gives the same bands
    again = uncertainty_bands(wl, profiles, policies=["tiresias", "fifo"], draws=3, seed=1, cluster="1xt4",
                              max_time=10 * 86400)  # fmt: skip
    assert again.bands == r.bands


@pytest.mark.parametrize(
    "kwargs, err, match",
    [
        ({"draws": -1}, ValueError, "draws"),
        ({"draws": 1.5}, ValueError, "draws"),
        ({"seed": -1}, ValueError, "seed"),
        ({"step_sigma": {"bootstrap": -1.0}}, ValueError, "step_sigma"),
    ],
)
def test_bad_arguments_name_the_argument(profiles, tmp_path, kwargs, err, match):
    with pytest.raises(err, match=match):
        draw_profiles(profiles, tmp_path / "x", **{"draws": 1, **kwargs})


def test_a_folder_without_profiles_is_refused(tmp_path):
    (tmp_path / "empty" / "app").mkdir(parents=True)
    with pytest.raises(ValueError, match="profile.json"):
        draw_profiles(tmp_path / "empty", tmp_path / "out", 1)
    with pytest.raises(FileNotFoundError):
        draw_profiles(tmp_path / "missing", tmp_path / "out", 1)


def _noise(folder, app):
    return read_profile_info(folder / app)["spec"]["noise_scale"]


@pytest.fixture
def vision(tmp_path):
    src = tmp_path / "vision"
    for app in ("cifar10", "imagenet", "bert"):
        write_profile(app, ["t4"], src)
    return src


def test_a_prior_groups_members_move_together_and_apart_per_application(vision, tmp_path):
    central = {a: _noise(vision, a) for a in ("cifar10", "imagenet", "bert")}
    grouped = draw_profiles(vision, tmp_path / "g", 4, seed=3, step_sigma={"datasheet": 0.0})
    apart = draw_profiles(vision, tmp_path / "a", 4, seed=3, step_sigma={"datasheet": 0.0}, noise_by="application")

    def factor(folder, app):
        return _noise(folder, app)[1] / central[app][1]

    for f in grouped[1:]:  # cifar10 and imagenet share the vision prior: one draw moves both alike
        assert factor(f, "cifar10") == pytest.approx(factor(f, "imagenet"), rel=1e-9)
    assert any(factor(f, "bert") != pytest.approx(factor(f, "cifar10")) for f in grouped[1:])
    assert any(factor(f, "cifar10") != pytest.approx(factor(f, "imagenet")) for f in apart[1:])


@given(z=st.floats(-8.0, 8.0), b=st.floats(0.01, 2.0))
@settings(max_examples=200, deadline=None)
def test_the_laplace_step_error_is_laplaces_quantile_of_the_same_normal(z, b):
    from scipy.stats import laplace, norm

    from fastsched.sweep.uncertainty import _step_log

    # the upper tail through the survival functions, where 1 - cdf would lose the digits
    ref = laplace.ppf(norm.cdf(z), scale=b) if z <= 0 else laplace.isf(norm.sf(z), scale=b)
    assert _step_log(z, b, "laplace") == pytest.approx(ref, rel=1e-7, abs=1e-9)
    assert _step_log(z, b, "normal") == pytest.approx(b * z)


def test_the_step_draws_hold_the_validated_median_and_a_laplace_tail():
    from fastsched.sweep.uncertainty import STEP_LOG_ERROR, STEP_SCALE, _step_log

    z = np.random.default_rng(0).standard_normal(200_000)
    x = np.abs([_step_log(v, STEP_SCALE["bootstrap"], "laplace") for v in z])
    assert np.median(x) == pytest.approx(STEP_LOG_ERROR["bootstrap"], rel=0.02)
    assert np.percentile(x, 90) / np.median(x) == pytest.approx(np.log(10) / np.log(2), rel=0.03)


@pytest.mark.parametrize("kwargs, match", [({"step_dist": "cauchy"}, "step_dist"), ({"noise_by": "app"}, "noise_by")])
def test_bad_draw_laws_name_the_argument(profiles, tmp_path, kwargs, match):
    with pytest.raises(ValueError, match=match):
        draw_profiles(profiles, tmp_path / "x", 1, **kwargs)


def test_a_step_draw_scales_every_time_of_a_bootstrap_by_one_factor(tmp_path):
    # The step-time error is one factor per (application, type) cell: each time term of the
    # profile's step model moves by it, the ring latency and the shared node path included.
    from fastsched.catalog.bootstrap import Bootstrap
    from fastsched.catalog.oracle import StepAdjust

    adjust = StepAdjust(gpu_scale=1.2, host_scale=0.8, node_sync_s=0.004, hop_latency_s=0.002)
    boot = Bootstrap(adjust, 0.05, 4, None, 0.0, 0.1, False, 0.4)
    src = tmp_path / "p"
    write_profile("cifar10", ["t4"], src, bootstraps={"t4": boot})
    drawn = draw_profiles(src, tmp_path / "d", 1, seed=3, noise=False)[1]
    got = read_profile_info(drawn / "cifar10")["types"]["aws"]
    ratios = [
        got["adjust"][k] / getattr(adjust, k) for k in ("gpu_scale", "host_scale", "node_sync_s", "hop_latency_s")
    ]
    ratios.append(got["floor_s"] / 0.05)
    assert ratios[0] != pytest.approx(1.0)  # the draw moved the cell
    assert ratios == pytest.approx([ratios[0]] * len(ratios), rel=1e-12)
