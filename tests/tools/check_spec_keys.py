#!/usr/bin/env python3
"""Each view reads only the view-spec keys its table entry says it reads.

A key of src/core/view/speckeys.cpp that lists `.views` belongs to those view kinds: `lesson check` refuses a step
that sets it for another view, and a lesson step's JSON leaves it out. This check reads the sources and fails when a
file of a view's folder (src/views/NAME/, the tests aside), or a shared request its descriptor names
(`.request = analysis::NAME`, in src/core/view), reads a ViewSpec field whose key does not list that view, or when a
folder reads another view's own key (an OwnKey, views::OTHER::kName) or declares one its descriptor's keys leave out.

Usage: check_spec_keys.py SOURCE_DIR
"""
import pathlib
import re
import sys

from viewfolders import shared_keys, view_folders


def function_body(text, name):
    m = re.search(r"\n[^\n]*\b" + re.escape(name) + r"\(const ViewSpec[^\n]*\n\{", text)
    if not m:
        return ""
    end = text.find("\n}\n", m.end())
    return text[m.end():end]


def main():
    src = pathlib.Path(sys.argv[1])
    keys = {member: (name, views) for name, member, views in shared_keys(src, "check_spec_keys")}
    readers = {}  # view kind -> [(file, text)]
    problems = []
    shared = "".join(p.read_text() for p in (src / "core/view").glob("*.cpp"))
    for view in view_folders(src, "check_spec_keys"):  # a view folder reads for its kind
        readers.setdefault(view.kind, []).extend(view.sources)
        for request in re.findall(r"\.request = analysis::(\w+)", view.code):  # a request two views share
            readers[view.kind].append((request, function_body(shared, request)))
        listed = set(re.findall(r"\.field = (k\w+)", view.code))
        for const in re.findall(r"OwnKey<.*?>\s+(k\w+)\s*\{", view.code):  # each OwnKey is in the descriptor's keys
            if const not in listed:
                problems.append("%s: declares the key %s, which its descriptor's keys do not list" % (view.path, const))
        for path, text in view.sources:  # a view's own keys (OwnKey) are read by its folder alone
            for owner, const in re.findall(r"views::(\w+)::(k[A-Z]\w*)", text):
                if owner != view.path.name:
                    problems.append("%s: reads %s, a key of the %s view's own" % (path, const, owner))
    if len(readers) < 20:
        sys.exit("check_spec_keys: found the readers of only %d view kinds" % len(readers))

    for kind, sources in sorted(readers.items()):
        for where, text in sources:
            for field in sorted(set(re.findall(r"(?:m_spec|spec\(\)|\bspec)\.(\w+)\b", text))):
                if field not in keys:
                    continue
                name, views = keys[field]
                if views is not None and kind not in views:
                    problems.append("%s: the %s view reads '%s' (ViewSpec::%s), which lists only %s"
                                    % (where, kind, name, field, ", ".join(views)))
    for p in problems:
        print(p)
    if problems:
        sys.exit(1)
    print("check_spec_keys: %d view kinds read only their keys" % len(readers))


if __name__ == "__main__":
    main()
