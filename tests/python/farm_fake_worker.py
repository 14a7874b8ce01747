"""A farm worker of another protocol version or build, as far as its liveliness token says.

Usage: python farm_fake_worker.py <router endpoint> <protocol> <build>
Announces `coevolve/farm/workers/<id>/1/<protocol>/<build>` and runs until killed; it never
answers a job, so an orchestrator that used it would wait for nothing.
"""
import json
import sys
import time

import zenoh

endpoint, protocol, build = sys.argv[1:4]
config = zenoh.Config()
config.insert_json5("mode", json.dumps("client"))
config.insert_json5("connect/endpoints", json.dumps([endpoint]))
config.insert_json5("connect/timeout_ms", "-1")
config.insert_json5("scouting/multicast/enabled", "false")
session = zenoh.open(config)
worker_id = str(session.zid())
token = session.liveliness().declare_token(
    f"coevolve/farm/workers/{worker_id}/1/{protocol}/{build}"
)
print("ready", flush=True)
while True:
    time.sleep(3600)
