"""Side-by-side benchmarks of sse_toolcalls against its peers and the floor.

Run ``python -m benchmarks --help``. The input generators in :mod:`benchmarks.inputs` are
shared with the tests.
"""
