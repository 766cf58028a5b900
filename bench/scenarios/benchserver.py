"""The server the Python scenarios measure: a release binary on a copy of Config/ in a temporary directory."""

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import requests

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
CLIENT = "c0ffee00-1111-4a2b-8c3d-4e5f6a7b8c01"


@contextlib.contextmanager
def running(binary, port, settings, prefix):
    """Starts the server with `settings` as Config/portcullis.json; yields its base URL; stops it and deletes
    everything afterwards."""
    work = tempfile.mkdtemp(prefix=prefix)
    config = os.path.join(work, "Config")
    shutil.copytree(os.path.join(REPO, "Config"), config)
    with open(os.path.join(config, "portcullis.json"), "w") as f:
        json.dump(settings, f)
    server = subprocess.Popen(
        [binary, "serve", "--config", config, "--data", os.path.join(work, "data"), "--keys", os.path.join(work, "keys"),
         "--port", str(port)], stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "server.log"), "w"))
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                if requests.get(f"{base}/health/ready", timeout=1).status_code == 200:
                    break
            except requests.RequestException:
                pass
            time.sleep(0.1)
        else:
            sys.exit("the server did not start")
        yield base
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)
