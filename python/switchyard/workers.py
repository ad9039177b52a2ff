"""switchyard inside the worker processes of a distributed engine (Dask, and the same pattern in
Spark UDFs and Ray tasks): each worker process loads a model once, on its own device, and maps
partitions of a data set through it.

    client.register_worker_plugin(switchyard.workers.LocalRankPlugin())  # Dask
    futures = client.map(switchyard.workers.predict_partition, parts,
                         model="model.ckpt", config={"device_policy": "local_rank"})

A worker's device comes from `device_policy: local_rank`: the worker's index reaches switchyard
through SWITCHYARD_LOCAL_RANK, so worker i takes device i (modulo the devices there are) of the
first usable backend, and a worker without a GPU falls back to the CPU per the configuration.
"""

import functools
import json
import os

import switchyard


def _key(config):
    return json.dumps(config, sort_keys=True) if isinstance(config, dict) else config


@functools.lru_cache(maxsize=8)
def _cached(model, config_key, device, rank):
    config = json.loads(config_key) if isinstance(config_key, str) and config_key.startswith(
        "{") else config_key
    return switchyard.Predictor(model, config=config, device=device)


def cached_predictor(model, config=None, device="auto"):
    """The Predictor of `model` for this process, loaded on first use and reused by every later
    task the process runs (per model, configuration, device and local rank)."""
    rank = os.environ.get("SWITCHYARD_LOCAL_RANK", "")
    return _cached(os.fspath(model), _key(config), device, rank)


def predict_partition(x, model, config=None, device="auto", batch_size=256):
    """Predictions for one partition `x` (samples x input_width) with this process's cached
    Predictor: what a Dask task, a Spark pandas UDF or a Ray task calls per partition."""
    return cached_predictor(model, config, device).predict(x, batch_size=batch_size)


def process_device(model, config=None, device="auto"):
    """(local rank, device id, pid) of this process's cached Predictor: which device a worker took."""
    predictor = cached_predictor(model, config, device)
    return os.environ.get("SWITCHYARD_LOCAL_RANK", ""), predictor.device, os.getpid()


try:  # The Dask plugin, where Dask is installed.
    from distributed import WorkerPlugin as _WorkerPlugin
except ImportError:  # pragma: no cover - Dask is optional
    _WorkerPlugin = object


class LocalRankPlugin(_WorkerPlugin):
    """A Dask worker plugin that gives each worker of a LocalCluster its index as
    SWITCHYARD_LOCAL_RANK (the worker's name, 0 .. n-1), before any task runs, and again when a
    worker is restarted after a failure."""

    name = "switchyard-local-rank"

    def setup(self, worker):
        os.environ["SWITCHYARD_LOCAL_RANK"] = str(worker.name)
