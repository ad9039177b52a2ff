"""switchyard inside Dask workers (python3-distributed): a LocalCluster of 2 worker processes, each
loading the model once on its own device (device_policy: local_rank), maps the partitions of a
data set through Predictor.predict; a worker killed mid-job changes nothing in the results."""

import os
import signal
import time

import numpy
import pytest

import switchyard
import switchyard.workers

distributed = pytest.importorskip("distributed", reason="python3-distributed is not installed")

CONFIG = {"device_policy": "local_rank"}


def slow_partition(x, model, config, seconds):
    """predict_partition after a pause, so that a worker can be killed while it holds tasks."""
    time.sleep(seconds)
    return switchyard.workers.predict_partition(x, model, config)


def cache_info():
    info = switchyard.workers._cached.cache_info()
    return info.hits, info.misses


@pytest.fixture
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=40) as local:
        with distributed.Client(local) as client:
            client.register_worker_plugin(switchyard.workers.LocalRankPlugin())
            yield client


def one_process(parts, checkpoint):
    """The same partitions predicted in this process, for comparison."""
    return numpy.concatenate(
        [switchyard.workers.predict_partition(p, str(checkpoint), CONFIG) for p in parts])


def test_partitions_on_two_workers_equal_one_process(cluster, trained, digits_data):
    checkpoint, _ = trained
    x, _ = digits_data
    parts = numpy.array_split(x, 8)
    futures = cluster.map(switchyard.workers.predict_partition, parts, model=str(checkpoint),
                          config=CONFIG, pure=False)
    got = numpy.concatenate(cluster.gather(futures))
    numpy.testing.assert_array_equal(got, one_process(parts, checkpoint))
    # Each worker took its own local rank, loaded the model once and reused it for every task.
    devices = cluster.run(switchyard.workers.process_device, str(checkpoint), CONFIG)
    assert sorted(rank for rank, _, _ in devices.values()) == ["0", "1"]
    for hits, misses in cluster.run(cache_info).values():
        assert misses == 1
    assert sum(hits for hits, _ in cluster.run(cache_info).values()) >= 8


def test_a_worker_killed_mid_job_still_gives_identical_results(cluster, trained, digits_data):
    checkpoint, _ = trained
    x, _ = digits_data
    parts = numpy.array_split(x, 8)
    futures = cluster.map(slow_partition, parts, model=str(checkpoint), config=CONFIG,
                          seconds=0.5, pure=False)
    # Kill one worker process once the job is under way (some results may already be on it).
    distributed.wait(futures, return_when="FIRST_COMPLETED")
    pids = cluster.run(os.getpid)
    victim = sorted(pids)[0]
    os.kill(pids[victim], signal.SIGKILL)
    got = numpy.concatenate(cluster.gather(futures))
    numpy.testing.assert_array_equal(got, one_process(parts, checkpoint))
    # The nanny restarted the worker: two workers again, and nothing was lost.
    cluster.wait_for_workers(2, timeout=60)
    after = cluster.run(os.getpid)
    assert len(after) == 2 and pids[victim] not in after.values()
