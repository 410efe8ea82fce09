#!/usr/bin/env python3
"""Makes the SEG-Y fixtures of tests/test_exchange.cpp and tests/test_segy_survey.cpp with
segyio's own Python package, so the tests read files that another program wrote (Debian:
python3-segyio; or pip install segyio). Run from tests/data/:
    python3 make_segy_fixtures.py [SEGYIO_TEST_DATA [ALL_EXPECTED_CSV]]
SEGYIO_TEST_DATA is the test-data/ folder of a checkout of https://github.com/equinor/segyio: the
few small files of it listed in SEGYIO_FILES are copied into segyio-test-data/ as they are. Then
every fixture that rtm imports is read back with segyio and what segyio reads (geometry, header
values with their scalars applied, samples) is written to segy_expected.csv, which the C++ tests
compare rtm's reading with. The files are small and committed; this script documents how they
were made. With ALL_EXPECTED_CSV, what segyio reads of every file of SEGYIO_TEST_DATA that it
can open (in either byte order) goes there too, for the optional test that compares rtm with all
of them:
    RTM_SEGYIO_TEST_DATA=SEGYIO_TEST_DATA RTM_SEGYIO_EXPECTED=ALL_EXPECTED_CSV \
        build/tests/test_segy_survey --gtest_filter='*EveryFileOfSegyiosTestData*'"""
import os
import shutil
import sys

import numpy as np
import segyio


def value(i, j, k):
    # x (crossline) i, y (inline) j, depth sample k: exact in IBM and IEEE floats
    return 1500.0 + 10.0 * k + 2.0 * j + 0.5 * i


def volume(path, with_coordinates):
    spec = segyio.spec()
    spec.ilines = list(range(100, 106))    # y: 6 inlines, numbered 100..105
    spec.xlines = list(range(20, 36, 2))   # x: 8 crosslines, numbered 20, 22, ..., 34
    spec.samples = list(range(7))          # z: 7 samples
    spec.sorting = segyio.TraceSortingFormat.INLINE_SORTING
    spec.format = 1                        # IBM float
    with segyio.create(path, spec) as f:
        f.bin[segyio.BinField.Interval] = 4000   # 4 m depth step, stored as millimetres
        t = 0
        for j, il in enumerate(spec.ilines):
            for i, xl in enumerate(spec.xlines):
                header = {segyio.TraceField.INLINE_3D: il, segyio.TraceField.CROSSLINE_3D: xl,
                          segyio.TraceField.TRACE_SAMPLE_INTERVAL: 4000}
                if with_coordinates:
                    header.update({segyio.TraceField.SourceGroupScalar: -100,
                                   segyio.TraceField.CDP_X: int(round((1000.0 + 25.0 * i) * 100)),
                                   segyio.TraceField.CDP_Y: int(round((2000.0 + 12.5 * j) * 100))})
                f.header[t] = header
                f.trace[t] = np.array([value(i, j, k) for k in spec.samples], dtype=np.float32)
                t += 1


def shots(path):
    # 2 shots x 3 receivers, 50 samples of 2 ms, IEEE floats, coordinates in decimetres
    nt, receivers = 50, [(15.0, 400.0, 100.0), (15.0, 400.0, 150.0), (15.0, 410.0, 200.0)]
    sources = [(10.0, 405.5, 120.0), (10.0, 405.5, 180.0)]
    spec = segyio.spec()
    spec.samples = list(range(nt))
    spec.format = 5
    spec.tracecount = len(sources) * len(receivers)
    with segyio.create(path, spec) as f:
        f.bin[segyio.BinField.Interval] = 2000
        t = 0
        for s, (sz, sy, sx) in enumerate(sources):
            for r, (rz, ry, rx) in enumerate(receivers):
                f.header[t] = {segyio.TraceField.FieldRecord: 7 + s,
                               segyio.TraceField.TraceNumber: r + 1,
                               segyio.TraceField.SourceGroupScalar: -10,
                               segyio.TraceField.ElevationScalar: -10,
                               segyio.TraceField.SourceX: int(sx * 10),
                               segyio.TraceField.SourceY: int(sy * 10),
                               segyio.TraceField.SourceDepth: int(sz * 10),
                               segyio.TraceField.GroupX: int(rx * 10),
                               segyio.TraceField.GroupY: int(ry * 10),
                               segyio.TraceField.ReceiverGroupElevation: int(-rz * 10),
                               segyio.TraceField.TRACE_SAMPLE_INTERVAL: 2000}
                f.trace[t] = np.array([100.0 * s + 10.0 * r + 0.25 * n for n in range(nt)],
                                      dtype=np.float32)
                t += 1


