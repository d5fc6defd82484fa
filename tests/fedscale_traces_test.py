#!/usr/bin/env python3
"""fedscale_traces_test.py — scripts/fedscale-traces on synthetic pickles in FedScale's
layout (never a real trace): every value of the profile and availability CSVs, the choice
of clients (first N, seeded sample), NumPy scalars decoded without NumPy, and the refusals
(exit 2 with a message). Run by tests/cli/fedscale.sh (`make test`) with the scratch
folder as its argument; it leaves profile.csv and availability.csv there for the shell
test to feed to hetsim."""

import csv
import os
import pickle
import random
import subprocess
import sys
import types

top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
script = os.path.join(top, "scripts", "fedscale-traces")
tmp = sys.argv[1]
passed = failed = 0


def check(name, condition):
    global passed, failed
    if condition:
        passed += 1
        print("ok   " + name)
    else:
        failed += 1
        print("FAIL " + name)


def run(*args):
    return subprocess.run([sys.executable, script] + [str(a) for a in args], capture_output=True, text=True)


def path(name):
    return os.path.join(tmp, name)


def dump(name, obj):
    with open(path(name), "wb") as f:
        pickle.dump(obj, f)


def rows(name):
    with open(path(name)) as f:
        return [r for r in csv.reader(line for line in f if not line.startswith("#"))]


# FedScale's layout: ids 1..6 (inserted out of order), ms per sample and kbit/s
capacity = {3: {"computation": 40.0, "communication": 800.0},
            1: {"computation": 120.5, "communication": 1500.0},
            2: {"computation": 10, "communication": 64},
            6: {"computation": 75.25, "communication": 2048.5},
            4: {"computation": 33.0, "communication": 100.0},
            5: {"computation": 1.0, "communication": 12.0}}
dump("capacity.pkl", capacity)
F = 1.5e6


def expect_profile(cid):
    c = capacity[cid]
    return F / (3 * c["computation"] / 1000.0), c["communication"] * 1024 / 8

# ---------------------------------------------------------------- the profile

r = run("--capacity", path("capacity.pkl"), "--clients", 3, "--sample-flops", F, "--profile", path("profile.csv"))
check("first 3 clients: exit 0", r.returncode == 0)
got = rows("profile.csv")
check("profile header", got[0] == ["agent", "compute", "bandwidth", "source"])
check("profile has 3 agents", len(got) == 4)
for agent, cid in enumerate([1, 2, 3]):
    compute, bandwidth = expect_profile(cid)
    row = got[1 + agent]
    check("agent %d is client %d with its compute and bandwidth" % (agent, cid),
          row[0] == str(agent) and float(row[1]) == compute and float(row[2]) == bandwidth
          and row[3] == "fedscale:%d" % cid)
# client 2: 10 ms per sample, 3x for training: 30 ms per sample of 1.5 MFLOP = 50 MFLOP/s
check("10 ms/sample of a 1.5 MFLOP sample is 50 MFLOP/s", float(got[2][1]) == 5e7)
check("64 kbit/s is 8192 B/s", float(got[2][2]) == 8192)

r = run("--capacity", path("capacity.pkl"), "--sample", 4, "--seed", 9, "--sample-flops", F, "--latency", 0.02,
        "--profile", path("sampled.csv"))
want = random.Random(9).sample([1, 2, 3, 4, 5, 6], 4)
got = rows("sampled.csv")
check("seeded sample: exit 0", r.returncode == 0)
check("sampled header has latency", got[0] == ["agent", "compute", "bandwidth", "latency", "source"])
check("the sample is random.Random(seed).sample of the sorted ids",
      [row[4] for row in got[1:]] == ["fedscale:%d" % c for c in want])
check("every sampled value", all(float(row[1]) == expect_profile(c)[0] and float(row[2]) == expect_profile(c)[1]
                                 and float(row[3]) == 0.02 for row, c in zip(got[1:], want)))
