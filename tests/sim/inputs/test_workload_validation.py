"""One workload validation: a list of WorkloadJob given to simulate() meets the CSV reader's rules (issue 28.1)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.sim import WorkloadJob, read_workload, simulate
from fastsched.sim.inputs.workload import validate_workload

HEADER = "name,time,application,num_replicas,batch_size\n"


def test_duplicate_names_in_a_list_are_refused():
    # three jobs named "a" on one GPU all "finished" at 4190 s before: wrong results, silently
    jobs = [WorkloadJob("a", 10 * i, "cifar10", 1, 128) for i in range(3)]
    with pytest.raises(ValueError, match=r"jobs 0 and 1 have the same name 'a'"):
        simulate(jobs, policy="tiresias", nodes=1, gpus=1)


@pytest.mark.parametrize(
    ("fields", "error", "message"),
    [
        ({"time": -100}, ValueError, r"job 'j': time must be >= 0, got -100"),
        ({"time": math.nan}, ValueError, r"job 'j': time must be finite"),
        ({"time": math.inf}, ValueError, r"job 'j': time must be finite"),
        ({"time": 2.5}, ValueError, r"job 'j': time must be whole seconds"),
        ({"num_replicas": 0}, ValueError, r"job 'j': num_replicas must be >= 1, got 0"),
        ({"batch_size": 2**31}, ValueError, r"job 'j': batch_size must be <= 2147483647"),
        ({"batch_size": 12.0}, TypeError, r"job 'j': batch_size must be an integer"),
        ({"name": None}, TypeError, r"name must be a str, got None"),
        ({"name": " "}, ValueError, r"name must not be empty"),
        ({"application": ""}, ValueError, r"job 'j': application must not be empty"),
        ({"application": 3}, TypeError, r"job 'j': application must be a str"),
        ({"category": "elastic"}, ValueError, r"job 'j': category must be one of"),
        ({"time": True}, TypeError, r"job 'j': time must be a number"),
    ],
)
def test_bad_job_fields_are_refused_on_construction(fields, error, message):
    row = {"name": "j", "time": 0, "application": "cifar10", "num_replicas": 1, "batch_size": 128, **fields}
    with pytest.raises(error, match=message):
        WorkloadJob(**row)


def test_list_path_rejects_what_the_csv_reader_rejects(tmp_path):
    # the same bad rows through both paths: both refuse, naming the field
    rows = [("a", "-100", "time"), ("a", "nan", "time")]
    for name, time, field in rows:
        p = tmp_path / "w.csv"
        p.write_text(HEADER + f"{name},{time},cifar10,1,128\n")
        with pytest.raises(ValueError, match=field):
            read_workload(p)
        with pytest.raises(ValueError, match=field):
            WorkloadJob(name, float(time), "cifar10", 1, 128)
    p.write_text(HEADER + "a,0,cifar10,1,128\na,5,cifar10,1,128\n")
    with pytest.raises(ValueError, match="duplicate job name 'a'"):
        read_workload(p)
    with pytest.raises(ValueError, match="same name 'a'"):
        validate_workload([WorkloadJob("a", 0, "cifar10", 1, 128), WorkloadJob("a", 5, "cifar10", 1, 128)])


def test_not_a_list_of_jobs():
    with pytest.raises(TypeError, match="job 1 must be a WorkloadJob"):
        validate_workload([WorkloadJob("a", 0, "cifar10", 1, 128), ("b", 0, "cifar10", 1, 128)])
    with pytest.raises(ValueError, match="no jobs"):
        simulate([], policy="tiresias", nodes=1, gpus=1)


def test_whole_float_and_numpy_fields_become_ints():
    np = pytest.importorskip("numpy")
    job = WorkloadJob("a", 30.0, "cifar10", np.int64(2), np.int32(256))
    assert (job.time, job.num_replicas, job.batch_size) == (30, 2, 256)
    assert all(type(v) is int for v in (job.time, job.num_replicas, job.batch_size))


@settings(max_examples=60, deadline=None)
@given(
    time=st.one_of(st.integers(-10, 10), st.floats(allow_nan=True, allow_infinity=True, width=32)),
    replicas=st.integers(-2, 3),
)
def test_construction_agrees_with_the_csv_reader(tmp_path_factory, time, replicas):
    """Whatever the reader accepts (after rounding the time up), the constructor accepts, and vice versa."""
    p = tmp_path_factory.mktemp("w") / "w.csv"
    p.write_text(HEADER + f"a,{time!r},cifar10,{replicas},128\n")
    try:
        [read] = read_workload(p)
    except ValueError:
        read = None
    t = math.ceil(time) if isinstance(time, float) and math.isfinite(time) and time >= 0 else time
    try:
        built = WorkloadJob("a", t, "cifar10", replicas, 128)
    except (TypeError, ValueError):
        built = None
    assert read == built
