#!/usr/bin/env python3
"""docs/view-spec.md's table of views is the one the view folders make.

Each view folder (src/views/NAME/) documents its view in NAME.md: a line "Shows: …" (what the view draws, one
paragraph) and a line "Uses: …" (the spec keys it reads, each in backticks). The table lists every view in the order of
the app's tabs (each descriptor's `.after`). This check fails when a folder has no NAME.md, when its Uses name a key
the schema (src/core/view/speckeys.cpp) lacks or leave out a key whose entry lists the view, or when the docs' table is
not the one the folders make; it then writes that table to OUT_FILE, to paste over the docs' one.

Usage: check_view_docs.py SOURCE_DIR OUT_FILE
"""
import pathlib
import re
import sys

from viewfolders import shared_keys, view_folders

HEADER = ["| view kind | shows | uses |", "| --- | --- | --- |"]


def paragraph(text, label, where):
    m = re.search(r"^%s:(.*?)(?:\n\s*\n|\Z)" % label, text, re.M | re.S)
    if not m:
        sys.exit("check_view_docs: %s has no '%s:' paragraph" % (where, label))
    return " ".join(m.group(1).split())


def tab_order(descriptors):
    """The kinds in the order viewKinds() gives them (view/viewkinds.cpp): the one with no `after` first."""
    kinds, unplaced = [], dict(descriptors)
    while unplaced:
        placed = False
        for kind, after in list(unplaced.items()):
            if (after is None and not kinds) or after in kinds:
                kinds.insert(kinds.index(after) + 1 if after else 0, kind)
                del unplaced[kind]
                placed = True
        if not placed:
            sys.exit("check_view_docs: cannot order the views %s by their `after`" % ", ".join(sorted(unplaced)))
    return kinds


def main():
    src = pathlib.Path(sys.argv[1])
    out = pathlib.Path(sys.argv[2])
    keys, listing = set(), {}  # every key; kind -> the keys whose entry lists it
    for name, _, views in shared_keys(src, "check_view_docs"):
        keys.add(name)
        for kind in views or []:
            listing.setdefault(kind, set()).add(name)

    rows, descriptors, problems = {}, {}, []
    for view in view_folders(src, "check_view_docs"):
        folder, kind = view.path, view.kind
        keys.update(view.own_keys)
        listing.setdefault(kind, set()).update(view.own_keys)
        descriptors[kind] = view.after or None
        doc = folder / (folder.name + ".md")
        if not doc.exists():
            problems.append("%s: the %s view has no documentation (Shows: …, Uses: …)" % (doc, kind))
            continue
        text = doc.read_text()
        shows, uses = paragraph(text, "Shows", doc), paragraph(text, "Uses", doc)
        used = set(re.findall(r"`([^`]+)`", uses))
        for key in sorted(used - keys):
            problems.append("%s: Uses names `%s`, which is not a spec key" % (doc, key))
        for key in sorted(listing.get(kind, set()) - used):
            problems.append("%s: the schema says the %s view reads `%s`; Uses leaves it out" % (doc, kind, key))
        rows[kind] = "| `%s` | %s | %s |" % (kind, shows, uses)

    table = HEADER + [rows[k] for k in tab_order(descriptors) if k in rows]
    lines = (src.parent / "docs/view-spec.md").read_text().split("\n")
    if HEADER[0] not in lines:
        problems.append("docs/view-spec.md: no table of views (its header '%s')" % HEADER[0])
    else:
        start = lines.index(HEADER[0])
        end = start
        while end < len(lines) and lines[end].startswith("|"):
            end += 1
        if lines[start:end] != table:
            out.write_text("\n".join(table) + "\n")
            problems.append("docs/view-spec.md: the table of views is not the one the folders make: paste %s over it"
                            % out)
    for p in problems:
        print(p)
    if problems:
        sys.exit(1)
    print("check_view_docs: %d views documented, in the order of the tabs" % len(rows))


if __name__ == "__main__":
    main()
