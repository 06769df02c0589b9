#!/usr/bin/env python3
"""The interactive lesson page in a real browser: exports lessons with `lesson export --html`, loads each page in
Debian's headless Chromium (driven through the DevTools protocol on a pipe, no library), moves the mouse over cells,
clicks layer, head and position buttons, answers questions, and compares every number the page shows with the
tensors `dump` writes for the same model and input.

Usage: check_lesson_page.py TRANSFORMER_ATLAS LESSONS_DIR CHROMIUM
Exits 0 when every check passes, 1 with the failures listed otherwise.
"""
import ast
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import time

FAILURES = []


def check(condition, what):
    if not condition:
        FAILURES.append(what)
        print("FAIL:", what)
    return condition


# --- the tensors `dump` writes (.npy, float32 little-endian or int32), read without numpy --------------------------

def read_npy(path):
    with open(path, "rb") as f:
        if f.read(6) != b"\x93NUMPY":
            raise ValueError(path + ": not a .npy file")
        major = f.read(2)[0]
        length = struct.unpack("<H" if major == 1 else "<I", f.read(2 if major == 1 else 4))[0]
        header = ast.literal_eval(f.read(length).decode("latin1"))
        shape = header["shape"]
        count = 1
        for d in shape:
            count *= d
        code = {"<f4": "f", "<i4": "i", "<i8": "q"}[header["descr"]]
        data = struct.unpack("<%d%s" % (count, code), f.read(count * struct.calcsize(code)))
    return shape, data


class Dumped:
    def __init__(self, binary, spec, directory, extra=()):
        args = [binary, "dump", "--model", spec["model"], "--out", directory] + list(extra)
        if "tokens" in spec:
            args += ["--tokens", ",".join(map(str, spec["tokens"]))]
        else:
            args += ["--text", spec["text"]]
        if spec.get("padding"):
            args += ["--padding", ",".join(map(str, spec["padding"]))]
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
        self.directory = directory

    def at(self, name, *index):
        shape, data = read_npy(os.path.join(self.directory, name + ".npy"))
        flat = 0
        for i, n in zip(index, shape):
            flat = flat * n + i
        return data[flat]

    def row(self, name, *index):
        shape, data = read_npy(os.path.join(self.directory, name + ".npy"))
        flat = 0
        for i, n in zip(index, shape):
            flat = flat * n + i
        width = shape[-1]
        return data[flat * width:(flat + 1) * width]


# --- the page's numbers back to floats: formatNumber's Unicode minus and ×10ⁿ ------------------------------------

SUPERSCRIPT = {c: str(i) for i, c in enumerate("⁰¹²³⁴⁵⁶⁷⁸⁹")}
NUMBER = r"[\u2212]?[0-9.]+(?:×10⁻?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)?"


def parse_number(text):
    text = text.replace("\u2212", "-")
    if "×10" in text:
        mantissa, power = text.split("×10")
        exponent = "".join("-" if c == "⁻" else SUPERSCRIPT[c] for c in power)
        return float(mantissa) * 10.0 ** int(exponent)
    return float(text)


def agrees(shown, value, significant):
    """`shown` is `value` rounded to `significant` digits."""
    if value == 0:
        return shown == 0
    return abs(shown - value) <= 0.51 * 10 ** (int(f"{abs(value):e}".split("e")[1]) - significant + 1)


# --- Chromium through the DevTools protocol on --remote-debugging-pipe (fds 3 and 4, NUL-separated JSON) ----------

