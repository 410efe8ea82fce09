#!/usr/bin/env python3
"""Makes the SEG-Y fixtures of tests/test_exchange.cpp with segyio's own Python package, so the
tests read files that another program wrote (Debian: python3-segyio). Run from tests/data/:
    python3 make_segy_fixtures.py
The files are small and committed; this script documents how they were made."""
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


volume("segyio_volume.sgy", True)
volume("segyio_volume_no_coordinates.sgy", False)
shots("segyio_shots.sgy")
streamer("segyio_streamer.sgy")
