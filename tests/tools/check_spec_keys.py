#!/usr/bin/env python3
"""Each view reads only the view-spec keys its table entry says it reads.

A key of src/core/view/speckeys.cpp that lists `.views` belongs to those view kinds: `lesson check` refuses a step
that sets it for another view, and a lesson step's JSON leaves it out. This check reads the sources and fails when a
file of a view's folder (src/views/NAME/, the tests aside), or a shared request its descriptor names
(`.request = analysis::NAME`, in src/core/view), reads a ViewSpec field whose key does not list that view, or when a
folder reads another view's own key (an OwnKey, views::OTHER::kName).

Usage: check_spec_keys.py SOURCE_DIR
"""
import pathlib
import re
import sys


def entries(text, start_pattern):
    """The brace-balanced entries of a table whose items open with `start_pattern`."""
    for m in re.finditer(start_pattern, text):
        depth, i = 0, m.start()
        while True:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
            if depth == 0:
                break
        yield text[m.start():i]


def function_body(text, name):
    m = re.search(r"\n[^\n]*\b" + re.escape(name) + r"\(const ViewSpec[^\n]*\n\{", text)
    if not m:
        return ""
    end = text.find("\n}\n", m.end())
    return text[m.end():end]


def main():
    src = pathlib.Path(sys.argv[1])
    keys = {}  # ViewSpec field -> (key name, views or None)
    for entry in entries((src / "core/view/speckeys.cpp").read_text(), r"\{\.name = \""):
        name = re.search(r'\.name = "([^"]+)"', entry).group(1)
        field = re.search(r"&ViewSpec::(\w+)", entry).group(1)
        views = re.search(r"\.views = \{([^}]*)\}", entry)
        keys[field] = (name, re.findall(r'"([^"]+)"', views.group(1)) if views else None)
    if len(keys) < 20:
        sys.exit("check_spec_keys: found only %d keys in speckeys.cpp: the table's shape changed" % len(keys))

    readers = {}  # view kind -> [(file, text)]
    shared = "".join(p.read_text() for p in (src / "core/view").glob("*.cpp"))
    for folder in sorted(p for p in (src / "views").iterdir() if p.is_dir()):  # a view folder reads for its kind
        texts = [(path, path.read_text()) for path in sorted(folder.iterdir())
                 if path.suffix in (".cpp", ".h") and not path.name.startswith("tst_")]
        joined = "".join(text for _, text in texts)
        kind = re.search(r'\.kind = "([^"]+)"', joined)
        if not kind:
            sys.exit("check_spec_keys: %s describes no view kind (.kind = \"…\")" % folder)
        readers.setdefault(kind.group(1), []).extend(texts)
        for request in re.findall(r"\.request = analysis::(\w+)", joined):  # a request two views share
            readers[kind.group(1)].append((request, function_body(shared, request)))
    if len(readers) < 20:
        sys.exit("check_spec_keys: found the readers of only %d view kinds" % len(readers))

    problems = []
    # A view's own keys (OwnKey, declared in its folder) are read by that folder alone.
    for folder in sorted(p for p in (src / "views").iterdir() if p.is_dir()):
        for path in sorted(folder.iterdir()):
            if path.suffix in (".cpp", ".h") and not path.name.startswith("tst_"):
                for owner, const in re.findall(r"views::(\w+)::(k[A-Z]\w*)", path.read_text()):
                    if owner != folder.name:
                        problems.append("%s: reads %s, a key of the %s view's own" % (path, const, owner))
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
