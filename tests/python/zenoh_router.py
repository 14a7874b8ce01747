"""A zenoh router that is not ours: the eclipse-zenoh Python package in router mode.

Usage: python zenoh_router.py <endpoint>
Prints `ready` once it listens, then runs until killed.
"""
import json
import sys
import time

import zenoh

config = zenoh.Config()
config.insert_json5("mode", json.dumps("router"))
config.insert_json5("listen/endpoints", json.dumps([sys.argv[1]]))
config.insert_json5("scouting/multicast/enabled", "false")
session = zenoh.open(config)
print("ready", flush=True)
while True:
    time.sleep(3600)
