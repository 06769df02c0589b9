#!/usr/bin/env python3
"""Writes tests/data/gguf/saved/*.gguf with the app's own `save` command, as saves.json there lists them, for
tests/tst_ggufsave.cpp; then run tests/tools/gguf_reference.mjs on that folder for llama.cpp's logits:
  /usr/bin/python3 tests/tools/make_gguf_saved.py build/src/transformer-atlas
  node gguf_reference.mjs PATH/TO/tests/data/gguf/saved     # beside node-llama-cpp 3.22.1's node_modules
A model named by a path is relative to tests/data; one with "new_model" is made first by `new-model` with those
arguments (a fixed seed), in a scratch directory named as the model.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data")
SAVED = os.path.join(DATA, "gguf", "saved")
binary = os.path.abspath(sys.argv[1])

with open(os.path.join(SAVED, "saves.json")) as f:
    saves = json.load(f)["saves"]
with tempfile.TemporaryDirectory() as scratch:
    for s in saves:
        model = s["model"]
        if "new_model" in s:
            model = os.path.join(scratch, s["model"])
            subprocess.run([binary, "new-model", "--out", model] + s["new_model"], check=True, stdout=subprocess.DEVNULL)
        elif "/" in model:
            model = os.path.join(DATA, model)
        out = os.path.join(SAVED, s["file"])
        if os.path.exists(out):
            os.remove(out)
        subprocess.run([binary, "save", "--model", model, "--type", s["type"], "--out", out], check=True)