again = run("--capacity", path("capacity.pkl"), "--sample", 4, "--seed", 9, "--sample-flops", F, "--latency", 0.02,
            "--profile", path("sampled2.csv"))
check("the same seed, the same file", open(path("sampled.csv")).read() == open(path("sampled2.csv")).read())
other = run("--capacity", path("capacity.pkl"), "--sample", 4, "--seed", 10, "--sample-flops", F,
            "--profile", path("sampled3.csv"))
check("another seed, another sample", [r[3] for r in rows("sampled3.csv")[1:]] != [r[4] for r in got[1:]])

# NumPy scalars (float64 and int64), pickled through stand-in modules: no NumPy needed
np = types.ModuleType("numpy")
core = types.ModuleType("numpy.core")
multiarray = types.ModuleType("numpy.core.multiarray")


class dtype:
    def __init__(self, name):
        self.name = name

    def __reduce__(self):
        return (dtype, (self.name, False, True), (3, "<", None, None, None, -1, -1, 0))


def scalar(d, data):
    raise AssertionError("never called while pickling")


class Scalar:
    def __init__(self, name, data):
        self.name, self.data = name, data

    def __reduce__(self):
        return (scalar, (dtype(self.name), self.data))


dtype.__module__ = "numpy"
dtype.__qualname__ = "dtype"
scalar.__module__ = "numpy.core.multiarray"
scalar.__qualname__ = "scalar"
np.dtype, multiarray.scalar = dtype, scalar
sys.modules.update({"numpy": np, "numpy.core": core, "numpy.core.multiarray": multiarray})
import struct  # noqa: E402
dump("numpy.pkl", {7: {"computation": Scalar("f8", struct.pack("<d", 12.5)),
                       "communication": Scalar("i8", struct.pack("<q", 256))}})
r = run("--capacity", path("numpy.pkl"), "--clients", 1, "--sample-flops", F, "--profile", path("numpy.csv"))
got = rows("numpy.csv")
check("NumPy scalars decoded without NumPy", r.returncode == 0 and float(got[1][1]) == F / (3 * 12.5 / 1000)
      and float(got[1][2]) == 256 * 128)

# ---------------------------------------------------------------- availability

behave = {10: {"active": [0, 50], "inactive": [20, 100], "finish_time": 100, "duration": 100, "model": "a"},
          11: {"active": [30], "inactive": [40], "finish_time": 60, "duration": 60, "model": "b"},
          12: {"active": [], "inactive": [], "finish_time": 50, "duration": 50, "model": "c"},
          13: {"active": [5, 10], "inactive": [15, 12], "finish_time": 40, "duration": 40, "model": "d"}}
dump("behave.pkl", behave)
r = run("--behave", path("behave.pkl"), "--clients", 4, "--horizon", 250, "--availability", path("availability.csv"))
check("availability: exit 0", r.returncode == 0)
check("a client never online is named in a warning", "client 12 is never online" in r.stderr)
got = rows("availability.csv")
check("availability header", got[0] == ["agent", "time", "value"])
series = {}
for a, t, v in got[1:]:
    series.setdefault(int(a), []).append((float(t), int(v)))
# client 10: on [0,20), off [20,50), on [50,100] touching the next period's [100,120): merged
check("client 10 unrolled, touching intervals merged", series[0] == [(0, 1), (20, 0), (50, 1), (120, 0), (150, 1),
                                                                     (220, 0)])
check("client 11: offline at 0, on [30,40) every 60 s", series[1] == [(0, 0), (30, 1), (40, 0), (90, 1), (100, 0),
                                                                      (150, 1), (160, 0), (210, 1), (220, 0)])
check("client 12: offline throughout", series[2] == [(0, 0)])
check("client 13: overlapping intervals [5,15) and [10,12) merged", series[3] == [
    (0, 0), (5, 1), (15, 0), (45, 1), (55, 0), (85, 1), (95, 0), (125, 1), (135, 0), (165, 1), (175, 0),
    (205, 1), (215, 0), (245, 1)])