class Browser:
    def __init__(self, chromium, profile):
        to_chrome_r, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome_w = os.pipe()

        def connect():
            os.dup2(to_chrome_r, 3)
            os.dup2(from_chrome_w, 4)

        self.process = subprocess.Popen(
            [chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
             "--no-first-run", "--user-data-dir=" + profile, "--window-size=1280,1000", "about:blank"],
            pass_fds=(3, 4), preexec_fn=connect, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.buffer = b""
        self.next_id = 0
        self.session = None

    def send(self, method, params=None, session=True):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        os.write(self.to_chrome, json.dumps(message).encode() + b"\0")
        while True:
            while b"\0" not in self.buffer:
                chunk = os.read(self.from_chrome, 1 << 16)
                if not chunk:
                    raise RuntimeError("Chromium closed the pipe")
                self.buffer += chunk
            reply, self.buffer = self.buffer.split(b"\0", 1)
            reply = json.loads(reply)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(method + ": " + str(reply["error"]))
                return reply["result"]

    def open(self, url):
        target = self.send("Target.createTarget", {"url": url}, session=False)
        self.session = self.send("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True},
                                 session=False)["sessionId"]
        for _ in range(200):
            if self.eval("document.body && document.body.dataset.ready === 'true'"):
                return
            time.sleep(0.05)
        raise RuntimeError(url + ": the page's script did not finish (no data-ready)")

    def eval(self, expression):
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in result:
            raise RuntimeError(expression + ": " + json.dumps(result["exceptionDetails"]))
        return result["result"].get("value")

    def point(self, selector):
        """Scrolls the element into view and returns its centre in the viewport."""
        box = self.eval("(() => { const e = document.querySelector(%s); e.scrollIntoView({block: 'center'}); "
                        "const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()"
                        % json.dumps(selector))
        return box

    def move(self, x, y):
        self.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})

    def click(self, selector):
        x, y = self.point(selector)
        self.move(x, y)
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1})

    def hover_cell(self, canvas, row, col):
        """Moves the mouse over cell (row, col) of a heat map canvas, from the geometry it carries."""
        self.eval("document.querySelector(%s).scrollIntoView({block: 'center'})" % json.dumps(canvas))
        x, y = self.eval("(() => { const c = document.querySelector(%s), r = c.getBoundingClientRect(); "
                         "const d = c.dataset; return [r.x + +d.left + (%d + 0.5) * +d.cell, "
                         "r.y + +d.top + (%d + 0.5) * +d.cell]; })()" % (json.dumps(canvas), col, row))
        self.move(x, y)

    def text(self, selector):
        return self.eval("document.querySelector(%s).textContent" % json.dumps(selector))

    def close(self):
        try:
            self.send("Browser.close", session=False)
        except RuntimeError:
            pass
        self.process.wait(timeout=20)


def export(binary, lesson, directory, *flags):
    subprocess.run([binary, "lesson", "export", lesson, "--out", directory, "--html", *flags], check=True,
                   stdout=subprocess.DEVNULL)
    return "file://" + os.path.join(directory, "index.html")


def page_data(browser):
    return browser.eval("JSON.parse(document.getElementById('lesson-data').textContent)")


def first_step(data, draw, every_layer=False):
    """The first step the page draws as `draw` from a plain run (no kernel, no other positions); with every_layer,
    one whose stepper has passed every layer (all can be chosen)."""
    for i, step in enumerate(data["steps"]):
        figure = step["figure"]
        if figure and figure["draw"] == draw and not step["spec"].get("attention") \
                and not step["spec"].get("positions") \
                and (not every_layer or all(p is not None for p in figure["probs"])):
            return i
    raise RuntimeError("no step draws " + draw)


def attention_switching(browser, data, dumped, i, layer, head):
    """Chooses `layer` (None: the step's) and `head` with the buttons of step i, hovers cells (9, 3) and (3, 9)."""
    step = "#step-%d" % (i + 1)
    if layer is not None:
        browser.click(step + " .chooser[aria-label=Layer] button[data-value='%d']" % layer)
    else:
        layer = data["steps"][i]["figure"]["layer"]
    browser.click(step + " .chooser[aria-label=Head] button[data-value='%d']" % head)
    label = browser.eval("document.querySelector(%s).getAttribute('aria-label')" % json.dumps(step + " canvas.heatmap"))
    check(label.endswith("layer %d, head %d: softmax(S)" % (layer, head)),
          "attention step: the buttons chose layer %d, head %d: %r" % (layer, head, label))
    browser.hover_cell(step + " canvas.heatmap", 9, 3)
    shown = browser.text(step + " .readout")
    match = re.search(r"\(#9\) → key '.*' \(#3\): score (" + NUMBER + "), probability (" + NUMBER + ")", shown)
    scores, probs = "layer.%d.attn.scores" % layer, "layer.%d.attn.probs" % layer
    if check(match, "attention step: readout of layer %d, head %d, cell (9, 3): %r" % (layer, head, shown)):
        check(agrees(parse_number(match.group(1)), dumped.at(scores, head, 9, 3), 4),
              "attention step: score %s, dump %r" % (match.group(1), dumped.at(scores, head, 9, 3)))
        check(agrees(parse_number(match.group(2)), dumped.at(probs, head, 9, 3), 4),
              "attention step: probability %s, dump %r" % (match.group(2), dumped.at(probs, head, 9, 3)))
    browser.hover_cell(step + " canvas.heatmap", 3, 9)
    check(browser.text(step + " .readout").endswith("masked (−∞ before softmax)"),
          "attention step: a future key reads as masked: %r" % browser.text(step + " .readout"))


