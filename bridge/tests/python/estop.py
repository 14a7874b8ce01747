"""Reads a robot's joint state and triggers its e-stop, following bridge/PROTOCOL.md only.

Usage: python estop.py <endpoint> <robot_id>
Prints one JSON line: the joint state it read, and the controller's mode after the e-stop.
Exits non-zero when any step fails.
"""
import json
import struct
import sys
import time

import zenoh

MAGIC = b"CE"
VERSION = 2
KIND_JOINT_STATE = 1
KIND_ESTOP = 21
KIND_POLICY_STATUS = 23


class Reader:
    def __init__(self, data, kind):
        if len(data) < 4 or data[:2] != MAGIC or data[2] != VERSION or data[3] != kind:
            raise ValueError("bad header")
        self.data, self.at = data, 4

    def take(self, fmt):
        size = struct.calcsize(fmt)
        if self.at + size > len(self.data):
            raise ValueError("truncated")
        value = struct.unpack_from(fmt, self.data, self.at)
        self.at += size
        return value

    def u64(self):
        return self.take("<Q")[0]

    def f64(self):
        return self.take("<d")[0]

    def f64s(self):
        (n,) = self.take("<I")
        return list(self.take("<%dd" % n)) if n else []

    def text(self):
        (n,) = self.take("<I")
        raw = self.data[self.at:self.at + n]
        if len(raw) != n:
            raise ValueError("truncated")
        self.at += n
        return raw.decode("utf-8")

    def finish(self):
        if self.at != len(self.data):
            raise ValueError("trailing bytes")


def decode_joint_state(data):
    r = Reader(data, KIND_JOINT_STATE)
    msg = {"seq": r.u64(), "stamp_ns": r.u64(), "q_rad": r.f64s(), "qd_rad_s": r.f64s(),
           "gripper_opening": r.f64()}
    r.finish()
    return msg


def decode_status_mode(data):
    r = Reader(data, KIND_POLICY_STATUS)
    r.u64()  # stamp_ns
    (mode,) = r.take("<B")
    return mode


def encode_estop(engage, reason):
    text = reason.encode("utf-8")
    return MAGIC + bytes([VERSION, KIND_ESTOP, 1 if engage else 0]) + struct.pack("<I", len(text)) + text


def main():
    endpoint, robot_id = sys.argv[1], sys.argv[2]
    conf = zenoh.Config()
    conf.insert_json5("mode", '"peer"')
    conf.insert_json5("connect/endpoints", json.dumps([endpoint]))
    conf.insert_json5("scouting/multicast/enabled", "false")
    session = zenoh.open(conf)
    base = "coevolve/%s" % robot_id
    states = session.declare_subscriber(base + "/state/joints")
    statuses = session.declare_subscriber(base + "/policy/status")
    state = None
    deadline = time.time() + 20
    while state is None and time.time() < deadline:
        sample = states.try_recv()
        if sample is None:
            time.sleep(0.01)
            continue
        state = decode_joint_state(bytes(sample.payload.to_bytes()))
    if state is None:
        sys.exit("no joint state within 20 s")
    mode = None
    deadline = time.time() + 20
    while mode != 4 and time.time() < deadline:
        session.put(base + "/estop", encode_estop(True, "python estop.py"))
        end = time.time() + 0.6
        while time.time() < end:
            sample = statuses.try_recv()
            if sample is None:
                time.sleep(0.01)
                continue
            mode = decode_status_mode(bytes(sample.payload.to_bytes()))
    print(json.dumps({"joint_state": state, "mode_after_estop": mode}))
    try:
        session.close()
    except Exception:  # closing may time out while peers go away; the result is printed
        pass
    sys.exit(0 if mode == 4 else 1)


if __name__ == "__main__":
    main()
