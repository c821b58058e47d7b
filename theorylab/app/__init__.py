"""The assembling layer: the command line, the one place that imports every other layer (the engine, the testbeds,
the figures and the validations) and wires them together.  Nothing below it imports it (tests/test_layout.py)."""