def lesson_01(browser, binary, lessons, work):
    browser.open(export(binary, os.path.join(lessons, "01-self-attention.md"), os.path.join(work, "01")))
    data = page_data(browser)
    spec = data["steps"][0]["spec"]
    dumped = Dumped(binary, spec, os.path.join(work, "dump-01"))

    # Every step opens on what its spec chooses, as the app's view of the same spec does: a tensor's slice (the
    # spec's head), an attention figure's layer and head.
    for i, step in enumerate(data["steps"]):
        figure = step["figure"]
        if not figure:
            continue
        chosen = lambda label: browser.eval(
            "(document.querySelector('#step-%d .chooser%s button.chosen') || {}).textContent"
            % (i + 1, "[aria-label=%s]" % label if label else ""))
        wanted = step["spec"].get("head", 0)
        if figure["draw"] == "tensor" and figure["slices"] > 1:
            check(chosen(None) == str(wanted),
                  "step %d: the tensor page shows slice %r, its spec head %d" % (i + 1, chosen(None), wanted))
        elif figure["draw"] in ("attention", "mask"):
            layer = step["spec"].get("layer", 0)
            # Without a Layer chooser (one layer traced so far) the figure's title names the layer.
            title = browser.eval("document.querySelector('#step-%d canvas.heatmap').getAttribute('aria-label')" % (i + 1))
            shown_layer = chosen("Layer") or re.search(r"layer (\d+)", title).group(1)
            check(chosen("Head") == str(wanted) and shown_layer == str(layer),
                  "step %d: the page shows layer %r head %r, its spec layer %d head %d"
                  % (i + 1, shown_layer, chosen("Head"), layer, wanted))

    # The tensor view: a hovered cell shows the traced value to seven digits.
    i = first_step(data, "tensor")
    name = data["steps"][i]["spec"]["tensor"]
    canvas = "#step-%d canvas.heatmap" % (i + 1)
    browser.hover_cell(canvas, 7, 5)
    shown = browser.text("#step-%d .readout" % (i + 1))
    match = re.search(re.escape(name) + r"\[7, 5\] = (" + NUMBER + ")", shown)
    if check(match, "tensor step: the readout names %s[7, 5]: %r" % (name, shown)):
        check(agrees(parse_number(match.group(1)), dumped.at(name, 7, 5), 7),
              "tensor step: %s[7, 5] shows %s, dump has %r" % (name, match.group(1), dumped.at(name, 7, 5)))

    # The attention view: head 2 chosen with its button, a hovered cell's score and probability.
    attention_switching(browser, data, dumped, first_step(data, "attention"), None, 2)

    # All heads: head 3 of the step's layer, hovered.
    i = first_step(data, "heads")
    step = "#step-%d" % (i + 1)
    layer = data["steps"][i]["figure"]["layer"]
    browser.hover_cell(step + " canvas.heatmap:nth-of-type(4)", 12, 4)
    shown = browser.text(step + " .readout")
    match = re.search(r"Layer %d, head 3 · query .*\(#12\) → key .*\(#4\):.* probability (%s)" % (layer, NUMBER),
                      shown)
    if check(match, "heads step: readout of head 3, cell (12, 4): %r" % shown):
        expected = dumped.at("layer.%d.attn.probs" % layer, 3, 12, 4)
        check(agrees(parse_number(match.group(1)), expected, 4),
              "heads step: probability %s, dump %r" % (match.group(1), expected))

    # The mask: the middle panel says why a cell is not allowed.
    i = first_step(data, "mask")
    step = "#step-%d" % (i + 1)
    browser.hover_cell(step + " canvas.heatmap:nth-of-type(2)", 2, 6)
    check(browser.text(step + " .readout").endswith("not allowed (M = −∞) (the key is a future token)"),
          "mask step: %r" % browser.text(step + " .readout"))

    # Next token: choose position 4 with its button; the first bar is the most probable token with its p.
    i = first_step(data, "next-token")
    step = "#step-%d" % (i + 1)
    browser.click(step + " .chooser button[data-value='4']")
    x, y = browser.point(step + " .bar")
    browser.move(x, y)
    shown = browser.text(step + " .readout")
    probabilities = dumped.row("next_probs", 4)
    best = max(range(len(probabilities)), key=lambda v: probabilities[v])
    match = re.search(r"\(#(\d+)\): p = (" + NUMBER + ")", shown)
    if check(match, "next-token step: %r" % shown):
        check(int(match.group(1)) == best, "next-token step: first bar #%s, dump's argmax #%d" % (match.group(1), best))
        check(agrees(parse_number(match.group(2)), probabilities[best], 4),
              "next-token step: p %s, dump %r" % (match.group(2), probabilities[best]))

    # The students' copy: no answer and no explanation in the page at all (lesson 1's: its steps compute in moments).
    browser.open(export(binary, os.path.join(lessons, "01-self-attention.md"), os.path.join(work, "01-students"),
                        "--no-answers"))
    data = page_data(browser)
    chooses = [q for s in data["steps"] for q in s["questions"] if q["kind"] == "choose"]
    check(chooses and all("correct" not in q and "explanation" not in q for q in chooses),
          "students' copy: a choose question carries its answer")
    check(browser.eval("document.querySelectorAll('button.check').length") == 0,
          "students' copy: a Check button with no answer to check against")


