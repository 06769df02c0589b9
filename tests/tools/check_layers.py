#!/usr/bin/env python3
"""Keeps the layers of docs/architecture.md: prints every include that crosses a layer the wrong way, exits 1 if any.

  core          no Qt at all (std, Eigen, nlohmann::json)
  viewmodel     Qt Core only: no widget, Gui, print or SVG header, no QCustomPlot, nothing from views/ or panels/
  session       the same as viewmodel
  cli           the same, but it may reach the views through views/headlessrender.h (render, bench-view)
  views, panels, the window
                only the core's public headers: a core header that says "Internal to the core" is off limits
  a view folder (src/views/NAME/)
                the files its CMakeLists.txt lists after WIDGET are the widget layer's, those after CLI the cli's,
                its tst_* files tests, the rest the core's

Usage: check_layers.py SOURCE_DIR QT_INCLUDE_DIR
"""
import os
import re
import sys

from viewfolders import view_folders

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)
WIDGET_MODULES = ("QtWidgets", "QtGui", "QtPrintSupport", "QtSvg", "QtSvgWidgets", "QtOpenGL")
INTERNAL_MARK = "Internal to the core"


def sources(folder):
    for root, _, files in os.walk(folder):
        for name in sorted(files):
            if name.endswith((".h", ".cpp")):
                yield os.path.join(root, name)


def includes(path):
    with open(path, encoding="utf-8") as f:
        return INCLUDE.findall(f.read())


def widget_headers(qt_include):
    """Every class header of Qt's widget and GUI modules (QWidget, QPainter, QImage …)."""
    names = set()
    for module in WIDGET_MODULES:
        folder = os.path.join(qt_include, module)
        if os.path.isdir(folder):
            names.update(n for n in os.listdir(folder) if n.startswith("Q") and "." not in n)
    return names


# Folders that may include each other, with the reason: none (a folder is a layer: docs/architecture.md). The last
# pair, model/ and tokenize/, was parted when a model's tokenizer moved to model/modeltokenizer.h.
KNOWN_FOLDER_CYCLES = {}


def folder_cycles(root, label):
    """Each group of ROOT's folders that include one another in a circle (the core's train/ and memory/ once did; the
    app's window and panels/ through theme.h). Files directly in ROOT are the folder "."."""
    graph = {}
    for path in sources(root):
        parts = os.path.relpath(path, root).split(os.sep)
        folder = parts[0] if len(parts) > 1 else "."
        for h in includes(path):
            top = h.split("/")[0] if "/" in h else ("." if os.path.isfile(os.path.join(root, h)) else None)
            if top and top != folder and (top == "." or os.path.isdir(os.path.join(root, top))):
                graph.setdefault(folder, set()).add(top)
    index, low, stack, on_stack, groups = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(group)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [f"{label}: the folders {', '.join(sorted(g))} include one another in a circle" for g in groups
            if frozenset(g) not in KNOWN_FOLDER_CYCLES]


def main(src, qt_include):
    widgets = widget_headers(qt_include)
    if not widgets:
        print(f"check_layers: no Qt widget headers under {qt_include}: cannot check", file=sys.stderr)
        return 2
    core = os.path.join(src, "core")
    internal = set()
    for path in sources(core):
        with open(path, encoding="utf-8") as f:
            if INTERNAL_MARK in f.read(2000):
                internal.add(os.path.relpath(path, core))

    def is_widget(header):
        top = header.split("/")[0]
        return header in widgets or top in WIDGET_MODULES or header == "qcustomplot.h"

    problems = []
    folders = os.path.join(src, "views")
    folder_widgets, folder_core, folder_cli = [], [], []
    for view in view_folders(src, "check_layers"):
        for path, _ in view.sources:
            (folder_widgets if path in view.widgets else folder_cli if path in view.cli else folder_core).append(
                str(path))
    for path in list(sources(core)) + folder_core:
        for h in includes(path):
            if re.match(r"(Q[A-Z]\w*|Qt\w*/.*|qcustomplot\.h)$", h):
                problems.append(f"{path}: the core includes Qt header <{h}>")
            elif h.startswith(("views/", "panels/", "style/")) or os.path.join(folders, h) in folder_widgets:
                problems.append(f"{path}: the core includes {h} from the widget layer")
    for layer in ("app/viewmodel", "app/session", "cli"):
        for path in list(sources(os.path.join(src, layer))) + (folder_cli if layer == "cli" else []):
            for h in includes(path):
                if is_widget(h):
                    problems.append(f"{path}: {layer} includes the widget/GUI header <{h}>")
                elif h.startswith(("views/", "panels/", "style/")) or h == "mainwindow.h":
                    if not (layer == "cli" and h == "views/headlessrender.h"):
                        problems.append(f"{path}: {layer} includes {h} from the widget layer")
    for layer in ("app/views", "app/panels", "app"):
        folder = os.path.join(src, layer)
        paths = sources(folder) if layer != "app" else (os.path.join(folder, n) for n in os.listdir(folder)
                                                          if n.endswith((".h", ".cpp")))
        for path in paths:
            for h in includes(path):
                if h in internal:
                    problems.append(f"{path}: includes {h}, which is internal to the core")
    for path in folder_widgets:
        for h in includes(path):
            if h in internal:
                problems.append(f"{path}: includes {h}, which is internal to the core")
    problems += folder_cycles(core, "src/core")
    problems += folder_cycles(os.path.join(src, "app"), "src/app")
    for p in problems:
        print(p)
    if problems:
        print(f"check_layers: {len(problems)} include(s) cross a layer the wrong way (docs/architecture.md)")
        return 1
    print(f"check_layers: layers respected ({len(internal)} internal core headers, {len(widgets)} widget headers)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