def streamer(path):
    # 3 shots moving +50 m along x, each with its own receivers trailing the source (a streamer
    # or a moving spread): 4, 3 and 5 receivers, 12.5 m apart, the first 25 m behind the source,
    # at 6.5 m depth; 40 samples of 4 ms, IEEE floats, coordinates in centimetres.
    nt, counts = 40, [4, 3, 5]
    spec = segyio.spec()
    spec.samples = list(range(nt))
    spec.format = 5
    spec.tracecount = sum(counts)
    with segyio.create(path, spec) as f:
        f.bin[segyio.BinField.Interval] = 4000
        t = 0
        for s, count in enumerate(counts):
            sz, sy, sx = 8.0, 300.0, 200.0 + 50.0 * s
            for r in range(count):
                rz, ry, rx = 6.5, 300.0, sx - 25.0 - 12.5 * r
                f.header[t] = {segyio.TraceField.FieldRecord: 31 + s,
                               segyio.TraceField.TraceNumber: r + 1,
                               segyio.TraceField.SourceGroupScalar: -100,
                               segyio.TraceField.ElevationScalar: -100,
                               segyio.TraceField.SourceX: int(round(sx * 100)),
                               segyio.TraceField.SourceY: int(round(sy * 100)),
                               segyio.TraceField.SourceDepth: int(round(sz * 100)),
                               segyio.TraceField.GroupX: int(round(rx * 100)),
                               segyio.TraceField.GroupY: int(round(ry * 100)),
                               segyio.TraceField.ReceiverGroupElevation: int(round(-rz * 100)),
                               segyio.TraceField.offset: int(round(sx - rx)),
                               segyio.TraceField.TRACE_SAMPLE_INTERVAL: 4000}
                f.trace[t] = np.array([100.0 * s + 10.0 * r + 0.25 * n for n in range(nt)],
                                      dtype=np.float32)
                t += 1


def survey_velocity(path):
    # The velocity cube of one small survey, as another program writes it: inline numbers
    # 201..206 increase along CDP_X (12.5 m apart), crosslines 101..108 along CDP_Y (10 m apart),
    # the first trace at (1000, 5000) m, coordinates in centimetres (scalar -100); depth step 5 m
    # (5000 in the "microseconds" field), IEEE floats: velocities in m/s.
    spec = segyio.spec()
    spec.ilines = list(range(201, 207))
    spec.xlines = list(range(101, 109))
    spec.samples = list(range(30))
    spec.sorting = segyio.TraceSortingFormat.INLINE_SORTING
    spec.format = 5
    with segyio.create(path, spec) as f:
        f.bin[segyio.BinField.Interval] = 5000
        t = 0
        for a, il in enumerate(spec.ilines):
            for b, xl in enumerate(spec.xlines):
                f.header[t] = {segyio.TraceField.INLINE_3D: il, segyio.TraceField.CROSSLINE_3D: xl,
                               segyio.TraceField.TRACE_SAMPLE_INTERVAL: 5000,
                               segyio.TraceField.SourceGroupScalar: -100,
                               segyio.TraceField.CDP_X: int(round((1000.0 + 12.5 * a) * 100)),
                               segyio.TraceField.CDP_Y: int(round((5000.0 + 10.0 * b) * 100))}
                f.trace[t] = np.array([1500.0 + 20.0 * k + 3.0 * a + 1.0 * b for k in spec.samples],
                                      dtype=np.float32)
                t += 1


def survey_shots(path):
    # Shot gathers of the same survey: field records 1001..1003, sources at 10 m depth moving
    # along CDP_X over the cube, 4 receivers each on a line along CDP_Y at 8 m depth, coordinates
    # in centimetres (scalar -100), depths in decimetres (scalar -10); 40 samples of 2 ms.
    nt = 40
    spec = segyio.spec()
    spec.samples = list(range(nt))
    spec.format = 5
    spec.tracecount = 3 * 4
    with segyio.create(path, spec) as f:
        f.bin[segyio.BinField.Interval] = 2000
        t = 0
        for s in range(3):
            sx, sy, sz = 1010.25 + 20.0 * s, 5035.0, 10.0
            for r in range(4):
                gx, gy, gz = sx, 5010.0 + 15.0 * r, 8.0
                f.header[t] = {segyio.TraceField.FieldRecord: 1001 + s,
                               segyio.TraceField.TraceNumber: r + 1,
                               segyio.TraceField.SourceGroupScalar: -100,
                               segyio.TraceField.ElevationScalar: -10,
                               segyio.TraceField.SourceX: int(round(sx * 100)),
                               segyio.TraceField.SourceY: int(round(sy * 100)),
                               segyio.TraceField.SourceDepth: int(round(sz * 10)),
                               segyio.TraceField.GroupX: int(round(gx * 100)),
                               segyio.TraceField.GroupY: int(round(gy * 100)),
                               segyio.TraceField.ReceiverGroupElevation: int(round(-gz * 10)),
                               segyio.TraceField.TRACE_SAMPLE_INTERVAL: 2000}
                f.trace[t] = np.array([s + 0.1 * r + 0.001 * n for n in range(nt)], dtype=np.float32)
                t += 1


