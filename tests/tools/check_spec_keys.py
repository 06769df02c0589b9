#!/usr/bin/env python3
"""Each view reads only the view-spec keys its table entry says it reads.

A key of src/core/view/speckeys.cpp marked `.someViews` belongs to the view kinds whose descriptors name it
(analysisKeys, alsoReads): `lesson check` refuses a step that sets it for another view, and a lesson step's JSON leaves
it out. This check reads the sources and fails when a
file of a view's folder (src/views/NAME/, the tests aside), or a shared request its descriptor names
(`.request = analysis::NAME`, in src/core/view), reads a ViewSpec field whose key does not list that view, or when a
folder reads another view's own key (an OwnKey, views::OTHER::kName) or declares one its descriptor's keys leave out.
A view with an analysis request must list in its descriptor's `analysisKeys` exactly the keys its request code reads
(the folder's files but its widget's), and write none of them into the request's key itself: the key is made from them.

Usage: check_spec_keys.py SOURCE_DIR
"""
import pathlib
import re
import sys

from viewfolders import statements, shared_keys, view_folders


def function_body(text, name):
    m = re.search(r"\n[^\n]*\b" + re.escape(name) + r"\(\s*const ViewSpec[^{;]*\n\{", text)
    if not m:
        return ""
    end = text.find("\n}\n", m.end())
    return text[m.end():end]


def keys_read(text, keys, own_names):
    """The names of the spec keys `text` reads: ViewSpec fields (spec.layer) and own keys (spec.get(kBlockSize))."""
    read = {keys[f][0] for f in re.findall(r"(?:m_spec|spec\(\)|\bspec)\.(\w+)\b", text) if f in keys}
    read |= {own_names.get(k, k) for k in re.findall(r"\bspec\.get\((?:\w+::)*(k\w+)\)", text)}
    return read


def first_argument(call):
    """The first argument of the call `call` opens with."""
    depth, start = 0, call.index("(") + 1
    for i in range(start, len(call)):
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(call[i], 0)
        if depth < 0 or (depth == 0 and call[i] == ","):
            return call[start:i]
    return call[start:]


# The OwnKeys several views share (src/core/view/*.h: the corrupted run's of Patching and Circuit), set by main().
shared_own_keys = ""


def check_analysis_keys(view, request_code, keys, problems):
    """A view's request reads exactly the keys its descriptor's analysisKeys lists, and writes none into its key."""
    own_names = dict(re.findall(r'OwnKey<.*?>\s+(k\w+)\s*\{"([^"]+)"', view.code + shared_own_keys))
    listing = re.search(r"\.analysisKeys\s*=\s*\{([^}]*)\}", view.code)
    listed = set()
    if listing:
        listed = set(re.findall(r'"([^"]+)"', listing.group(1)))
        listed |= {own_names.get(k, k) for k in re.findall(r"\b(?:\w+::)*(k\w+)\.name\b", listing.group(1))}
    read = keys_read(request_code, keys, own_names)
    for name in sorted(read - listed):
        problems.append("%s: the %s view's request reads '%s', which its descriptor's analysisKeys leave out (the "
                        "result would be reused when it changes)" % (view.path, view.kind, name))
    for name in sorted(listed - read):
        problems.append("%s: the %s view's analysisKeys list '%s', which its request does not read"
                        % (view.path, view.kind, name))
    keyed = list(statements(request_code, r"\br\.key\b"))
    keyed += [first_argument(s) for s in statements(request_code, r"\w+Request\s*(?:<[^>]*>)?\s*\(\s*\"")]
    for statement in keyed:
        if keys_read(statement, keys, own_names):
            problems.append("%s: the %s view writes a spec key into its request's key (analysisKeys add them): %s"
                            % (view.path, view.kind, " ".join(statement.split())))


def main():
    src = pathlib.Path(sys.argv[1])
    keys = {member: (name, views) for name, member, views in shared_keys(src, "check_spec_keys")}
    readers = {}  # view kind -> [(file, text)]
    problems = []
    shared = "".join(p.read_text() for p in (src / "core/view").glob("*.cpp"))
    global shared_own_keys
    shared_own_keys = "".join(p.read_text() for p in (src / "core/view").glob("*.h"))
    for view in view_folders(src, "check_spec_keys"):  # a view folder reads for its kind
        readers.setdefault(view.kind, []).extend(view.sources)
        for request in re.findall(r"\.request = analysis::(\w+)", view.code):  # a request two views share
            readers[view.kind].append((request, function_body(shared, request)))
        if ".request = " in view.code:  # the folder's own code but its widget's, the shared request it names, and
            # the shared helpers they hand the spec to (sweepSettings(spec, …))
            code = "".join(text for where, text in readers[view.kind] if where not in view.widgets | view.cli)
            for helper in sorted(set(re.findall(r"\b(\w+)\((?:[^();]*,\s*)?spec\b", code))):
                code += function_body(shared, helper)
            check_analysis_keys(view, code, keys, problems)
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
                    problems.append("%s: the %s view reads '%s' (ViewSpec::%s), which its descriptor does not name "
                                    "(read by %s)"
                                    % (where, kind, name, field, ", ".join(views)))
    for p in problems:
        print(p)
    if problems:
        sys.exit(1)
    print("check_spec_keys: %d view kinds read only their keys" % len(readers))


if __name__ == "__main__":
    main()