def lesson_02(browser, binary, lessons, work):
    browser.open(export(binary, os.path.join(lessons, "02-what-heads-do.md"), os.path.join(work, "02")))
    data = page_data(browser)
    with open(os.path.join(lessons, "02-what-heads-do.md"), encoding="utf-8") as f:
        source = f.read()

    # Layer 1, head 2 of the first step past every layer.
    i = first_step(data, "attention", every_layer=True)
    attention_switching(browser, data, Dumped(binary, data["steps"][i]["spec"], os.path.join(work, "dump-02a")), i, 1, 2)

    # A choose question: the right choices give "Right.", a wrong one "Not quite".
    for i, step in enumerate(data["steps"]):
        choose = [k for k, q in enumerate(step["questions"]) if q["kind"] == "choose"]
        if choose:
            break
    q = data["steps"][i]["questions"][choose[0]]
    block = "#step-%d .question:nth-of-type(%d)" % (i + 1, choose[0] + 1)
    check(q["prompt"] in source, "choose question: its prompt is the lesson's")
    wrong = next(c for c in range(len(q["choices"])) if c not in q["correct"])
    browser.click(block + " input[value='%d']" % wrong)
    browser.click(block + " button.check")
    check(browser.text(block + " .feedback").startswith("Not quite"),
          "choose question, a wrong choice: %r" % browser.text(block + " .feedback"))
    browser.click(block + " input[value='%d']" % q["correct"][0])
    browser.click(block + " button.check")
    check(browser.text(block + " .feedback").startswith("Right."),
          "choose question, the right choice: %r" % browser.text(block + " .feedback"))

    # A predict question: the query's row is veiled until Reveal, which names the dump's strongest key.
    for i, step in enumerate(data["steps"]):
        predict = [k for k, q in enumerate(step["questions"]) if q["kind"] == "predict"]
        if predict:
            break
    q = data["steps"][i]["questions"][predict[0]]
    step = "#step-%d" % (i + 1)
    block = step + " .question:nth-of-type(%d)" % (predict[0] + 1)
    dumped = Dumped(binary, data["steps"][i]["spec"], os.path.join(work, "dump-02"))
    row = dumped.row("layer.%d.attn.probs" % q["layer"], q["head"], q["query"])
    strongest = max(range(len(row)), key=lambda k: row[k])
    browser.hover_cell(step + " canvas.heatmap", q["query"], 0)
    check(browser.text(step + " .readout").endswith("hidden until Reveal"),
          "predict question: the row is veiled before Reveal: %r" % browser.text(step + " .readout"))
    browser.click(block + " button.chip[data-key='%d']" % strongest)
    browser.click(block + " button.reveal")
    feedback = browser.text(block + " .feedback")
    check(feedback.startswith("Right. Query %d attends most to key %d " % (q["query"], strongest)),
          "predict question: a guess of the dump's strongest key %d: %r" % (strongest, feedback))
    browser.hover_cell(step + " canvas.heatmap", q["query"], strongest)
    match = re.search(r"probability (" + NUMBER + ")", browser.text(step + " .readout"))
    if check(match, "predict question: the row is shown after Reveal: %r" % browser.text(step + " .readout")):
        check(agrees(parse_number(match.group(1)), row[strongest], 4), "predict question: the revealed weight")


