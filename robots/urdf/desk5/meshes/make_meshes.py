#!/usr/bin/env python3
"""Writes the desk5 arm's STL meshes (this folder): tapered prisms and rounded bars.

The meshes are the project's own (not copied from any robot description). Some are written
as binary STL and some as ASCII STL, so that both readers are exercised. Units: metres, in
each link's frame (z along the link). Run: python3 make_meshes.py
"""
import math
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def polygon(n, rx, ry, phase=0.0):
    return [(rx * math.cos(phase + 2 * math.pi * i / n), ry * math.sin(phase + 2 * math.pi * i / n)) for i in range(n)]


def prism(bottom, top, z0, z1, centre=(0.0, 0.0), top_centre=None):
    """Triangles of a closed prism between two convex polygons (same vertex count)."""
    cx, cy = centre
    tx, ty = top_centre if top_centre else centre
    b = [(cx + x, cy + y, z0) for x, y in bottom]
    t = [(tx + x, ty + y, z1) for x, y in top]
    n = len(b)
    tris = []
    # Caps are fans from each polygon's centroid (inside it, as the polygons are convex).
    cb = (sum(v[0] for v in b) / n, sum(v[1] for v in b) / n, z0)
    ct = (sum(v[0] for v in t) / n, sum(v[1] for v in t) / n, z1)
    for i in range(n):
        j = (i + 1) % n
        tris.append((cb, b[j], b[i]))  # bottom, facing -z
        tris.append((ct, t[i], t[j]))  # top, facing +z
        tris.append((b[i], b[j], t[j]))
        tris.append((b[i], t[j], t[i]))
    return tris


def box(x0, x1, y0, y1, z0, z1):
    rect = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
    return prism(rect, rect, z0, z1)


def normal(a, b, c):
    u = [b[k] - a[k] for k in range(3)]
    v = [c[k] - a[k] for k in range(3)]
    n = (u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0])
    length = math.sqrt(sum(x * x for x in n)) or 1.0
    return tuple(x / length for x in n)


def write_binary(name, tris):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(b"desk5 " + name.encode().ljust(74, b" "))
        f.write(struct.pack("<I", len(tris)))
        for a, b, c in tris:
            f.write(struct.pack("<3f", *normal(a, b, c)))
            for v in (a, b, c):
                f.write(struct.pack("<3f", *v))
            f.write(struct.pack("<H", 0))


def write_ascii(name, tris):
    solid = name.rsplit(".", 1)[0]
    lines = [f"solid {solid}"]
    for a, b, c in tris:
        lines.append("  facet normal {:.6e} {:.6e} {:.6e}".format(*normal(a, b, c)))
        lines.append("    outer loop")
        for v in (a, b, c):
            lines.append("      vertex {:.6e} {:.6e} {:.6e}".format(*v))
        lines.append("    endloop")
        lines.append("  endfacet")
    lines.append(f"endsolid {solid}")
    with open(os.path.join(HERE, name), "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    # Base: an octagonal drum, 0.11 m across, 0.04 m high.
    write_binary("base.stl", prism(polygon(8, 0.055, 0.055, math.pi / 8), polygon(8, 0.048, 0.048, math.pi / 8), 0.0, 0.04))
    # Shoulder bracket: a hexagonal block carrying the lift axis 0.05 m up.
    write_ascii("shoulder.stl", prism(polygon(6, 0.035, 0.032), polygon(6, 0.03, 0.03), 0.0, 0.062))
    # Upper arm: an octagonal bar, 0.16 m, tapering from 32 to 26 mm.
    write_binary("upper_arm.stl", prism(polygon(8, 0.016, 0.02, math.pi / 8), polygon(8, 0.013, 0.017, math.pi / 8), -0.012, 0.172))
    # Forearm: a slimmer bar, 0.15 m.
    write_binary("forearm.stl", prism(polygon(8, 0.014, 0.017, math.pi / 8), polygon(8, 0.011, 0.014, math.pi / 8), -0.01, 0.16))
    # Wrist: a short drum.
    write_ascii("wrist.stl", prism(polygon(12, 0.017, 0.017), polygon(12, 0.017, 0.017), -0.008, 0.04))
    # Gripper housing (jaw hinge at y = -0.043, z = 0.03).
    write_binary("gripper.stl", box(-0.016, 0.016, -0.048, 0.046, 0.0, 0.03))
    # Fixed jaw: a plate whose inner face is at y = +0.035, from the housing to 0.095.
    write_ascii("fixed_jaw.stl", prism([(-0.012, 0.035), (0.012, 0.035), (0.012, 0.045), (-0.012, 0.045)],
                                       [(-0.01, 0.035), (0.01, 0.035), (0.01, 0.043), (-0.01, 0.043)], 0.03, 0.095))
    # Moving jaw, in its hinge frame (hinge axis x through the origin): a plate whose inner
    # face is at y = +0.008, reaching 0.065 below the hinge.
    write_binary("moving_jaw.stl", prism([(-0.012, -0.002), (0.012, -0.002), (0.012, 0.008), (-0.012, 0.008)],
                                         [(-0.01, 0.0), (0.01, 0.0), (0.01, 0.008), (-0.01, 0.008)], 0.0, 0.065))

if __name__ == "__main__":
    main()