check("times increase within every agent", all(all(a[0] < b[0] for a, b in zip(s, s[1:])) for s in series.values()))
check("values alternate", all(all(a[1] != b[1] for a, b in zip(s, s[1:])) for s in series.values()))

# ---------------------------------------------------------------- refusals (exit 2, a message)


def refused(name, args, message):
    r = run(*args)
    check(name, r.returncode == 2 and message in r.stderr)
    if not (r.returncode == 2 and message in r.stderr):
        print("     exit %d: %s" % (r.returncode, r.stderr.strip()))


refused("more clients than the file has", ["--capacity", path("capacity.pkl"), "--clients", 7, "--sample-flops", F,
                                            "--profile", path("x.csv")], "holds 6 clients, fewer than the 7")
refused("--profile without --sample-flops", ["--capacity", path("capacity.pkl"), "--clients", 1,
                                             "--profile", path("x.csv")], "--profile needs --sample-flops")
refused("nothing to write", ["--capacity", path("capacity.pkl"), "--clients", 1], "nothing to write")
dump("zero.pkl", {1: {"computation": 0.0, "communication": 5.0}, 2: {"computation": 3.0, "communication": 5.0}})
refused("a zero computation", ["--capacity", path("zero.pkl"), "--clients", 2, "--sample-flops", F,
                               "--profile", path("x.csv")], "client 1: 'computation' 0.0 is not a positive latency")
r = run("--capacity", path("zero.pkl"), "--clients", 1, "--sample-flops", F, "--skip-invalid", "--profile",
        path("skip.csv"))
check("--skip-invalid drops it", r.returncode == 0 and rows("skip.csv")[1][3] == "fedscale:2" and "1 of 2" in r.stderr)
dump("nokey.pkl", {1: {"computation": 3.0}})
refused("a missing key", ["--capacity", path("nokey.pkl"), "--clients", 1, "--sample-flops", F, "--profile",
                          path("x.csv")], "expected {'computation': ..., 'communication': ...}")
dump("list.pkl", [1, 2])
refused("not a dict", ["--capacity", path("list.pkl"), "--clients", 1, "--sample-flops", F, "--profile",
                       path("x.csv")], "expected a non-empty dict")
with open(path("evil.pkl"), "wb") as f:
    f.write(b"cos\nsystem\n(S'echo pwned'\ntR.")
refused("a pickle that would run code", ["--capacity", path("evil.pkl"), "--clients", 1, "--sample-flops", F,
                                         "--profile", path("x.csv")], "refers to os.system")
with open(path("junk.pkl"), "wb") as f:
    f.write(b"not a pickle")
refused("not a pickle", ["--capacity", path("junk.pkl"), "--clients", 1, "--sample-flops", F, "--profile",
                         path("x.csv")], "not a readable pickle")
refused("a missing file", ["--capacity", path("none.pkl"), "--clients", 1, "--sample-flops", F, "--profile",
                           path("x.csv")], "none.pkl")
dump("bad-behave.pkl", {1: {"active": [10], "inactive": [5], "finish_time": 20}})
refused("inactive before active", ["--behave", path("bad-behave.pkl"), "--clients", 1, "--availability",
                                   path("x.csv")], "interval 0 is [10, 5]")
dump("bad-behave.pkl", {1: {"active": [1, 2], "inactive": [5], "finish_time": 20}})
refused("unequal lists", ["--behave", path("bad-behave.pkl"), "--clients", 1, "--availability", path("x.csv")],
        "2 'active' times but 1 'inactive' ones")
dump("bad-behave.pkl", {1: {"active": [1], "inactive": [5]}})
refused("no finish_time", ["--behave", path("bad-behave.pkl"), "--clients", 1, "--availability", path("x.csv")],
        "no 'finish_time'")

print("fedscale_traces_test: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
