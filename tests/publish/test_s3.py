"""Publishing to and streaming from S3, for real, against moto's S3 server on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from taskmint.consumer import workspace
from taskmint.errors import DatasetError
from taskmint.publish import ShardPolicy, load_tasks, publish, retract, verify_manifest

from .conftest import variants

moto_server = pytest.importorskip("moto.server", reason="moto[server] is a dev dependency")
s3fs = pytest.importorskip("s3fs", reason="s3fs is a dev dependency")


@pytest.fixture(scope="module")
def s3() -> Iterator[dict[str, Any]]:
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    options = {
        "key": "testing",
        "secret": "testing",
        "client_kwargs": {"endpoint_url": f"http://{host}:{port}", "region_name": "us-east-1"},
    }
    import boto3

    boto3.client(
        "s3",
        endpoint_url=f"http://{host}:{port}",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        region_name="us-east-1",
    ).create_bucket(Bucket="taskmint-bucket")
    try:
        yield options
    finally:
        server.stop()


def test_publish_and_stream_over_s3(s3, tiny_tasks, tiny_seed, tiny_env, tmp_path) -> None:
    seeds = [(tiny_seed, tiny_env.env_id, tiny_env.python_version)]
    root = "s3://taskmint-bucket/datasets"
    many = variants(tiny_tasks, 60)
    policy = ShardPolicy(max_rows=20, divisor=4)
    v1 = publish(many, seeds, root=root, name="d", policy=policy, storage_options=s3)
    assert v1.path == "s3://taskmint-bucket/datasets/d/v0001" and v1.created
    fs = s3fs.S3FileSystem(**s3)
    assert fs.cat_file("taskmint-bucket/datasets/d/LATEST") == b"v0001\n"

    stream = load_tasks(f"{root}/d", storage_options=s3)
    assert stream.num_shards == 4
    assert sorted(t.instance_id for t in stream) == sorted(t.instance_id for t in many)
    assert next(iter(stream)).origin == v1.path
    half = [t.instance_id for t in stream.split_by_node(1, 2)]
    assert 0 < len(half) < len(many)
    assert verify_manifest(f"{root}/d", storage_options=s3)["tasks"] == 60

    v2 = retract(root, "d", {many[0].instance_id: "test"}, storage_options=s3)
    assert v2.version == "v0002"
    assert len(list(load_tasks(f"{root}/d", storage_options=s3))) == 59
    assert len(list(load_tasks(f"{root}/d", "v0001", storage_options=s3))) == 60

    # the workspace of a task streamed from S3 comes out of the S3 environments config
    task = next(iter(stream))
    ws = workspace(task, tmp_path / "ws", cache_dir=tmp_path / "cache", storage_options=s3)
    assert sorted(p.name for p in ws.iterdir())

    # a corrupt shard on S3 is named by its URL
    shard = stream.ref.shards()[0]["path"]
    key = f"taskmint-bucket/datasets/d/v0001/{shard}"
    data = fs.cat_file(key)
    fs.pipe_file(key, data[:-8] + b"corrupt!")
    with pytest.raises(DatasetError, match=rf"s3://{key} does not match its sha256"):
        list(load_tasks(f"{root}/d", "v0001", storage_options=s3))