def long_shots(path):
    # More samples than a signed 2-byte field holds (40000 > 32767; the field is unsigned):
    # one shot, two receivers, 1-byte integer samples (format 8) to keep the file small.
    nt = 40000
    spec = segyio.spec()
    spec.samples = list(range(nt))
    spec.format = 8
    spec.tracecount = 2
    with segyio.create(path, spec) as f:
        f.bin[segyio.BinField.Interval] = 250
        for r in range(2):
            f.header[r] = {segyio.TraceField.FieldRecord: 5,
                           segyio.TraceField.SourceX: 100, segyio.TraceField.SourceY: 200,
                           segyio.TraceField.GroupX: 150 + 50 * r, segyio.TraceField.GroupY: 200,
                           segyio.TraceField.TRACE_SAMPLE_INTERVAL: 250}
            f.trace[r] = (((np.arange(nt) * (r + 3)) % 255) - 127).astype(np.int8)


# Files of segyio's own test data (equinor/segyio, test-data/), copied as they are: IBM floats
# without coordinates (small), the same little-endian (small-lsb), 2-byte integers with real,
# slightly rotated coordinates (f3: F3 Netherlands, cropped), and small.sgy's rotated copies
# (normal: inlines along CDP_X; right: 90 degrees; acute: 45 degrees, scalar -10).
SEGYIO_FILES = ["small.sgy", "small-lsb.sgy", "f3.sgy", "normal-small.sgy", "right-small.sgy",
                "acute-small.sgy"]


def scaled(value, scalar):
    return value * scalar if scalar > 0 else value / -scalar if scalar < 0 else float(value)


ROOT = None  # names in the table: relative to this folder (segyio's test data), else base names


def expectations(paths, out):
    # One row per trace of what segyio reads: its header numbers, the coordinates with the
    # scalar of byte 71 applied, and its samples (count, sum, first and last), in trace order.
    with open(out, "w") as csv:
        csv.write("file,trace,endian,format,samples,interval,inline,crossline,record,"
                  "cdp_x,cdp_y,source_x,source_y,group_x,group_y,sum,first,last\n")
        for path, endian in paths:
            with segyio.open(path, ignore_geometry=True, endian=endian) as f:
                interval = segyio.tools.dt(f)
                for t in range(f.tracecount):
                    h = f.header[t]
                    sc = h[segyio.TraceField.SourceGroupScalar]
                    v = np.asarray(f.trace[t], dtype=np.float64)
                    csv.write(",".join(str(x) for x in [
                        os.path.relpath(path, ROOT) if ROOT else os.path.basename(path), t, endian, int(f.format) if isinstance(f.format, int) else
                        int(f.bin[segyio.BinField.Format]), len(f.samples), repr(float(interval)),
                        h[189], h[193], h[9],
                        repr(scaled(h[181], sc)), repr(scaled(h[185], sc)),
                        repr(scaled(h[73], sc)), repr(scaled(h[77], sc)),
                        repr(scaled(h[81], sc)), repr(scaled(h[85], sc)),
                        repr(float(v.sum())), repr(float(v[0])), repr(float(v[-1]))]) + "\n")


volume("segyio_volume.sgy", True)
volume("segyio_volume_no_coordinates.sgy", False)
shots("segyio_shots.sgy")
streamer("segyio_streamer.sgy")
survey_velocity("survey_velocity.sgy")
survey_shots("survey_shots.sgy")
long_shots("segyio_long_int8.sgy")
if len(sys.argv) > 1:
    os.makedirs("segyio-test-data", exist_ok=True)
    for name in SEGYIO_FILES:
        shutil.copyfile(os.path.join(sys.argv[1], name), os.path.join("segyio-test-data", name))
expectations([(os.path.join("segyio-test-data", n), "little" if "lsb" in n else "big")
              for n in SEGYIO_FILES] +
             [(n, "big") for n in ["survey_velocity.sgy", "survey_shots.sgy", "segyio_long_int8.sgy"]],
             "segy_expected.csv")
if len(sys.argv) > 2:
    readable = []
    for root, _, names in os.walk(sys.argv[1]):
        for name in sorted(names):
            if not name.endswith(".sgy"):
                continue
            path = os.path.join(root, name)
            for endian in ("big", "little"):
                try:
                    with segyio.open(path, ignore_geometry=True, endian=endian) as f:
                        f.trace[f.tracecount - 1]
                    readable.append((path, endian))
                    break
                except Exception:
                    pass
    ROOT = sys.argv[1]
    expectations(readable, sys.argv[2])