def lesson_16(browser, binary, lessons, work):
    browser.open(export(binary, os.path.join(lessons, "16-logit-lens.md"), os.path.join(work, "16")))
    data = page_data(browser)
    i = first_step(data, "logit-lens")
    step = "#step-%d" % (i + 1)
    dumped = Dumped(binary, data["steps"][i]["spec"], os.path.join(work, "dump-16"), ["--logit-lens"])
    rows = len(data["steps"][i]["figure"]["rows"])
    x, y = browser.point(step + " td[data-row='%d'][data-position='2']" % (rows - 1))
    browser.move(x, y)
    shown = browser.text(step + " .readout")
    match = re.search(r"position 2 '.*': 1\. '.*?' (" + NUMBER + ")\u202F%  2\. ", shown)
    if check(match, "logit-lens step: %r" % shown):
        expected = dumped.at("lens.top_probs", rows - 1, 2, 0)
        check(agrees(parse_number(match.group(1)) / 100, expected, 3),
              "logit-lens step: top probability %s %%, dump %r" % (match.group(1), expected))


def lesson_19(browser, binary, lessons, work):
    """reverse-entmax's exact zeros: an allowed key given exactly 0 reads as such, apart from a masked one."""
    browser.open(export(binary, os.path.join(lessons, "19-learned-sparsity.md"), os.path.join(work, "19")))
    data = page_data(browser)
    i = next(k for k, s in enumerate(data["steps"])
             if s["figure"] and s["figure"]["draw"] == "attention" and s["spec"]["model"] == "reverse-entmax")
    step = "#step-%d" % (i + 1)
    figure = data["steps"][i]["figure"]
    check(data["steps"][first_step(data, "attention")]["figure"]["exactZeros"] == "",
          "softmax step: no exact zeros to name")
    check(figure["exactZeros"] == "entmax", "entmax step: the figure names its normaliser: %r" % figure["exactZeros"])
    dumped = Dumped(binary, data["steps"][i]["spec"], os.path.join(work, "dump-19"))
    probs = "layer.%d.attn.probs" % figure["layer"]
    zero = next((j for j in range(9) if dumped.at(probs, figure["head"], 9, j) == 0), None)
    if check(zero is not None, "entmax step: the dump has an allowed zero in row 9"):
        browser.hover_cell(step + " canvas.heatmap", 9, zero)
        shown = browser.text(step + " .readout")
        check("probability exactly 0, not masked" in shown, "entmax step: an allowed zero: %r" % shown)
    browser.hover_cell(step + " canvas.heatmap", 3, 9)
    check(browser.text(step + " .readout").endswith("masked (−∞ before softmax)"),
          "entmax step: a future key still reads as masked: %r" % browser.text(step + " .readout"))


def main(binary, lessons, chromium):
    with tempfile.TemporaryDirectory(prefix="atlas-lesson-page-") as work:
        browser = Browser(chromium, os.path.join(work, "profile"))
        try:
            lesson_01(browser, binary, lessons, work)
            lesson_02(browser, binary, lessons, work)
            lesson_16(browser, binary, lessons, work)
            lesson_19(browser, binary, lessons, work)
        finally:
            browser.close()
    if FAILURES:
        print("%d checks failed" % len(FAILURES))
        return 1
    print("the lesson pages show the dumped numbers, switch layers and heads, and check answers")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
